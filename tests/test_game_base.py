"""The shared Left/Right rule and game runner."""

import contextlib
import os
import re
import time

import numpy as np
import pytest
import torch

from course_utils.colour.game import ColourGame
from course_utils.game import KEYS_BACK, NO_CLICKS_WHILE_RUNNING, GameNotFinished, check_side
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
    assert game.widget.children[0] is game.status and game.message in game.widget.children
    assert prefix in game.widget._dom_classes and game.keys.source is game.widget


# -- keys: ipyevents' messages, as the front-end sends them, take the click's path --------------
def _key(game, key, **extra):
    """Deliver a key press as ipyevents' front-end does: a custom comm message to the Event widget."""
    event = {"event": "keydown", "type": "keydown", "key": key, "repeat": False, "ctrlKey": False, "altKey": False,
             "metaKey": False, "shiftKey": False, "target": {"tagName": "DIV", "id": "", "className": ""}}
    event.update(extra)
    game.keys._handle_msg({"content": {"data": {"method": "custom", "content": event}}, "buffers": []})


@pytest.mark.parametrize("make", [lambda: ColourGame(seed=3), lambda: HarlowGame(seed=3)], ids=["colour", "harlow"])
def test_arrow_and_letter_keys_press_the_buttons(make):
    game = make()
    pressed = []
    game.left.on_click(lambda b: pressed.append("L"))
    game.right.on_click(lambda b: pressed.append("R"))
    for key in ("ArrowLeft", "ArrowRight", "l", "R", "L", "r"):
        _key(game, key)
    assert pressed == ["L", "R", "L", "R", "L", "R"] and game.actions == [0, 1, 0, 1, 0, 1]
    assert game.attempt == 6 and f"Attempt 7 of {game.attempts}" in game.status.value
    assert f"total reward: <b>{game.score}</b>" in game.status.value


@pytest.mark.parametrize(
    "key, extra",
    [("ArrowUp", {}), ("x", {}), ("Tab", {}), ("l", {"repeat": True}), ("ArrowLeft", {"ctrlKey": True}),
     ("r", {"metaKey": True}), ("ArrowRight", {"altKey": True}), ("l", {"event": "keyup", "type": "keyup"})],
)
def test_other_keys_held_keys_and_shortcuts_do_nothing(key, extra):
    game = ColourGame(seed=0)
    _key(game, key, **extra)
    assert game.attempt == 0 and "Attempt 1 of 30" in game.status.value


@pytest.mark.parametrize("side, key", [(0, "Enter"), (1, " ")])
def test_enter_and_space_press_the_button_they_were_meant_for(side, key):
    game = ColourGame(seed=0)
    button = (game.left, game.right)[side]
    _key(game, key, target={"tagName": "BUTTON", "id": "", "className": " ".join(["jupyter-button", *button._dom_classes])})
    _key(game, "Enter")  # on the game itself rather than a button: nothing to press
    assert game.actions == [side]


def test_keys_after_the_end_change_nothing():
    game = ColourGame(attempts_per_mode=1, seed=0)
    assert game.keys.watched_events == ["keydown"]
    _key(game, "ArrowLeft")
    _key(game, "ArrowRight")
    assert game.done
    status, message = game.status.value, game.message.value
    _key(game, "ArrowLeft")
    assert game.attempt == 2 and (game.status.value, game.message.value) == (status, message)
    assert game.keys.watched_events == ["keydown"], "ipyevents would leave its page-wide key listener behind"
    assert KEYS_BACK in game.message.value


def test_keys_reach_a_blocked_play(monkeypatch):
    """While ``play(block=True)`` polls, key messages finish the game just as clicks do."""
    game = ColourGame(attempts_per_mode=2, seed=1)
    game.probe_timeout = 0.3
    _front_end(monkeypatch, lambda n: _key(game, "ArrowRight" if n % 2 else "l"))
    game.play(block=True)
    assert game.done and not game.waiting and game.actions == [1, 0, 1, 0]
    assert game.results().actions.tolist() == [1, 0, 1, 0]


@pytest.mark.parametrize("game", [ColourGame(seed=0), HarlowGame(seed=0)], ids=["colour", "harlow"])
def test_the_game_says_how_to_play_by_keys_and_the_buttons_say_what_they_do(game):
    help_text = game.keys_help.value
    assert all(word in help_text for word in ("←", "→", " L ", " R ", "Tab", "Enter", "Space"))
    assert "left" in game.left.tooltip and "←" in game.left.tooltip and "right" in game.right.tooltip
    game.autoplay(seed=0)
    assert game.keys_help.value == ""  # nothing left to press


