"""Tutorial 2's concept checks and Think! question, and the notebook places that show them."""

import json
import re

import pytest

from course_utils import colour
from course_utils.colour import questions
from course_utils.paths import SOLUTIONS
from course_utils.questions import MIN_WORDS

NOTEBOOK = SOLUTIONS / "02_colour_replay.ipynb"


def _cells():
    return ["".join(cell["source"]) for cell in json.loads(NOTEBOOK.read_text())["cells"]]


@pytest.mark.parametrize("check", questions.CHECKS, ids=lambda check: check.question[:30])
def test_each_check_has_one_right_option_and_feedback_for_every_option(check):
    assert sum(option.correct for option in check.options) == 1
    feedback = [check.feedback(i) for i in range(len(check.options))]
    assert [text.startswith("Right") for text in feedback] == [option.correct for option in check.options]
    assert len(set(feedback)) == len(feedback)  # each wrong option names its own misconception
    assert all(len(option.why.split()) >= 8 for option in check.options)


def test_fresh_ratio_check_agrees_with_the_loss():
    """The right answer to "what is the ratio on fresh data?" is what the code computes."""
    import numpy as np

    from course_utils.colour.training import run_trials

    right = next(option for option in questions.FRESH_RATIO.options if option.correct)
    assert right.text == "Exactly 1"
    agent, env = colour.ActorCritic(), colour.ColourEnv()
    env.reset(seed=3)
    ratios = colour.importance_ratios(agent, run_trials(env, agent, 50, np.random.default_rng(3)).experience())
    assert np.allclose(ratios.numpy(), 1.0, atol=1e-5)
    assert f"{colour.RHO_MAX:.0f}" in questions.RATIO_CAP.question


def test_memory_check_is_asked_before_the_text_answers_it():
    cells = _cells()
    asked = cells.index("colour.questions.MEMORY_CONTENTS.show()")
    answered = next(i for i, text in enumerate(cells) if "keeps the **experience itself**" in text)
    assert asked < answered
    assert "what should the memory keep?" in cells[asked - 1]


def test_every_question_is_shown_in_the_notebook_and_the_think_has_an_answer_cell():
    cells = _cells()
    for name in ("MEMORY_CONTENTS", "FRESH_RATIO", "RATIO_CAP"):
        assert f"colour.questions.{name}.show()" in cells
    think = next(i for i, text in enumerate(cells) if text.startswith("**Think!**"))
    assert re.match(r'my_answer = """\s*"""\ncolour\.questions\.REPLAY_COST\.reveal\(my_answer\)$', cells[think + 1])


def test_think_reveals_its_model_answer_only_after_an_answer(capsys):
    assert questions.REPLAY_COST.reveal("") is False
    assert questions.REPLAY_COST.model_answer not in capsys.readouterr().out
    assert questions.REPLAY_COST.reveal(" ".join(["word"] * MIN_WORDS)) is True
    assert questions.REPLAY_COST.model_answer in capsys.readouterr().out


def test_settings_cell_states_the_full_sizes():
    """The settings cell's comments give the full sizes: they must agree with SIZES."""
    cell = next(text for text in _cells() if text.startswith("# Settings"))
    for name, full in re.findall(r"= colour\.SIZES\.(\w+)\s+# (\d+)", cell):
        assert int(full) == colour.SIZES.full(name), name
    assert len(re.findall(r"colour\.SIZES\.", cell)) == 4


def test_replayed_ratio_question_is_the_capped_ratio_of_its_numbers():
    question = questions.REPLAYED_RATIO
    assert "mu(a) = 0.2" in question.question and "pi(a) = 0.6" in question.question
    assert f"cap of {colour.RHO_MAX:.0f}" in question.question
    assert question.is_right(min(0.6 / 0.2, colour.RHO_MAX))
    assert "upside down" in question.feedback(min(0.2 / 0.6, colour.RHO_MAX))  # the ratio inverted
    assert question.feedback("1").startswith("Not quite: a ratio of 1 is for fresh trials")
