"""The shared Left/Right rule and game runner."""

import contextlib
import os
import time

import numpy as np
import pytest
import torch

from course_utils.colour.game import ColourGame
from course_utils.game import NO_CLICKS_WHILE_RUNNING, GameNotFinished, check_side
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
