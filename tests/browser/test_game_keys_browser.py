"""A game played with the keyboard alone, in JupyterLab in a real (headless) Chromium.

A short colour game (six attempts) blocks its cell as in the tutorial. The first three choices
are made without a mouse: the focus is put on the Left button (as Tab would put it there), then
Enter, Tab, Space, Shift+Tab, Enter. The last three are made by ← , R and → with the pointer
resting over the game (ipyevents listens for keys only there). After each key the attempt
counter and the score must move as the game's rules say, the message line must announce the
result as a sentence, and at the end the next cell must see exactly the choices the keys made.
"""

from __future__ import annotations

import json
import re

import pytest

from browser.conftest import SCREENSHOTS
from browser.lab_page import cells, open_notebook, screenshot, start_run, text, wait_run_finished
from browser.test_notebooks_browser import CELL_RUN_MS, COLOUR_VALUE, _score, _stage_label, _status, _wait_status

pytestmark = pytest.mark.browser

PREFIX = "colour-game"
GAME_SOURCE = "from course_utils.colour.game import ColourGame\n\ngame = ColourGame(attempts_per_mode=3, seed=5).play(block=True)"
# True when something on the page cancels a key press made away from the game.
PREVENTED_JS = """() => {
  const press = new KeyboardEvent('keydown', {key: 'a', bubbles: true, cancelable: true});
  document.body.dispatchEvent(press);
  return press.defaultPrevented;
}"""
AFTER_SOURCE = 'print("actions:", game.results().actions.tolist(), "score:", game.score)'


def _notebook(path) -> None:
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None}
    notebook = {
        "cells": [{**cell, "source": GAME_SOURCE}, {**cell, "source": AFTER_SOURCE}],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(notebook))


def test_the_colour_game_can_be_played_with_keys_alone(page, lab):
    _notebook(lab.root / "keys_only_game.ipynb")
    open_notebook(page, lab, "keys_only_game.ipynb")
    start_run(page)
    game_cell = page.locator(".jp-Notebook .jp-Cell").nth(0)
    left = game_cell.locator(f"button.{PREFIX}-left")
    left.wait_for(state="visible")
    _wait_status(page, PREFIX, "Attempt 1 of 6")
    assert cells(page)[0]["state"] == "running", "the game cell should block until the game ends"
    help_text = game_cell.locator(f".{PREFIX}-keys-help").inner_text()
    assert all(word in help_text for word in ("←", "→", "Tab", "Enter", "Space")), help_text

    # Three choices with no mouse: the focus goes to the Left button as Tab would take it there, and
    # the pointer stays in the page's corner, away from the game. Then three with the pointer
    # resting over the game (ipyevents' condition for keys), and no click.
    steps = [
        (("Enter",), 0),
        (("Tab", "Space"), 1),
        (("Shift+Tab", "Enter"), 0),
        (("ArrowLeft",), 0),
        (("r",), 1),
        (("ArrowRight",), 1),
    ]
    score, sides = 0, []
    for attempt, (keys, side) in enumerate(steps, start=1):
        if attempt == 1:
            page.mouse.move(0, 0)
            left.focus()
        elif attempt == 4:
            game_cell.locator(f".{PREFIX}-status").hover()
        names = re.fullmatch(r"(\w+) on the left, (\w+) on the right", _stage_label(game_cell))
        assert names, _stage_label(game_cell)
        shown = names.group(1), names.group(2)
        captions = game_cell.locator(f".{PREFIX} svg text").all_text_contents()
        assert captions == list(shown), f"each colour should be named under its swatch: {captions} vs {shown}"
        for key in keys:
            page.keyboard.press(key)
        _wait_status(page, PREFIX, "Game over" if attempt == 6 else f"Attempt {attempt + 1} of 6")
        reward = COLOUR_VALUE[shown[side]]
        new_score = _score(_status(page, PREFIX))
        assert new_score == score + reward, f"attempt {attempt} ({keys}): score {score} + {reward}, got {new_score}"
        message = " ".join(game_cell.locator(f".{PREFIX}-message [role=alert]").inner_text().split())
        chosen = ("left", "right")[side]
        assert message.startswith(f"Attempt {attempt} of 6: you chose the {chosen} colour, {shown[side]}: +{reward}"), message
        score, sides = new_score, [*sides, side]
        if attempt == 5:
            screenshot(page, SCREENSHOTS, "colour_game_played_by_keys")

    assert wait_run_finished(page, CELL_RUN_MS) == "done"
    # The pointer leaves the finished game: the notebook gets every key back (ipyevents takes the
    # keys of the whole page while the pointer is over the game, and must let go on leaving).
    page.mouse.move(0, 0)
    assert not page.evaluate(PREVENTED_JS), "a key pressed away from the game should reach the notebook"
    after = text(cells(page)[1])
    assert f"actions: {sides} score: {score}" in after, after
