"""What the course's two-choice games share: the left/right action rule, and running a widget
game (show it, let it play itself when nobody can click, or block "Run all" until it ends).

A game class sets up its schedule, calls ``self._start(prefix, prompt)`` and defines
``attempts``, ``choose(action)`` (appending to ``self.actions`` and ``self.rewards``),
``_render()`` and ``results()`` (which starts with ``self._require_finished()``); ``ButtonGame``
adds ``attempt``, ``done``, ``score``, the buttons' click handler, the keys, the game-over screen
(``_render_game_over``), ``show``, ``autoplay`` and ``play``.

Every player can play without a mouse. The Left and Right buttons are ordinary buttons: Tab
reaches them and Enter or Space presses them. With the pointer over the game (clicking it puts
it there), ← or L picks left and → or R picks right: ipyevents sends those key presses to the
kernel, and ``_on_key`` presses the game's own button, so a key takes the same path as a click
(the same rules, counters and the blocking ``play``: jupyter-ui-poll handles ipyevents' messages
as it does the buttons'). ipyevents listens for keys only while the pointer is over the game,
not while the game merely has the focus, so without a mouse the buttons are the way in; the
game says both. Each result is also written as a sentence in the message line, inside an
element with ``role="alert"`` that a screen reader reads out when it appears.

Blocking needs a front-end whose widget messages reach the kernel while a cell runs (JupyterLab,
Notebook 7). Where they cannot (some VS Code and Colab set-ups, a front-end without widgets),
``play`` finds out by asking the front-end to echo a value (``FrontEndProbe``), says so in one
sentence and stops waiting: the student plays, then runs the next cell, whose ``results()``
says what to do while the game is unfinished.
"""

from __future__ import annotations

import contextlib
import os
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


NO_CLICKS_WHILE_RUNNING = (
    "This front-end cannot send clicks to the notebook while a cell is running, so the game does not "
    "wait here: play it above, then run the next cell."
)


def _probe_timeout_from_env() -> float:
    """``COURSE_PROBE_TIMEOUT`` (seconds, default 10): the browser tests shorten it to prove that
    JupyterLab answers the probe rather than a click arriving in time."""
    text = os.environ.get("COURSE_PROBE_TIMEOUT", "10")
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not seconds > 0:
        raise ValueError(f"COURSE_PROBE_TIMEOUT must be a positive number of seconds, got {text!r}.")
    return seconds


class GameNotFinished(RuntimeError):
    """``results()`` of a game that is still waiting for its player (see ``ButtonGame.play``)."""


class FrontEndProbe:
    """Asks the front-end to send a value back to the kernel, to learn whether its widget messages
    arrive.

    A ``jsdlink`` is carried out by the front-end's widget manager: as soon as it has the link, it
    copies ``source.value`` (1) into ``target.value`` (0) and sends the new value to the kernel.
    So ``answered`` turns true only where the front-end runs widgets and its messages reach the
    kernel; while a cell runs, that also needs the game's event loop to read them. Nothing is
    displayed.
    """

    def __init__(self):
        import ipywidgets as widgets

        self.source = widgets.IntText(value=1)
        self.target = widgets.IntText(value=0)
        self.link = widgets.jsdlink((self.source, "value"), (self.target, "value"))

    @property
    def answered(self) -> bool:
        return self.target.value == 1

    def close(self) -> None:
        for widget in (self.link, self.source, self.target):
            widget.close()


#: What the keys do, by ``KeyboardEvent.key`` (ipyevents sends it as the event's "key").
KEY_SIDES = {"ArrowLeft": 0, "l": 0, "L": 0, "ArrowRight": 1, "r": 1, "R": 1}

KEYS_HELP = (
    "Keys: click the game (or move the pointer over it), then press ← or L for left, → or R for right. "
    "Without a mouse: press Tab until the Left or Right button is outlined, then Enter or Space."
)

KEYS_BACK = "The notebook's own keys (Shift+Enter and the rest) work again once the pointer is off the game."


