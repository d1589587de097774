"""The colour-choice game of tutorial 2, as an ipywidgets app.

The player sees two coloured circles and clicks Left or Right; each colour is worth a
fixed reward (red 1, yellow 2, green 3, blue 4), which the player has to discover. After
``attempts_per_mode`` attempts with mode-1 colours, the colour set silently changes to
mode 2.

The game is event-driven: ``game.show()`` displays it and returns. ``game.play(block=True)``
also waits (with jupyter-ui-poll) until the last attempt, so "Run all" stops at the game.
When nobody can click (``course_utils.headless()``: CI, nbgrader, nbmake), ``play`` makes
the game play itself by clicking its own buttons at random, and returns at once.
"""

from __future__ import annotations

import time

import ipywidgets as widgets
import numpy as np
from IPython.display import display

from course_utils.colour import COLOUR_REWARDS, MODE_COLOURS, Trials
from course_utils.runtime import headless

_HEX = {"red": "#e32b2b", "yellow": "#f5d000", "green": "#1f8f3a", "blue": "#2456d6"}


def _circles_svg(left: str, right: str) -> str:
    def circle(cx, colour):
        return (
            f'<circle cx="{cx}" cy="70" r="55" fill="{_HEX[colour]}" stroke="#333" stroke-width="2">'
            f"<title>{colour}</title></circle>"
        )

    label = f"{left} on the left, {right} on the right"
    return f'<svg width="320" height="140" role="img" aria-label="{label}">{circle(80, left)}{circle(240, right)}</svg>'


class ColourGame:
    """Two colours, pick one. Records every choice; see ``results()``."""

    def __init__(self, attempts_per_mode: int = 15, seed: int | None = None):
        rng = np.random.default_rng(seed)
        self.schedule: list[tuple[str, str]] = []
        for mode in (1, 2):
            for _ in range(attempts_per_mode):
                i, j = rng.choice(3, size=2, replace=False)
                self.schedule.append((MODE_COLOURS[mode][i], MODE_COLOURS[mode][j]))
        self.modes = [1] * attempts_per_mode + [2] * attempts_per_mode
        self.actions: list[int] = []
        self.rewards: list[int] = []
        self.max_rewards: list[int] = []
        self.autoplayed = False

        self.left = widgets.Button(description="Left", icon="arrow-left", button_style="info")
        self.right = widgets.Button(description="Right", icon="arrow-right", button_style="info")
        self.left.add_class("colour-game-left")
        self.right.add_class("colour-game-right")
        self.stage = widgets.HTML()
        self.status = widgets.HTML()
        self.status.add_class("colour-game-status")
        self.message = widgets.HTML("<b>Pick the colour you think is worth more.</b>")
        self.message.add_class("colour-game-message")
        self.left.on_click(self._on_click)
        self.right.on_click(self._on_click)
        self.widget = widgets.VBox(
            [self.status, self.stage, widgets.HBox([self.left, self.right]), self.message],
            layout=widgets.Layout(border="1px solid #ccc", padding="8px", width="360px"),
        )
        self._render()

    # -- state ---------------------------------------------------------------------
    @property
    def attempts(self) -> int:
        return len(self.schedule)

    @property
    def attempt(self) -> int:
        """Number of attempts made so far."""
        return len(self.actions)

    @property
    def done(self) -> bool:
        return self.attempt >= self.attempts

    @property
    def score(self) -> int:
        return int(sum(self.rewards))

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
        self.message.value = f"You chose <b>{pair[action]}</b> and received <b>+{reward}</b>."
        self._render()
        return reward

    def _on_click(self, button) -> None:
        if not self.done:
            self.choose(0 if button is self.left else 1)

    def _render(self) -> None:
        self.status.value = (
            f"<b>Attempt {min(self.attempt + 1, self.attempts)} of {self.attempts}</b>"
            f" &nbsp;·&nbsp; total reward: <b>{self.score}</b>"
        )
        if self.done:
            best = sum(self.max_rewards)
            self.status.value = f"<b>Game over</b> &nbsp;·&nbsp; total reward: <b>{self.score}</b> of {best} possible"
            self.stage.value = ""
            self.left.disabled = self.right.disabled = True
            self.message.value += (
                "<br><b>Well played!</b> Did you notice a pattern? Something changed halfway through."
                if not self.autoplayed
                else "<br><i>Nobody could click here, so the game played itself at random.</i>"
            )
        else:
            self.stage.value = _circles_svg(*self.schedule[self.attempt])

    # -- running -------------------------------------------------------------------
    def show(self) -> ColourGame:
        """Display the game and return at once (event-driven)."""
        display(self.widget)
        return self

    def autoplay(self, seed: int | None = None) -> ColourGame:
        """Play the remaining attempts by clicking the game's own buttons at random."""
        rng = np.random.default_rng(seed)
        self.autoplayed = True
        while not self.done:
            (self.left if rng.random() < 0.5 else self.right).click()
        return self

    def play(self, block: bool = True, timeout: float = 30 * 60) -> ColourGame:
        """Show the game; with ``block`` wait until it ends (at most ``timeout`` seconds).

        When nobody can click (``course_utils.headless()``), the game plays itself instead.
        """
        self.show()
        if headless():
            return self.autoplay(seed=0)
        if block:
            from jupyter_ui_poll import ui_events

            deadline = time.monotonic() + timeout
            with ui_events() as poll:
                while not self.done and time.monotonic() < deadline:
                    poll(10)
                    time.sleep(0.05)
            if not self.done:
                self.message.value += (
                    f"<br>Stopped waiting after {timeout / 60:.0f} minutes; the next cells use the attempts made so far."
                )
        return self

    def results(self) -> Trials:
        """The attempts made so far, in the same form as an agent's trials."""
        n = self.attempt
        return Trials(
            inputs=np.zeros((n, 9), dtype=np.float32),
            actions=np.asarray(self.actions, dtype=np.int64),
            rewards=np.asarray(self.rewards, dtype=float),
            max_rewards=np.asarray(self.max_rewards, dtype=float),
            probs=np.ones(n, dtype=np.float32),
            shown=list(self.schedule[:n]),
        )
