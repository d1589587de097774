"""The shared Left/Right rule and game runner."""

import numpy as np
import pytest
import torch

from course_utils.colour.game import ColourGame
from course_utils.game import check_side
from course_utils.harlow.game import HarlowGame


@pytest.mark.parametrize("action, expected", [(0, 0), (1, 1), (np.int64(1), 1), (torch.tensor([0]), 0), (np.array(1), 1)])
def test_check_side_accepts_zero_and_one(action, expected):
    assert check_side(action) == expected


@pytest.mark.parametrize("action", [2, -1, True, 0.0, "left", None, np.array([0, 1]), torch.tensor([1, 0])])
def test_check_side_says_what_is_allowed(action):
    with pytest.raises(ValueError, match=r"0 \(left\) or 1 \(right\)|a single 0 or 1"):
        check_side(action)


@pytest.mark.parametrize("game, prefix", [(ColourGame(seed=0), "colour-game"), (HarlowGame(seed=0), "harlow-game")])
def test_each_game_part_has_the_css_class_the_browser_tests_use(game, prefix):
    for part in ("left", "right", "status", "message"):
        assert f"{prefix}-{part}" in getattr(game, part)._dom_classes
    assert game.widget.children[0] is game.status and game.widget.children[-1] is game.message


@pytest.mark.parametrize(
    "make, recorded",
    [(lambda: ColourGame(seed=2), lambda r: len(r.inputs)), (lambda: HarlowGame(seed=2), lambda r: len(r.correct))],
    ids=["colour", "harlow"],
)
def test_headless_play_returns_at_once_through_the_buttons(monkeypatch, make, recorded):
    monkeypatch.setenv("COURSE_HEADLESS", "1")
    game = make()
    clicks = []
    game.left.on_click(lambda b: clicks.append("L"))
    game.right.on_click(lambda b: clicks.append("R"))
    game.play(block=True)
    assert game.done and len(clicks) == 30
    assert "played itself" in game.message.value
    assert recorded(game.results()) == 30