class ButtonGame:
    """Running a Left/Right widget game in a notebook."""

    #: What one choice is called in the sentences that announce each result ("the left colour").
    item_name: str = "symbol"

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
        self.waiting = False  # True once `play` has returned early and the player has yet to finish
        self._probe: FrontEndProbe | None = None
        self._build_widgets(prefix, prompt)
        self._render()

    def _on_click(self, button) -> None:
        if not self.done:
            self.choose(0 if button is self.left else 1)

    def _on_key(self, event: dict) -> None:
        """An ipyevents key event (a dict with "event", "key", "repeat", the modifier flags and
        "target"). ← / L and → / R press the Left or Right button; Enter and Space press the
        button the event came from (ipyevents keeps them from reaching the focused button while
        the pointer is over the game). Held keys (repeats) and keys with Ctrl, Alt or Meta (the
        browser's and JupyterLab's shortcuts) are ignored; so is everything once the game is over."""
        if event.get("event", event.get("type")) != "keydown" or event.get("repeat"):
            return
        if event.get("ctrlKey") or event.get("altKey") or event.get("metaKey") or self.done:
            return
        key = event.get("key")
        side = KEY_SIDES.get(key)
        if side is None and key in ("Enter", " "):
            classes = str((event.get("target") or {}).get("className", "")).split()
            side = next((s for s, b in enumerate((self.left, self.right)) if set(b._dom_classes) & set(classes)), None)
        if side is not None:
            (self.left, self.right)[side].click()  # the click's own path: rules, counters, blocking play

    def _announce(self, side: int, what: str, reward: str, note: str = "") -> None:
        """The message line after a choice: one sentence a screen reader reads out, e.g. "Attempt 3
        of 30: you chose the left symbol, a red circle: +1." (``role="alert"``: the HTML widget
        replaces its content, and an alert is read when it appears), then ``note``."""
        attempt = self.attempt  # the choice just made is attempt number `attempt`
        sentence = (
            f"Attempt {attempt} of {self.attempts}: you chose the {('left', 'right')[side]} {self.item_name}, "
            f"<b>{what}</b>: <b>{reward}</b>."
        )
        self.message.value = f'<div role="alert" style="line-height: 1.4">{sentence}{note}</div>'

    def _render_game_over(self, best: int, well_played: str) -> None:
        """The end screen: final score out of ``best``, buttons disabled, and ``well_played``
        appended to the message (or a note that the game played itself)."""
        self.stage.value = self.keys_help.value = ""
        self.left.disabled = self.right.disabled = True
        # self.keys stays as it is: ipyevents takes the page's keys only while the pointer is over
        # the game (the finished game ignores them) and gives them back when it leaves. Changing
        # its watched_events or closing it now would leave its page-wide listener behind for good.
        self.message.value += (
            f"<br><b>Well played!</b> {well_played}<br><small>{KEYS_BACK}</small>"
            if not self.autoplayed
            else "<br><i>Nobody could click here, so the game played itself at random.</i>"
        )
        # The status line changes last, so "Game over" means the rest of the screen is final.
        self.status.value = f"<b>Game over</b> &nbsp;·&nbsp; total reward: <b>{self.score}</b> of {best} possible"

    def _build_widgets(self, prefix: str, prompt: str) -> None:
        """The game's box: status line, stage, Left/Right buttons, message. Each part gets a CSS
        class ``{prefix}-status``, ``-left``, ``-right``, ``-message``, ``-keys-help`` (the browser
        tests find them by it), the box the class ``{prefix}``; clicks go to
        ``self._on_click(button)``, key presses over the box (``self.keys``) to ``self._on_key``."""
        import ipywidgets as widgets
        from ipyevents import Event

        # A button's name is its text ("Left"); the tooltip (its title, which screen readers read
        # as its description) says what it picks and which keys do the same.
        self.left, self.right = (
            widgets.Button(description=side.title(), icon=f"arrow-{side}", button_style="info", tooltip=tooltip)
            for side, tooltip in (
                ("left", f"Choose the left {self.item_name} (key ← or L)"),
                ("right", f"Choose the right {self.item_name} (key → or R)"),
            )
        )
        self.stage = widgets.HTML()
        self.status = widgets.HTML()
        self.message = widgets.HTML(f"<b>{prompt}</b>")
        self.keys_help = widgets.HTML(f'<div style="line-height: 1.4; font-size: 0.85em">{KEYS_HELP}</div>')
        parts = (("left", self.left), ("right", self.right), ("status", self.status), ("message", self.message))
        for part, widget in (*parts, ("keys-help", self.keys_help)):
            widget.add_class(f"{prefix}-{part}")
        self.left.on_click(self._on_click)
        self.right.on_click(self._on_click)
        self.widget = widgets.VBox(
            [self.status, self.stage, widgets.HBox([self.left, self.right]), self.message, self.keys_help],
            layout=widgets.Layout(border="1px solid #ccc", padding="8px", width="360px"),
        )
        self.widget.add_class(prefix)
        self.keys = Event(source=self.widget, watched_events=["keydown"])
        self.keys.on_dom_event(self._on_key)

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

    #: Seconds ``play`` gives the front-end to answer its ``FrontEndProbe`` (or to deliver a click)
    #: before it decides that clicks cannot arrive while the cell runs.
    probe_timeout: float = _probe_timeout_from_env()

    def play(self, block: bool = True, timeout: float = 30 * 60):
        """Show the game; with ``block`` wait until it ends (at most ``timeout`` seconds), so "Run all"
        stops here and the next cells see the player's choices.

        When nobody can click (``course_utils.headless()``: CI, nbgrader, nbmake), the game plays
        itself instead, through its own buttons, and returns at once. Where the front-end cannot
        deliver clicks while a cell runs (no answer to a ``FrontEndProbe`` and no click within
        ``probe_timeout`` seconds), ``play`` says so and returns; so does ``block=False``. Then
        ``results()`` raises ``GameNotFinished``, saying what to do, until the game is over.
        """
        self.show()
        if headless():
            return self.autoplay(seed=0)
        self._probe = FrontEndProbe()
        if not block or not self._wait_for_player(timeout):
            self.waiting = not self.done
            if block and self.waiting:
                print(NO_CLICKS_WHILE_RUNNING)
        if self._probe.answered or self.done:
            self._probe.close()
        return self

    def _wait_for_player(self, timeout: float) -> bool:
        """Process the front-end's messages until the game ends or ``timeout`` seconds pass. False
        when the front-end shows no sign of delivering them (see ``probe_timeout``)."""
        with contextlib.ExitStack() as stack:
            try:
                from jupyter_ui_poll import ui_events

                poll = stack.enter_context(ui_events())
            except Exception:  # no kernel to poll (a plain Python or terminal IPython session)
                return False
            start = time.monotonic()
            while not self.done and time.monotonic() - start < timeout:
                poll(10)
                if self.attempt == 0 and not self._probe.answered and time.monotonic() - start > self.probe_timeout:
                    return False
                time.sleep(0.05)
        if not self.done:
            self.message.value += (
                f"<br>Stopped waiting after {timeout / 60:.0f} minutes; the next cells use the attempts made so far."
            )
        return True

    def _require_finished(self) -> None:
        """Raise ``GameNotFinished`` with what to do if ``play`` returned before the game ended."""
        if not self.waiting or self.done:
            return
        if self.attempt == 0 and self._probe is not None and not self._probe.answered:
            raise GameNotFinished(
                "No click has reached the game yet, and this front-end has not answered the game's widgets: "
                "it may not show them. Open the notebook in JupyterLab or Jupyter Notebook 7 to play, or call "
                "the game's autoplay() to let it play itself at random; then run this cell again."
            )
        raise GameNotFinished(
            f"The game above is not finished: {self.attempt} of {self.attempts} attempts played. Finish it, "
            "then run this cell again (or call the game's autoplay() to play the rest at random)."
        )
