"""Every student notebook, run in JupyterLab in a real (headless) Chromium, as a student would.

For each notebook of the student bundle (served with the bundle's wheel): "Run all"; if it has a
game, play the whole game by clicking Left/Right while the game cell blocks, checking after each
click that the attempt counter and the score move as the game's rules say, that the cells after
the game wait for it, and that they use the player's recorded choices. Then keep running past
each unanswered exercise (JupyterLab stops "Run all" at the first error) and check that every
error is the intended exercise prompt, that the setup cells run cleanly, and that plots render as
images. Screenshots of each game at start, mid-game and end go to ``test-artifacts/screenshots/``.

Also the instructor view: nbgrader's JupyterLab extension puts its Validate button on a notebook.
"""

from __future__ import annotations

import re
import time

import numpy as np
import pytest

from browser.conftest import NOTEBOOKS, PROBE_TIMEOUT_S, SCREENSHOTS
from browser.lab_page import (
    cells,
    errors,
    images,
    is_exercise_prompt,
    open_notebook,
    screenshot,
    start_run,
    text,
    wait_run_finished,
)
from course_utils.game import NO_CLICKS_WHILE_RUNNING

pytestmark = pytest.mark.browser

CLICK_WAIT_MS = 30_000  # a click must show up in the game's status line within this
CELL_RUN_MS = 150_000  # the longest one stretch of cells may run (fast mode keeps cells < 100 s)
COLOUR_VALUE = {"red": 1, "yellow": 2, "green": 3, "blue": 4}


def _status(page, prefix: str) -> str:
    return " ".join(page.locator(f".{prefix}-status").inner_text().split())


def _wait_status(page, prefix: str, want: str) -> None:
    page.wait_for_function(
        "([selector, want]) => { const s = document.querySelector(selector);"
        " return s && s.innerText.replace(/\\s+/g, ' ').includes(want); }",
        arg=[f".{prefix}-status", want],
        timeout=CLICK_WAIT_MS,
    )


def _score(status: str) -> int:
    match = re.search(r"total reward: (-?\d+)", status)
    assert match, f"no score in the status line {status!r}"
    return int(match.group(1))


def _stage_label(game_cell) -> str:
    return game_cell.locator("svg[aria-label]").first.get_attribute("aria-label") or ""


class ColourRules:
    """Tutorial 2's game: each colour pays a fixed reward; the stage's SVG names both colours."""

    prefix = "colour-game"

    def __init__(self):
        self.best_chosen: list[bool] = []

    def pick(self, page, game_cell, rng) -> int:
        return int(rng.integers(2))

    def observe(self, reward: int) -> None:
        pass

    def expected_reward(self, page, game_cell, side: int) -> int:
        label = _stage_label(game_cell)
        match = re.fullmatch(r"(\w+) on the left, (\w+) on the right", label)
        assert match, f"the stage should name its two colours, got {label!r}"
        left, right = COLOUR_VALUE[match.group(1)], COLOUR_VALUE[match.group(2)]
        chosen, other = (left, right) if side == 0 else (right, left)
        self.best_chosen.append(chosen >= other)
        return chosen

    def check_after_game(self, notebook: list[dict], game_index: int) -> None:
        """The next code cell compares the player with the agent on the player's own pairs."""
        after = next(c for c in notebook[game_index + 1 :] if c["type"] == "code")
        assert images(after) >= 2, "the 'you vs the agent' plots did not render"
        match = re.search(r"You chose the better colour in (\d+)% of attempts", text(after))
        assert match, text(after)
        assert int(match.group(1)) == round(100 * np.mean(self.best_chosen)), (match.group(0), self.best_chosen)


