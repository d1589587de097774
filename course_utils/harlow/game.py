"""Harlow's experiment as a game for tutorial 1, as an ipywidgets app.

The player meets ``problems`` problems of ``attempts_per_problem`` attempts. Each problem
shows two symbols never seen before (a random shape in a random colour); one of them is
always rewarded (+1), the other punished (-1), whichever side it is on. The sides change at
random from attempt to attempt. The player has to discover the rule: the reward goes with
the symbol, not the side, so from the second attempt of a problem on, it can be perfect.

The game is event-driven, like the colour game: ``game.show()`` displays it and returns;
``game.play(block=True)`` also waits (with jupyter-ui-poll) until the last attempt (where the
front-end cannot deliver clicks to a running cell, it says so and returns; see
``course_utils.game``). When nobody can click (``course_utils.headless()``), ``play`` makes the
game play itself by clicking its own buttons at random, and returns at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from course_utils.game import ButtonGame

SHAPES = ("circle", "square", "triangle", "star", "pentagon", "hexagon", "octagon", "diamond", "arrow", "bar")
COLOURS = {
    "red": "#e32b2b",
    "orange": "#f28e1c",
    "yellow": "#f5d000",
    "green": "#1f8f3a",
    "teal": "#17a2a2",
    "blue": "#2456d6",
    "purple": "#8a3fc7",
    "pink": "#e85aa8",
}


def _polygon(points) -> str:
    return "<polygon points='" + " ".join(f"{x:.1f},{y:.1f}" for x, y in points) + "'"


def _regular(n: int, radius: float = 48, rotation: float = -np.pi / 2):
    return [
        (60 + radius * np.cos(rotation + 2 * np.pi * k / n), 60 + radius * np.sin(rotation + 2 * np.pi * k / n)) for k in range(n)
    ]


def _shape_svg(shape: str, colour: str) -> str:
    """An SVG element (no wrapper) of ``shape`` in a 120 x 120 box."""
    if shape == "circle":
        element = "<circle cx='60' cy='60' r='48'"
    elif shape == "square":
        element = "<rect x='16' y='16' width='88' height='88'"
    elif shape == "bar":
        element = "<rect x='42' y='8' width='36' height='104'"
    elif shape == "triangle":
        element = _polygon([(60, 10), (110, 104), (10, 104)])
    elif shape == "diamond":
        element = _polygon([(60, 6), (108, 60), (60, 114), (12, 60)])
    elif shape == "arrow":
        element = _polygon([(10, 50), (66, 50), (66, 22), (112, 60), (66, 98), (66, 70), (10, 70)])
    elif shape == "star":
        outer, inner = _regular(5, 52), _regular(5, 21, rotation=-np.pi / 2 + np.pi / 5)
        element = _polygon([point for pair in zip(outer, inner, strict=True) for point in pair])
    else:
        element = _polygon(_regular({"pentagon": 5, "hexagon": 6, "octagon": 8}[shape]))
    tag = element[1:].split()[0]
    return f"{element} fill='{COLOURS[colour]}' stroke='#333' stroke-width='2'><title>{colour} {shape}</title></{tag}>"


def symbols_svg(left: tuple[str, str], right: tuple[str, str]) -> str:
    """Two symbols (shape, colour) side by side as one SVG image, each named underneath ("red
    circle"); the image's ``aria-label`` names both for a screen reader."""

    def placed(symbol, dx):
        return f"<g transform='translate({dx},10)'>{_shape_svg(*symbol)}</g>"

    def caption(symbol, x):
        return f"<text x='{x}' y='160' text-anchor='middle' font-size='14' fill='#222'>{' '.join(symbol[::-1])}</text>"

    label = f"{_named(left)} on the left, {_named(right)} on the right"
    return (
        f'<svg width="320" height="170" role="img" aria-label="{label}">{placed(left, 20)}{placed(right, 180)}'
        f"{caption(left, 80)}{caption(right, 240)}</svg>"
    )


def _named(symbol: tuple[str, str]) -> str:
    """A symbol (shape, colour) in words: "a red circle", "an orange star"."""
    shape, colour = symbol
    return f"{'an' if colour[0] in 'aeiou' else 'a'} {colour} {shape}"


@dataclass
class GameResults:
    """Per attempt (arrays of length n): the problem (0-based), the trial number within the
    problem (1-based), the side chosen (0 left, 1 right), whether it was the rewarded
    symbol, and the reward (+1 or -1)."""

    problem: np.ndarray
    trial: np.ndarray
    actions: np.ndarray
    correct: np.ndarray
    rewards: np.ndarray


class HarlowGame(ButtonGame):
    """Harlow's experiment: two new symbols per problem, one always pays. See ``results()``."""

    def __init__(self, problems: int = 5, attempts_per_problem: int = 6, seed: int | None = None):
        if problems < 1 or attempts_per_problem < 1:
            raise ValueError(f"problems and attempts_per_problem must be at least 1, got {problems} and {attempts_per_problem}.")
        rng = np.random.default_rng(seed)
        self.problems, self.attempts_per_problem = int(problems), int(attempts_per_problem)
        # Every symbol is new: all shapes are used before any shape comes back (in a new colour).
        order = [SHAPES[i] for _ in range(-(-2 * problems // len(SHAPES))) for i in rng.permutation(len(SHAPES))]
        colours = list(COLOURS)
        self.pairs: list[tuple[tuple[str, str], tuple[str, str]]] = []  # (rewarded, punished) per problem
        for p in range(problems):
            a, b = order[2 * p], order[2 * p + 1]
            ca, cb = rng.choice(len(colours), size=2, replace=False)
            self.pairs.append(((a, colours[ca]), (b, colours[cb])))
        self.rewarded_side = rng.integers(0, 2, size=problems * attempts_per_problem)
        self._start("harlow-game", "Pick the side you think will pay.")

    # -- state ---------------------------------------------------------------------
    @property
    def attempts(self) -> int:
        return self.problems * self.attempts_per_problem

    def shown(self, attempt: int) -> tuple[tuple[str, str], tuple[str, str]]:
        """The (left, right) symbols of attempt ``attempt`` (0-based), each (shape, colour)."""
        rewarded, punished = self.pairs[attempt // self.attempts_per_problem]
        return (rewarded, punished) if self.rewarded_side[attempt] == 0 else (punished, rewarded)

    def choose(self, action: int) -> int:
        """Make the next choice: 0 for left, 1 for right. Returns the reward (+1 or -1)."""
        if self.done:
            raise RuntimeError("The game is over: create a new HarlowGame() to play again.")
        if isinstance(action, bool) or action not in (0, 1):
            raise ValueError(f"action must be 0 (left) or 1 (right), got {action!r}.")
        shape, colour = self.shown(self.attempt)[action]
        reward = 1 if action == self.rewarded_side[self.attempt] else -1
        self.actions.append(int(action))
        self.rewards.append(reward)
        new_problem = not self.done and self.attempt % self.attempts_per_problem == 0
        note = "<br><b>New problem:</b> two new symbols." if new_problem else ""
        self._announce(action, _named((shape, colour)), "+1" if reward > 0 else "-1", note)
        self._render()
        return reward

    def _render(self) -> None:
        if self.done:
            self._render_game_over(self.attempts, "Did you find the rule that makes every problem easy after its first attempt?")
            return
        problem = self.attempt // self.attempts_per_problem + 1
        self.stage.value = symbols_svg(*self.shown(self.attempt))
        self.status.value = (  # last: when the status line shows the new attempt, the stage does too
            f"<b>Attempt {self.attempt + 1} of {self.attempts}</b> &nbsp;·&nbsp; problem {problem} of {self.problems}"
            f" &nbsp;·&nbsp; total reward: <b>{self.score}</b>"
        )

    def results(self) -> GameResults:
        """The attempts made so far; ``harlow.accuracy_by_trial(r.trial, r.correct)`` groups them."""
        self._require_finished()
        n = self.attempt
        index = np.arange(n)
        actions = np.asarray(self.actions, dtype=np.int64)
        return GameResults(
            problem=index // self.attempts_per_problem,
            trial=index % self.attempts_per_problem + 1,
            actions=actions,
            correct=actions == self.rewarded_side[:n],
            rewards=np.asarray(self.rewards, dtype=float),
        )

