"""The colour-choice game of tutorial 2, as an ipywidgets app.

The player sees two coloured circles, each named underneath, and picks Left or Right (by
click or by key, see ``course_utils.game``); each colour is worth a
fixed reward (red 1, yellow 2, green 3, blue 4), which the player has to discover. After
``attempts_per_mode`` attempts with mode-1 colours, the colour set silently changes to
mode 2.

The game is event-driven: ``game.show()`` displays it and returns. ``game.play(block=True)``
also waits (with jupyter-ui-poll) until the last attempt, so "Run all" stops at the game (where
the front-end cannot deliver clicks to a running cell, it says so and returns; see
``course_utils.game``). When nobody can click (``course_utils.headless()``: CI, nbgrader,
nbmake), ``play`` makes the game play itself by clicking its own buttons at random, and returns
at once.
"""

from __future__ import annotations

import numpy as np

from course_utils.colour.env import COLOUR_REWARDS, MODE_COLOURS
from course_utils.colour.training import Trials
from course_utils.game import ButtonGame

_HEX = {"red": "#e32b2b", "yellow": "#f5d000", "green": "#1f8f3a", "blue": "#2456d6"}


def _circles_svg(left: str, right: str) -> str:
    """The two colours as circles, each with its name underneath (about one man in twelve cannot
    tell red from green by sight); the image's ``aria-label`` names both for a screen reader."""

    def circle(cx, colour):
        return (
            f'<circle cx="{cx}" cy="70" r="55" fill="{_HEX[colour]}" stroke="#333" stroke-width="2">'
            f"<title>{colour}</title></circle>"
            f'<text x="{cx}" y="150" text-anchor="middle" font-size="16" font-weight="bold" fill="#222">{colour}</text>'
        )

    label = f"{left} on the left, {right} on the right"
    return f'<svg width="320" height="160" role="img" aria-label="{label}">{circle(80, left)}{circle(240, right)}</svg>'


class ColourGame(ButtonGame):
    """Two colours, pick one. Records every choice; see ``results()``."""

    item_name = "colour"

    def __init__(self, attempts_per_mode: int = 15, seed: int | None = None):
        rng = np.random.default_rng(seed)
        self.schedule: list[tuple[str, str]] = []
        for mode in (1, 2):
            for _ in range(attempts_per_mode):
                i, j = rng.choice(3, size=2, replace=False)
                self.schedule.append((MODE_COLOURS[mode][i], MODE_COLOURS[mode][j]))
        self.modes = [1] * attempts_per_mode + [2] * attempts_per_mode
        self.max_rewards: list[int] = []
        self._start("colour-game", "Pick the colour you think is worth more.")

    # -- state ---------------------------------------------------------------------
    @property
    def attempts(self) -> int:
        return len(self.schedule)

    def choose(self, action: int) -> int:
        """Make the next choice: 0 for left, 1 for right. Returns the reward earned."""
        if self.done:
            raise RuntimeError("The game is over: create a new ColourGame() to play again.")
        if action not in (0, 1):
            raise ValueError(f"action must be 0 (left) or 1 (right), got {action!r}.")
        pair = self.schedule[self.attempt]
        reward = COLOUR_REWARDS[pair[action]]
        self.actions.append(int(action))
        self.rewards.append(reward)
        self.max_rewards.append(max(COLOUR_REWARDS[c] for c in pair))
        self._announce(action, pair[action], f"+{reward}")
        self._render()
        return reward

    def _render(self) -> None:
        if self.done:
            self._render_game_over(sum(self.max_rewards), "Did you notice a pattern? Something changed halfway through.")
            return
        self.stage.value = _circles_svg(*self.schedule[self.attempt])
        self.status.value = (  # last: when the status line shows the new attempt, the stage does too
            f"<b>Attempt {self.attempt + 1} of {self.attempts}</b> &nbsp;·&nbsp; total reward: <b>{self.score}</b>"
        )

    def results(self) -> Trials:
        """The attempts made so far, in the same form as an agent's trials."""
        self._require_finished()
        n = self.attempt
        return Trials(
            inputs=np.zeros((n, 9), dtype=np.float32),
            actions=np.asarray(self.actions, dtype=np.int64),
            rewards=np.asarray(self.rewards, dtype=float),
            max_rewards=np.asarray(self.max_rewards, dtype=float),
            probs=np.ones(n, dtype=np.float32),
            shown=list(self.schedule[:n]),
        )