class HarlowRules:
    """Tutorial 1's game: each problem shows two new symbols; one of them pays +1 wherever it is,
    the other -1. The first attempt of a problem is a guess; from its reward on, every choice's
    reward is known. The player here learns like a monkey after many problems: it picks the
    rewarded symbol from trial 2 on, except on a few deliberate slips."""

    prefix = "harlow-game"

    def __init__(self):
        self.problem = None
        self.pair: set[str] = set()
        self.seen: set[str] = set()
        self.rewarded: str | None = None
        self.chosen: str | None = None
        self.trial = 0
        self.correct: dict[int, list[bool]] = {}

    def _symbols(self, game_cell) -> tuple[str, str]:
        match = re.fullmatch(r"an? (.+?) on the left, an? (.+?) on the right", _stage_label(game_cell))
        assert match, f"the stage should name its two symbols, got {_stage_label(game_cell)!r}"
        return match.group(1), match.group(2)

    def _read(self, page, game_cell) -> tuple[int, tuple[str, str]]:
        """The problem number and its symbols, read once both widgets show the same problem:
        the status line and the stage are two widgets, updated one after the other, so for a
        moment after a click one may show the next problem and the other the last one."""
        deadline = time.monotonic() + CLICK_WAIT_MS / 1000
        while True:
            problem = int(re.search(r"problem (\d+) of", _status(page, self.prefix)).group(1))
            shown = self._symbols(game_cell)
            consistent = set(shown) == self.pair if problem == self.problem else not set(shown) & self.seen
            if consistent or time.monotonic() > deadline:
                return problem, shown
            page.wait_for_timeout(50)

    def _sync(self, page, game_cell) -> tuple[str, str]:
        problem, shown = self._read(page, game_cell)
        if problem != self.problem:
            assert not set(shown) & self.seen, f"problem {problem} should show two new symbols, got {shown}"
            self.problem, self.pair, self.rewarded, self.trial = problem, set(shown), None, 0
            self.seen |= set(shown)
        assert set(shown) == self.pair, f"the symbols changed within problem {problem}: {shown} vs {self.pair}"
        return shown

    def pick(self, page, game_cell, rng) -> int:
        shown = self._sync(page, game_cell)
        if self.rewarded is None or rng.random() < 0.15:
            return int(rng.integers(2))
        return shown.index(self.rewarded)

    def expected_reward(self, page, game_cell, side: int) -> int | None:
        shown = self._sync(page, game_cell)
        self.chosen, self.other = shown[side], shown[1 - side]
        self.trial += 1
        if self.rewarded is None:
            return None  # a guess: +1 or -1
        return 1 if self.chosen == self.rewarded else -1

    def observe(self, reward: int) -> None:
        assert reward in (-1, 1), reward
        if self.rewarded is None:
            self.rewarded = self.chosen if reward == 1 else self.other
        self.correct.setdefault(self.trial, []).append(reward == 1)

    def check_after_game(self, notebook: list[dict], game_index: int) -> None:
        """The cell after the game reports the player's accuracy per trial of a problem."""
        after = next(c for c in notebook[game_index + 1 :] if c["type"] == "code")
        assert images(after) >= 1, "the plot of your accuracy per trial did not render"
        found = dict(re.findall(r"trial (\d+): (\d+)%", text(after)))
        assert found, f"no per-trial accuracy printed after the game: {text(after)!r}"
        for trial, values in self.correct.items():
            assert int(found[str(trial)]) == round(100 * np.mean(values)), (trial, found, self.correct)


GAMES = {"ColourGame": ColourRules, "HarlowGame": HarlowRules}


def _game_cell(notebook: list[dict]) -> tuple[int, str] | None:
    for cell in notebook:
        if cell["type"] == "code" and ".play(" in cell["source"]:
            for name in GAMES:
                if name in cell["source"]:
                    return cell["index"], name
            pytest.fail(f"a game cell with no rules in this suite: {cell['source']!r}")
    return None


def _play(page, name: str, game_index: int, rules) -> None:
    prefix = rules.prefix
    game_cell = page.locator(".jp-Notebook .jp-Cell").nth(game_index)
    left, right = game_cell.locator(f"button.{prefix}-left"), game_cell.locator(f"button.{prefix}-right")
    left.wait_for(state="visible")
    _wait_status(page, prefix, "Attempt 1 of")
    total = int(re.search(r"Attempt 1 of (\d+)", _status(page, prefix)).group(1))
    screenshot(page, SCREENSHOTS, f"{name}_game_start")

    # "Run all" is blocked at the game: the game cell runs, everything after it waits. No click comes
    # before the probe's time is up, so JupyterLab itself must have answered the game's probe.
    page.wait_for_timeout(1000 * (PROBE_TIMEOUT_S + 2))
    assert NO_CLICKS_WHILE_RUNNING not in game_cell.inner_text(), "JupyterLab should answer the game's probe"
    state = cells(page)
    assert state[game_index]["state"] == "running", "the game cell should block until the game ends"
    later = [c for c in state[game_index + 1 :] if c["type"] == "code"]
    assert later and all(not c["outputs"] for c in later), "cells after the game ran before it ended"

    rng = np.random.default_rng(7)
    score = _score(_status(page, prefix))
    assert score == 0
    for attempt in range(1, total + 1):
        side = rules.pick(page, game_cell, rng)
        reward = rules.expected_reward(page, game_cell, side)
        if attempt == total:
            assert cells(page)[game_index]["state"] == "running", "the game stopped blocking before its last click"
        (left if side == 0 else right).click()
        _wait_status(page, prefix, "Game over" if attempt == total else f"Attempt {attempt + 1} of {total}")
        new_score = _score(_status(page, prefix))
        if reward is None:  # the rules allow several rewards here; learn which one came
            reward = new_score - score
        assert new_score == score + reward, f"attempt {attempt}: score {score} + reward {reward}, got {new_score}"
        rules.observe(reward)
        score = new_score
        if attempt == total // 2:
            screenshot(page, SCREENSHOTS, f"{name}_game_mid")
    # Each button is its own widget, disabled one after the other: wait (bounded) for both.
    deadline = time.monotonic() + CLICK_WAIT_MS / 1000
    while not (left.is_disabled() and right.is_disabled()) and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    assert left.is_disabled() and right.is_disabled(), "the buttons should be disabled once the game is over"
    assert game_cell.locator(f".{prefix}-message").inner_text().strip(), "the game should end with a message"
    screenshot(page, SCREENSHOTS, f"{name}_game_end")


