"""Concept checks, numeric questions and Think! questions: feedback per option or per number, model
answers only after an answer, and the rules every concept check of the course keeps."""

import importlib
import json

import pytest

from course_admin.exercises import TUTORIALS as NOTEBOOK_NAMES
from course_utils.paths import NOTEBOOKS, SOLUTIONS
from course_utils.questions import (
    MIN_WORDS,
    ConceptCheck,
    Mistake,
    NumericQuestion,
    Option,
    ThinkQuestion,
    parse_number,
)

CHECK = ConceptCheck("Which beta removes the bias?", (
    Option("0", False, "beta = 0 applies no correction."),
    Option("1", True, "beta = 1 multiplies by the full inverse probability."),
))


def test_concept_check_feedback_names_right_and_wrong():
    assert CHECK.feedback(1).startswith("Right: beta = 1")
    assert CHECK.feedback(0).startswith("Not quite: beta = 0")
    with pytest.raises(ValueError, match="from 0 to 1"):
        CHECK.feedback(2)
    assert "(a) 0" in CHECK.text() and "(b) 1" in CHECK.text()


def test_concept_check_needs_exactly_one_right_option():
    with pytest.raises(ValueError, match="exactly one right"):
        ConceptCheck("?", (Option("a", True, ""), Option("b", True, "")))


def test_concept_check_headless_prints_the_question(capsys, monkeypatch):
    monkeypatch.setenv("COURSE_HEADLESS", "1")
    assert CHECK.show() is None
    assert "Which beta" in capsys.readouterr().out


def test_concept_check_widget_gives_feedback_on_click(monkeypatch):
    monkeypatch.setenv("COURSE_HEADLESS", "0")
    box = CHECK.show()
    buttons = [row.children[0] for row in box.children[1:-1]]
    buttons[0].click()
    assert "Not quite" in box.children[-1].value and buttons[0].button_style == "danger"
    buttons[1].click()
    assert "Right" in box.children[-1].value and buttons[1].button_style == "success"


def test_think_reveals_the_model_answer_only_after_an_answer(capsys):
    q = ThinkQuestion("Why?", "Because the model says so.")
    assert q.reveal("") is False
    assert "model answer" in capsys.readouterr().out
    assert q.reveal(" ".join(["word"] * (MIN_WORDS - 1))) is False
    assert "Because the model" not in capsys.readouterr().out
    assert q.reveal(" ".join(["word"] * MIN_WORDS)) is True
    assert "Because the model says so." in capsys.readouterr().out
    with pytest.raises(TypeError, match="string"):
        q.reveal(None)


# --- numeric questions -------------------------------------------------------------------------

RHO = NumericQuestion(
    "pi(a) = 0.6 and mu(a) = 0.2: what is rho?", answer=3.0, tolerance=0.01,
    why="0.6 / 0.2 = 3.", hint="one probability over the other.",
    mistakes=(Mistake(1 / 3, "that is mu / pi, upside down."),),
)


@pytest.mark.parametrize("typed", [3, 3.0, "3", " 3.00 ", "3.009", "2.991", "6/2", "9 / 3", "3e0"])
def test_numeric_question_accepts_the_right_number_within_the_tolerance(typed):
    assert RHO.is_right(typed)
    assert RHO.feedback(typed) == "Right: 0.6 / 0.2 = 3."


@pytest.mark.parametrize("typed", ["3.02", 2.98, "-3", "\u22123", "30"])
def test_numeric_question_rejects_a_wrong_number_with_the_hint(typed):
    assert not RHO.is_right(typed)
    assert RHO.feedback(typed) == "Not quite: one probability over the other."


@pytest.mark.parametrize("typed", ["0.333", "1/3", 0.335, "0.3333"])
def test_numeric_question_names_the_misconception_behind_a_known_wrong_number(typed):
    assert not RHO.is_right(typed)
    assert RHO.feedback(typed) == "Not quite: that is mu / pi, upside down."


@pytest.mark.parametrize(("typed", "says"), [
    ("three", "'three' is not a number"), ("", "nothing typed yet"), ("   ", "nothing typed yet"),
    ("3,0", "write decimals with a point, 3.0"), ("nan", "'nan' is not a number"), ("inf", "'inf' is not a number"),
    (float("nan"), "not a finite number"), ("1/0", "'1/0' is not a number"), (None, "not a NoneType"),
    (True, "not a bool"), ([3], "not a list"),
])
def test_numeric_question_says_when_the_answer_is_not_a_number(typed, says):
    assert not RHO.is_right(typed)
    feedback = RHO.feedback(typed)
    assert feedback.startswith("Try again: ") and says in feedback, feedback
    with pytest.raises(ValueError, match="number"):
        parse_number(typed)


