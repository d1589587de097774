"""The Harlow game: clicks drive it, one symbol of each problem always pays whichever side it
is on, every problem brings new symbols, it records per-trial correctness, and it never
blocks headless."""

import re

import numpy as np
import pytest

from course_utils import harlow
from course_utils.harlow.game import COLOURS, SHAPES, HarlowGame, symbols_svg


def _rewarded_side(game):
    rewarded = game.pairs[game.attempt // game.attempts_per_problem][0]
    return game.shown(game.attempt).index(rewarded)


def test_buttons_and_widgets_follow_the_game_contract():
    game = HarlowGame(seed=0)
    assert (game.left.description, game.right.description) == ("Left", "Right")
    assert "harlow-game-left" in game.left._dom_classes and "harlow-game-right" in game.right._dom_classes
    assert "harlow-game-status" in game.status._dom_classes and "harlow-game-message" in game.message._dom_classes
    assert "Attempt 1 of 30" in game.status.value and "total reward: <b>0</b>" in game.status.value
    assert "<svg" in game.stage.value


def test_clicks_update_attempt_counter_score_and_record():
    game = HarlowGame(problems=2, attempts_per_problem=3, seed=1)
    expected, correct = 0, []
    for i in range(6):
        right_side = _rewarded_side(game)
        action = right_side if i % 3 else 1 - right_side  # wrong on each problem's first attempt
        (game.left if action == 0 else game.right).click()
        expected += 1 if action == right_side else -1
        correct.append(action == right_side)
        assert game.attempt == i + 1 and game.score == expected
        assert ("+1" if action == right_side else "-1") in game.message.value
        if i < 5:
            assert f"Attempt {i + 2} of 6" in game.status.value and f"total reward: <b>{expected}</b>" in game.status.value
    assert game.done and game.left.disabled and game.right.disabled
    assert re.sub("<[^>]+>", "", game.status.value).startswith("Game over")
    assert f"total reward: <b>{expected}</b>" in game.status.value
    game.left.click()  # ignored once over
    assert game.attempt == 6
    results = game.results()
    assert results.correct.tolist() == correct and results.trial.tolist() == [1, 2, 3, 1, 2, 3]
    assert results.problem.tolist() == [0, 0, 0, 1, 1, 1] and results.rewards.sum() == expected
    curve = harlow.accuracy_by_trial(results.trial, results.correct)
    assert curve.accuracy.tolist() == [0.0, 1.0, 1.0]


def test_one_symbol_pays_whichever_side_it_is_on():
    game = HarlowGame(problems=5, attempts_per_problem=6, seed=2)
    sides = []
    while not game.done:
        rewarded = game.pairs[game.attempt // 6][0]
        side = game.shown(game.attempt).index(rewarded)
        sides.append(side)
        assert game.choose(side) == 1
    assert game.score == 30 and 0 < np.mean(sides) < 1


def test_every_problem_shows_two_new_symbols():
    game = HarlowGame(problems=5, seed=3)
    symbols = [s for pair in game.pairs for s in pair]
    assert len({shape for shape, _ in symbols}) == 10  # ten different shapes in five problems
    assert all(shape in SHAPES and colour in COLOURS for shape, colour in symbols)
    assert HarlowGame(problems=5, seed=4).pairs != game.pairs  # random shapes and colours
    many = HarlowGame(problems=8, seed=5)
    assert len(set(s for pair in many.pairs for s in pair)) == 16


@pytest.mark.parametrize("shape", SHAPES)
def test_every_shape_draws_as_svg(shape):
    svg = symbols_svg((shape, "red"), ("circle", "blue"))
    assert svg.startswith("<svg") and f"red {shape}" in svg and COLOURS["red"] in svg
    assert f'aria-label="a red {shape} on the left, a blue circle on the right"' in svg
    assert "an orange star on the left" in symbols_svg(("star", "orange"), ("circle", "blue"))
    assert re.search(rf">red {shape}</text>.*>blue circle</text>", svg), "each symbol is named in text under it"


def test_choose_validates_and_refuses_after_the_end():
    game = HarlowGame(problems=1, attempts_per_problem=1, seed=0)
    with pytest.raises(ValueError, match="0 \\(left\\) or 1 \\(right\\)"):
        game.choose(2)
    with pytest.raises(ValueError):
        game.choose(True)
    game.choose(0)
    with pytest.raises(RuntimeError, match="game is over"):
        game.choose(0)
    with pytest.raises(ValueError, match="at least 1"):
        HarlowGame(problems=0)
