"""Concept checks and Think! questions: feedback per option, model answers only after an answer."""

import pytest

from course_utils.questions import MIN_WORDS, ConceptCheck, Option, ThinkQuestion

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