def test_numeric_question_refuses_a_mistake_that_would_count_as_right():
    with pytest.raises(ValueError, match="twice the tolerance"):
        NumericQuestion("?", answer=1.0, tolerance=0.1, why="", hint="", mistakes=(Mistake(1.15, "close"),))
    with pytest.raises(ValueError, match="positive tolerance"):
        NumericQuestion("?", answer=1.0, tolerance=0.0, why="", hint="")
    with pytest.raises(ValueError, match="finite answer"):
        NumericQuestion("?", answer=float("inf"), tolerance=0.1, why="", hint="")


def test_numeric_question_headless_prints_the_question(capsys, monkeypatch):
    monkeypatch.setenv("COURSE_HEADLESS", "1")
    assert RHO.show() is None
    out = capsys.readouterr().out
    assert "what is rho?" in out and "within 0.01" in out and "JupyterLab" in out


def test_numeric_question_widget_checks_the_typed_text(monkeypatch):
    monkeypatch.setenv("COURSE_HEADLESS", "0")
    box = RHO.show()
    entry, button = box.children[1].children
    feedback = box.children[-1]
    button.click()  # nothing typed yet
    assert "nothing typed yet" in feedback.value and button.button_style == "danger"
    entry.value = "1/3"  # pressing Enter sets the value: that checks too
    assert "upside down" in feedback.value and button.button_style == "danger"
    entry.value = "3"
    assert feedback.value.startswith("Right") and button.button_style == "success"
    entry.value = "<b>3</b>"
    assert "&lt;b&gt;" in feedback.value  # what the student typed is shown escaped, never as HTML


# --- every question of the course --------------------------------------------------------------

TUTORIALS = tuple(NOTEBOOK_NAMES)


def _questions(tutorial, kind):
    """Every ``kind`` object in a tutorial's questions module, whatever tuples it is listed in."""
    module = importlib.import_module(f"course_utils.{tutorial}.questions")
    found = {}
    for name, value in vars(module).items():
        if isinstance(value, kind):
            found.setdefault(id(value), (name, value))
    return list(found.values())


def _right(check):
    return next(i for i, option in enumerate(check.options) if option.correct)


def _right_is_longest(check):
    """Whether the right option is at least as long (in characters) as every wrong one: a test-wise
    student who picks the longest option would then be right."""
    lengths = [len(option.text) for option in check.options]
    return lengths[_right(check)] == max(lengths)


def test_every_tutorial_has_concept_checks_and_one_numeric_question():
    for tutorial in TUTORIALS:
        assert len(_questions(tutorial, ConceptCheck)) >= 3, tutorial
        assert len(_questions(tutorial, NumericQuestion)) == 1, tutorial


@pytest.mark.parametrize("tutorial", TUTORIALS)
def test_the_right_option_is_not_always_at_the_same_letter(tutorial):
    positions = {name: "abcd"[_right(check)] for name, check in _questions(tutorial, ConceptCheck)}
    assert len(set(positions.values())) > 1, f"every concept check of {tutorial} has its right option at " \
                                             f"the same letter: {positions}"


def test_the_right_options_spread_over_every_letter_and_are_rarely_the_longest():
    checks = [(f"{t}.{name}", check) for t in TUTORIALS for name, check in _questions(t, ConceptCheck)]
    assert len(checks) >= 12
    letters = {"abcd"[_right(check)] for _, check in checks}
    assert letters == set("abcd"[:max(len(check.options) for _, check in checks)]), letters
    longest = [name for name, check in checks if _right_is_longest(check)]
    assert 3 * len(longest) <= len(checks), f"the right option is the longest in {len(longest)} of {len(checks)} " \
                                            f"concept checks (at most a third may be): {longest}"


@pytest.mark.parametrize("tutorial", TUTORIALS)
def test_each_numeric_question_explains_its_answer_and_its_mistakes(tutorial):
    [(name, question)] = _questions(tutorial, NumericQuestion)
    assert question.feedback(question.answer).startswith("Right: ")
    assert question.feedback(f"{question.answer:.4g}").startswith("Right: ")  # typed as a student would
    for mistake in question.mistakes:
        assert question.feedback(mistake.value) == f"Not quite: {mistake.why}"
        assert len(mistake.why.split()) >= 8  # says why, not just wrong
    assert len(question.mistakes) >= 2
    assert question.hint not in question.why and f"{question.answer:g}" not in question.hint  # gives nothing away


@pytest.mark.parametrize("folder", [SOLUTIONS, NOTEBOOKS], ids=["solutions", "notebooks"])
@pytest.mark.parametrize("tutorial", TUTORIALS)
def test_each_numeric_question_is_shown_once_in_its_notebook(tutorial, folder):
    [(name, _)] = _questions(tutorial, NumericQuestion)
    notebook = folder / f"{NOTEBOOK_NAMES[tutorial]}.ipynb"
    cells = json.loads(notebook.read_text())["cells"]
    shown = [c for c in cells if c["cell_type"] == "code" and "".join(c["source"]).endswith(f"questions.{name}.show()")]
    assert len(shown) == 1, (notebook.name, name)
    assert "nbgrader" not in shown[0]["metadata"]  # not graded, like the concept checks