def _run_to_the_end(page, notebook_len: int) -> list[int]:
    """Wait for the current run; whenever JupyterLab stops at an error, run on from the next cell.
    Returns the indices of the cells it stopped at."""
    stops = []
    for _ in range(notebook_len + 1):
        if wait_run_finished(page, CELL_RUN_MS) == "done":
            return stops
        state = cells(page)
        failed = [c["index"] for c in state if errors(c) and c["index"] not in stops]
        assert failed, "JupyterLab stopped without an error output"
        stops.append(failed[0])
        if failed[0] + 1 >= len(state):
            return stops
        start_run(page, "notebook:run-all-below", from_cell=failed[0] + 1)
    pytest.fail("the notebook kept stopping: more stops than cells")


@pytest.mark.parametrize("notebook", sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")))
def test_student_notebook_runs_as_a_student_sees_it(page, lab, notebook):
    started = time.monotonic()
    name = notebook.removesuffix(".ipynb")
    open_notebook(page, lab, notebook)
    initial = cells(page)
    assert all(not c["outputs"] for c in initial), "student notebooks are stored without outputs"
    game = _game_cell(initial)

    start_run(page)
    rules = None
    if game is not None:
        rules = GAMES[game[1]]()
        _play(page, name, game[0], rules)
    stops = _run_to_the_end(page, len(initial))
    final = cells(page)
    screenshot(page, SCREENSHOTS, f"{name}_end")

    for cell in final:
        if cell["type"] != "code":
            continue
        assert cell["count"] is not None, f"cell {cell['index']} never ran: {cell['source'][:80]!r}"
        for error in errors(cell):
            assert is_exercise_prompt(error), (
                f"cell {cell['index']} failed with {error['ename']}: {error['evalue']} -- "
                f"not an exercise prompt. Source: {cell['source'][:200]!r}"
            )
        if "setup" in cell["tags"]:
            assert not errors(cell) and "Traceback" not in text(cell), f"setup cell {cell['index']} failed"
        # A plotting cell must show its plot, unless it says it waits for an exercise
        # (e.g. "Your ReplayMemory does not pass its check yet ...: the learning curves need it.").
        waits_for_exercise = "Complete Exercise" in text(cell) or re.search(r"pass (its|their) checks? yet", text(cell))
        if not errors(cell) and not waits_for_exercise and re.search(r"plt\.show\(\)|\bplot_\w+\(", cell["source"]):
            assert images(cell) >= 1, f"cell {cell['index']} should draw a plot: {cell['source'][:120]!r}"

    # Each exercise's check cell (the first code cell after it) shows the intended prompt: the
    # check's "not implemented yet" verdict, or the NotImplementedError itself.
    exercises = [c for c in final if c["type"] == "code" and (c["nbgrader"] or {}).get("solution")]
    assert exercises, "a tutorial without exercises?"
    for exercise in exercises:
        check = next(c for c in final[exercise["index"] + 1 :] if c["type"] == "code")
        prompt = "not implemented yet" in text(check) or any(is_exercise_prompt(e) for e in errors(check))
        assert prompt, f"the check after exercise cell {exercise['index']} should say it is not implemented yet: {text(check)!r}"
    prompted = {c["index"] for c in final if any(is_exercise_prompt(e) for e in errors(c))}
    assert set(stops) == prompted, (stops, prompted)
    if game is not None:
        rules.check_after_game(final, game[0])
    assert any(images(c) for c in final), "no plot rendered at all"
    print(f"{notebook}: stopped at exercise prompts in cells {stops}; {time.monotonic() - started:.0f} s")


def test_the_lab_runs_the_student_package(lab):
    """The kernels import ``course_utils`` from the bundle's wheel, which holds neither the
    solutions nor the grader: the notebooks above ran as a student's would."""
    import student_bundle

    where, visible = student_bundle.what_imports(lab.env, lab.root)
    assert where.is_relative_to(lab.env["COURSE_STUDENT_SITE"]) and visible == []


def test_kernel_is_ipykernel_6():
    """jupyter-ui-poll's blocking loop ignored clicks with ipykernel 7.4 in JupyterLab 4.6 and works
    with 6.x; the game test above proves the clicks arrive with the kernel the course pins."""
    import ipykernel

    assert int(ipykernel.__version__.split(".")[0]) == 6, ipykernel.__version__


def test_nbgrader_validate_button_is_on_a_notebook(page, lab):
    notebook = sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))[0]
    open_notebook(page, lab, notebook)
    button = page.locator(".jp-NotebookPanel-toolbar").get_by_role("button", name=re.compile("Validate", re.I))
    button.first.wait_for(state="visible")
    screenshot(page, SCREENSHOTS, "instructor_validate_button")
    assert button.count() >= 1
