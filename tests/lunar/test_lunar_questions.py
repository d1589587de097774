"""Tutorial 3's concept checks and Think! question (``lunar.questions``): one right option each,
feedback that names the misconception, facts that agree with the computation, and the notebook
shows each of them once, in order, and keeps its hand-graded questions as markdown answer cells."""

import json

import pytest

from course_utils.lunar import questions
from course_utils.paths import NOTEBOOKS, SOLUTIONS
from course_utils.questions import ConceptCheck

MISCONCEPTIONS = {
    "BASELINE": ("size has nothing to do with it", "optimiser", "does not cancel in a single batch"),
    "TRUNCATION": ("future counts as 0, not as more of the same", "would still count"),
    "DETACH": ("wrong, not slower", "does not change the value of the advantage"),
}


@pytest.mark.parametrize("name", MISCONCEPTIONS)
def test_each_check_has_one_right_option_and_names_each_misconception(name):
    check = getattr(questions, name)
    assert isinstance(check, ConceptCheck) and sum(o.correct for o in check.options) == 1
    wrong = [i for i, o in enumerate(check.options) if not o.correct]
    feedback = [check.feedback(i) for i in wrong]
    assert all(f.startswith("Not quite: ") for f in feedback)
    for phrase, text in zip(MISCONCEPTIONS[name], feedback, strict=True):
        assert phrase in text, (name, phrase, text)
    right = next(i for i, o in enumerate(check.options) if o.correct)
    assert check.feedback(right).startswith("Right: ")


def test_the_truncation_checks_number_is_computed():
    negligible = next(o for o in questions.TRUNCATION.options if o.text.startswith("Nothing"))
    assert "weighs a reward 100 steps ahead by 0.37" in negligible.why and "gamma = 0.99" in negligible.text
    assert round(0.99**100, 2) == 0.37


def _cells(folder):
    return json.loads((folder / "03_policy_gradients.ipynb").read_text())["cells"]


@pytest.mark.parametrize("folder", [SOLUTIONS, NOTEBOOKS], ids=["solutions", "notebooks"])
def test_the_notebook_shows_every_question_once_in_order(folder):
    sources = ["".join(c["source"]) for c in _cells(folder) if c["cell_type"] == "code"]
    shown = [name for s in sources for name in ("BASELINE", "TRUNCATION", "DETACH") if f"lunar.questions.{name}.show()" in s]
    assert shown == ["TRUNCATION", "BASELINE", "DETACH"]
    assert [c for c in questions.CONCEPT_CHECKS] == [questions.BASELINE, questions.TRUNCATION, questions.DETACH]
    reveal = [s for s in sources if "lunar.questions.VARIANCE.reveal(my_answer)" in s]
    assert len(reveal) == 1 and reveal[0].startswith('my_answer = """')


def test_the_hand_graded_questions_stay_markdown_answer_cells():
    graded = [c for c in _cells(SOLUTIONS) if (c["metadata"].get("nbgrader") or {}).get("grade_id", "").startswith("q")]
    assert [c["metadata"]["nbgrader"]["grade_id"] for c in graded] == ["q1_baseline", "q2_value_targets", "q3_plots"]
    for cell in graded:
        meta = cell["metadata"]["nbgrader"]
        assert cell["cell_type"] == "markdown" and meta["solution"] and meta["grade"] and meta["points"] == 2
    assert "measurement of Section 4" in "".join(graded[0]["source"])


def test_the_reward_to_go_question_agrees_with_the_course_returns():
    """Its answer, and two of its mistakes, are the reference calc_qvals of its rewards."""
    from course_admin.lunar.solutions import Episode
    from course_utils.lunar.harness import Experience

    def qvals(gamma):
        rewards = [-1.0, -1.0, 100.0]
        return Episode(sum(rewards), [Experience(None, None, r, t == 2) for t, r in enumerate(rewards)]).calc_qvals(gamma)

    question = questions.REWARD_TO_GO
    assert "-1, -1 and +100" in question.question and "gamma = 0.9" in question.question
    returns = qvals(0.9)
    assert question.is_right(returns[0])
    assert "the middle step" in question.feedback(returns[1])
    assert "without the discount" in question.feedback(qvals(1.0)[0])
