"""What the course's two-choice games share: the left/right action rule, and running a widget
game (show it, let it play itself when nobody can click, or block "Run all" until it ends).

A game class sets up its schedule, calls ``self._start(prefix, prompt)`` and defines
``attempts``, ``choose(action)`` (appending to ``self.actions`` and ``self.rewards``) and
``_render()``; ``ButtonGame`` adds ``attempt``, ``done``, ``score``, the buttons' click handler,
the game-over screen (``_render_game_over``), ``show``, ``autoplay`` and ``play``.
"""

from __future__ import annotations

import time

import numpy as np
import torch

from course_utils.runtime import headless


def check_side(action) -> int:
    """``action`` as an int 0 (left) or 1 (right); a clear ``ValueError`` for anything else
    (a bool, 2, a float, an array of several values). A one-element array or tensor is accepted."""
    if isinstance(action, torch.Tensor | np.ndarray):
        if (action.numel() if isinstance(action, torch.Tensor) else action.size) != 1:
            raise ValueError(f"action must be a single 0 or 1, got an array of shape {tuple(action.shape)}.")
        action = action.item()
    if isinstance(action, bool | np.bool_) or not isinstance(action, int | np.integer) or action not in (0, 1):
        raise ValueError(f"action must be 0 (left) or 1 (right), got {action!r}.")
    return int(action)


class ButtonGame:
    """Running a Left/Right widget game in a notebook."""

    @property
    def attempt(self) -> int:
        """Number of attempts made so far."""
        return len(self.actions)

    @property
    def done(self) -> bool:
        return self.attempt >= self.attempts

    @property
    def score(self) -> int:
        """Total reward so far."""
        return int(sum(self.rewards))

    def _start(self, prefix: str, prompt: str) -> None:
        """No attempts yet, the widgets (``_build_widgets``), and the first attempt drawn."""
        self.actions: list[int] = []
        self.rewards: list[int] = []
        self.autoplayed = False
        self._build_widgets(prefix, prompt)
        self._render()

    def _on_click(self, button) -> None:
        if not self.done:
            self.choose(0 if button is self.left else 1)

    def _render_game_over(self, best: int, well_played: str) -> None:
        """The end screen: final score out of ``best``, buttons disabled, and ``well_played``
        appended to the message (or a note that the game played itself)."""
        self.stage.value = ""
        self.left.disabled = self.right.disabled = True
        self.message.value += (
            f"<br><b>Well played!</b> {well_played}"
            if not self.autoplayed
            else "<br><i>Nobody could click here, so the game played itself at random.</i>"
        )
        # The status line changes last, so "Game over" means the rest of the screen is final.
        self.status.value = f"<b>Game over</b> &nbsp;·&nbsp; total reward: <b>{self.score}</b> of {best} possible"

    def _build_widgets(self, prefix: str, prompt: str) -> None:
        """The game's box: status line, stage, Left/Right buttons, message. Each part gets a CSS
        class ``{prefix}-status``, ``-left``, ``-right``, ``-message`` (the browser tests find them
        by it); clicks go to ``self._on_click(button)``."""
        import ipywidgets as widgets

        self.left = widgets.Button(description="Left", icon="arrow-left", button_style="info")
        self.right = widgets.Button(description="Right", icon="arrow-right", button_style="info")
        self.stage = widgets.HTML()
        self.status = widgets.HTML()
        self.message = widgets.HTML(f"<b>{prompt}</b>")
        for part, widget in (("left", self.left), ("right", self.right), ("status", self.status), ("message", self.message)):
            widget.add_class(f"{prefix}-{part}")
        self.left.on_click(self._on_click)
        self.right.on_click(self._on_click)
        self.widget = widgets.VBox(
            [self.status, self.stage, widgets.HBox([self.left, self.right]), self.message],
            layout=widgets.Layout(border="1px solid #ccc", padding="8px", width="360px"),
        )

    def show(self):
        """Display the game and return at once (event-driven)."""
        from IPython.display import display

        display(self.widget)
        return self

    def autoplay(self, seed: int | None = None):
        """Play the remaining attempts by clicking the game's own buttons at random."""
        rng = np.random.default_rng(seed)
        self.autoplayed = True
        while not self.done:
            (self.left if rng.random() < 0.5 else self.right).click()
        return self

    def play(self, block: bool = True, timeout: float = 30 * 60):
        """Show the game; with ``block`` wait until it ends (at most ``timeout`` seconds), so "Run all"
        stops here and the next cells see the player's choices.

        When nobody can click (``course_utils.headless()``: CI, nbgrader, nbmake), the game plays
        itself instead, through its own buttons, and returns at once.
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
