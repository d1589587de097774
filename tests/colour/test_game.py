"""The colour game: clicks drive it, it records choices, and it never blocks headless."""

import re

import pytest

from course_utils.colour import COLOUR_REWARDS, MODE_COLOURS
from course_utils.colour.game import ColourGame


def test_clicks_update_attempt_counter_score_and_record():
    game = ColourGame(attempts_per_mode=3, seed=0)
    assert "Attempt 1 of 6" in game.status.value
    expected_score = 0
    for i in range(6):
        pair = game.schedule[i]
        button = game.left if i % 2 == 0 else game.right
        button.click()
        expected_score += COLOUR_REWARDS[pair[i % 2]]
        assert game.attempt == i + 1
        assert game.score == expected_score
        assert f"+{COLOUR_REWARDS[pair[i % 2]]}" in game.message.value
    assert game.done and game.left.disabled and game.right.disabled
    assert "Game over" in game.status.value and f"total reward: <b>{expected_score}</b>" in game.status.value
    game.left.click()  # ignored once over
    assert game.attempt == 6
    results = game.results()
    assert list(results.actions) == [0, 1, 0, 1, 0, 1]
    assert results.shown == game.schedule


def test_modes_switch_halfway():
    game = ColourGame(attempts_per_mode=15, seed=1)
    assert all(set(pair) <= set(MODE_COLOURS[1]) for pair in game.schedule[:15])
    assert all(set(pair) <= set(MODE_COLOURS[2]) for pair in game.schedule[15:])


def test_choose_validates_and_refuses_after_the_end():
    game = ColourGame(attempts_per_mode=1, seed=0)
    with pytest.raises(ValueError, match="0 \\(left\\) or 1 \\(right\\)"):
        game.choose(2)
    game.choose(0)
    game.choose(1)
    with pytest.raises(RuntimeError, match="game is over"):
        game.choose(0)


def test_each_colour_is_named_as_well_as_shown():
    """About one man in twelve cannot tell red from green: each swatch carries its name in text."""
    game = ColourGame(attempts_per_mode=2, seed=0)
    while not game.done:
        left, right = game.schedule[game.attempt]
        svg = game.stage.value
        assert re.search(rf">{left}</text>.*>{right}</text>", svg), svg
        assert f'aria-label="{left} on the left, {right} on the right"' in svg
        game.left.click()
        assert f"you chose the left colour, <b>{left}</b>" in game.message.value