@pytest.mark.parametrize(
    "make, item", [(lambda: ColourGame(seed=4), "colour"), (lambda: HarlowGame(seed=4), "symbol")], ids=["colour", "harlow"]
)
def test_each_result_is_announced_as_a_sentence(make, item):
    game = make()
    game.right.click()
    game.left.click()
    text = re.sub("<[^>]+>", "", game.message.value)
    reward = game.rewards[1]
    assert text.startswith(f"Attempt 2 of {game.attempts}: you chose the left {item}, ")
    assert text.split(":")[-1].strip().rstrip(".").startswith(f"{reward:+d}")
    assert 'role="alert"' in game.message.value


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


# -- where clicks cannot reach a running cell -------------------------------------------------
GAMES = [lambda: ColourGame(seed=2), lambda: HarlowGame(seed=2)]
GAME_IDS = ["colour", "harlow"]


def _front_end(monkeypatch, on_poll):
    """Stand in for jupyter-ui-poll: each ``poll`` calls ``on_poll(calls)``, as a front-end's
    messages would arrive (or not) while the game cell runs."""
    import jupyter_ui_poll

    calls = []

    @contextlib.contextmanager
    def ui_events():
        def poll(n):
            calls.append(n)
            on_poll(len(calls))

        yield poll

    monkeypatch.setattr(jupyter_ui_poll, "ui_events", ui_events)
    monkeypatch.setenv("COURSE_HEADLESS", "0")
    return calls


@pytest.mark.parametrize("make", GAMES, ids=GAME_IDS)
def test_a_front_end_that_never_answers_gets_a_game_that_does_not_wait(monkeypatch, capsys, make):
    calls = _front_end(monkeypatch, lambda n: None)
    game = make()
    game.probe_timeout = 0.3
    start = time.monotonic()
    game.play(block=True)
    assert time.monotonic() - start < 5 and calls, "play should poll, then give up after probe_timeout"
    assert game.waiting and not game.done
    assert capsys.readouterr().out.splitlines()[-1] == NO_CLICKS_WHILE_RUNNING  # after the game's repr
    with pytest.raises(GameNotFinished, match="No click has reached the game yet.*JupyterLab.*autoplay"):
        game.results()
    game.left.click()
    game.right.click()  # the student plays once the cell has ended
    with pytest.raises(GameNotFinished, match=f"2 of {game.attempts} attempts played.*run this cell again"):
        game.results()
    game.autoplay(seed=1)
    assert game.done and len(game.results().rewards) == game.attempts


@pytest.mark.parametrize("make", GAMES, ids=GAME_IDS)
@pytest.mark.parametrize("sign_of_life", ["probe answered", "a click"])
def test_a_front_end_that_delivers_messages_keeps_the_cell_blocked(monkeypatch, capsys, make, sign_of_life):
    game = make()
    game.probe_timeout = 0.3

    def on_poll(n):
        if n == 1 and sign_of_life == "probe answered":
            game._probe.target.value = 1  # the front-end's widget manager copied the linked value
        elif n == 1 or n > 10:  # the player pauses for ten polls (0.5 s), longer than probe_timeout
            game.left.click()

    _front_end(monkeypatch, on_poll)
    game.play(block=True)
    assert game.done and not game.waiting and NO_CLICKS_WHILE_RUNNING not in capsys.readouterr().out
    assert len(game.results().rewards) == game.attempts


def test_block_false_returns_at_once_and_waits_for_the_player_in_results(monkeypatch, capsys):
    _front_end(monkeypatch, lambda n: pytest.fail("block=False should not poll"))
    game = ColourGame(seed=0).play(block=False)
    assert game.waiting and NO_CLICKS_WHILE_RUNNING not in capsys.readouterr().out
    game.right.click()
    with pytest.raises(GameNotFinished, match="1 of 30 attempts played"):
        game.results()


def test_without_a_kernel_play_returns_and_says_so(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_HEADLESS", "0")
    game = HarlowGame(seed=0).play(block=True)  # pytest runs no IPython kernel: nothing to poll
    assert game.waiting and NO_CLICKS_WHILE_RUNNING in capsys.readouterr().out


def test_a_real_kernel_without_a_widget_front_end_does_not_hang(tmp_path):
    """nbclient is a front-end without widgets: the kernel, jupyter-ui-poll and the probe are real."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    source = [
        "from course_utils.colour.game import ColourGame\nfrom course_utils.harlow.game import HarlowGame\n"
        "games = []\nfor make in (ColourGame, HarlowGame):\n    make.probe_timeout = 1.0\n"
        "    games.append(make(seed=0).play(block=True))",
        "for game in games:\n    try:\n        game.results()\n    except Exception as error:\n"
        "        print(type(error).__name__, error)",
    ]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in source])
    resources = {"metadata": {"path": str(tmp_path)}}
    client = nbclient.NotebookClient(notebook, timeout=120, kernel_name="python3", resources=resources)
    client.execute(env={**os.environ, "COURSE_HEADLESS": "0"})
    printed = ["".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream") for cell in notebook.cells]
    assert printed[0].count(NO_CLICKS_WHILE_RUNNING) == 2
    assert printed[1].count("GameNotFinished No click has reached the game yet") == 2
