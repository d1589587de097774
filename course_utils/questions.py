"""Questions in the notebooks that are not graded by code: concept checks (multiple-choice or
numeric) and Think! answers.

A **concept check** is a multiple-choice question with instant feedback: pick an option and
the notebook says at once whether it is right and why (each option carries its own
explanation). Without a front-end (CI, nbgrader) it prints the question and its options.

A **numeric question** is a concept check answered with a number the student works out by hand
and types in (``3``, ``0.62`` or ``1/3``): it is right within a stated tolerance. A wrong number
that a known misconception leads to gets its own explanation, like a wrong option; any other
wrong number gets a hint that does not give the answer away, and text that is not a number a
"Try again" that says why. Without a front-end it prints the question, like a concept check.

A **Think! question** is answered in words. Ungraded ones are answered in a code cell, as a
string, and ``reveal(answer, model)`` shows the model answer once the student has written
something (at least ``MIN_WORDS`` words): first think, then compare. Think! questions graded by
hand are answered in a markdown cell that formgrader shows the instructor; their model answers
are only in the instructor's notebook, so they never reach students before grading.

Each tutorial keeps its own questions next to its code (``course_utils/<tutorial>/questions.py``)
as ``ConceptCheck``, ``NumericQuestion`` and ``ThinkQuestion`` objects; the notebooks show them
with ``.show()``.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from fractions import Fraction

MIN_WORDS = 8
PROMPT = ("Write your answer in the string above (a few sentences: at least {n} words), then run this cell "
          "again to compare it with a model answer.")


@dataclass(frozen=True)
class Option:
    """One choice of a concept check: its text, whether it is right, and why (or why not)."""

    text: str
    correct: bool
    why: str


@dataclass(frozen=True)
class ConceptCheck:
    """A multiple-choice question with instant feedback; exactly one option is right."""

    question: str
    options: tuple[Option, ...]

    def __post_init__(self):
        right = [o for o in self.options if o.correct]
        if len(right) != 1 or len(self.options) < 2:
            raise ValueError(f"A concept check needs at least two options and exactly one right one: "
                             f"{self.question!r} has {len(right)} right of {len(self.options)}.")

    def feedback(self, index: int) -> str:
        """What the student reads after picking option ``index`` (0-based)."""
        if not 0 <= index < len(self.options):
            raise ValueError(f"Pick an option from 0 to {len(self.options) - 1}, not {index}.")
        option = self.options[index]
        return f"{'Right' if option.correct else 'Not quite'}: {option.why}"

    def text(self) -> str:
        """The question and its lettered options, as plain text."""
        lines = [self.question] + [f"  ({chr(97 + i)}) {o.text}" for i, o in enumerate(self.options)]
        return "\n".join(lines)

    def show(self):
        """Display the question with one button per option and a line for the feedback.

        Returns the widget (or None where no front-end can show widgets: then it prints)."""
        from course_utils.runtime import headless

        if headless():
            print(self.text())
            print("(Pick an option in JupyterLab to see whether it is right.)")
            return None
        import ipywidgets as widgets
        from IPython.display import display

        buttons = [widgets.Button(description=f"({chr(97 + i)})", tooltip=o.text,
                                  layout=widgets.Layout(width="auto"))
                   for i, o in enumerate(self.options)]
        rows = [widgets.HBox([b, widgets.Label(o.text)]) for b, o in zip(buttons, self.options, strict=True)]
        answer = widgets.HTML(value="")
        answer.add_class("course-concept-feedback")

        def picked(index):
            def handler(_button):
                answer.value = _escape(self.feedback(index))
                for i, button in enumerate(buttons):
                    button.button_style = ("success" if self.options[i].correct else "danger") if i == index else ""
            return handler

        for i, button in enumerate(buttons):
            button.on_click(picked(i))
        box = widgets.VBox([widgets.HTML(value=f"<b>Concept check.</b> {_escape(self.question)}"), *rows, answer])
        display(box)
        return box


@dataclass(frozen=True)
class Mistake:
    """A wrong number that a known misconception leads to, and what to tell the student who types it."""

    value: float
    why: str


@dataclass(frozen=True)
class NumericQuestion:
    """A concept check answered with a number: right within ``tolerance`` of ``answer``.

    ``why`` explains the right number; each of ``mistakes`` explains one wrong number (a
    misconception's result); ``hint`` answers any other wrong number without giving the answer."""

    question: str
    answer: float
    tolerance: float
    why: str
    hint: str
    mistakes: tuple[Mistake, ...] = ()

    def __post_init__(self):
        if not (math.isfinite(self.answer) and self.tolerance > 0):
            raise ValueError(f"A numeric question needs a finite answer and a positive tolerance: "
                             f"{self.question!r} has {self.answer!r} within {self.tolerance!r}.")
        # a mistake that counts as right (or as another mistake) would contradict its own feedback
        values = [self.answer] + [m.value for m in self.mistakes]
        for i, a in enumerate(values):
            for b in values[i + 1:]:
                if abs(a - b) <= 2 * self.tolerance:
                    raise ValueError(f"{self.question!r}: the answer and the mistakes must be more than twice the "
                                     f"tolerance apart, but {a!r} and {b!r} are not.")

    def is_right(self, value) -> bool:
        """Whether ``value`` (a number or the text the student typed) is within the tolerance."""
        try:
            return abs(parse_number(value) - self.answer) <= self.tolerance
        except ValueError:
            return False

    def feedback(self, value) -> str:
        """What the student reads after typing ``value``: a number, or text such as ``"0.5"`` or ``"1/3"``."""
        try:
            number = parse_number(value)
        except ValueError as error:
            return f"Try again: {error}"
        if abs(number - self.answer) <= self.tolerance:
            return f"Right: {self.why}"
        for mistake in self.mistakes:
            if abs(number - mistake.value) <= self.tolerance:
                return f"Not quite: {mistake.why}"
        return f"Not quite: {self.hint}"

    def text(self) -> str:
        """The question and how its answer is checked, as plain text."""
        return f"{self.question}\n  (Type a number; within {self.tolerance:g} of the right one counts as right.)"

    def show(self):
        """Display the question with a box to type a number in, a Check button and a line for the
        feedback (Enter checks too).

        Returns the widget (or None where no front-end can show widgets: then it prints)."""
        from course_utils.runtime import headless

        if headless():
            print(self.text())
            print("(Type your answer in JupyterLab to see whether it is right.)")
            return None
        import ipywidgets as widgets
        from IPython.display import display

        # text, not a FloatText: a number box turns "1/3" or "0,5" silently into some other number
        entry = widgets.Text(placeholder="a number, e.g. 0.25 or 1/4", continuous_update=False,
                             layout=widgets.Layout(width="16em"))
        button = widgets.Button(description="Check", layout=widgets.Layout(width="auto"))
        answer = widgets.HTML(value="")
        answer.add_class("course-concept-feedback")

        def check(_event=None):
            answer.value = _escape(self.feedback(entry.value))
            button.button_style = "success" if self.is_right(entry.value) else "danger"

        button.on_click(check)
        entry.observe(check, names="value")  # the value changes when the student presses Enter
        box = widgets.VBox([widgets.HTML(value=f"<b>Concept check.</b> {_escape(self.question)}"),
                            widgets.HBox([entry, button]), answer])
        display(box)
        return box


def parse_number(value) -> float:
    """The finite number in ``value``: an int or float, or text such as ``"3"``, ``"-0.62"``,
    ``"1e-3"`` or ``"1/3"``. Raises ValueError with a message for the student otherwise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real | str):
        raise ValueError(f"a number is needed, such as 0.25 or 1/4, not a {type(value).__name__}.")
    if isinstance(value, str):
        # spaces go ("1 / 3"), and so does a minus sign pasted from the notebook's maths
        text = "".join(value.split()).replace("\u2212", "-")
        if not text:
            raise ValueError("nothing typed yet: type a number, such as 0.25 or 1/4.")
        if "," in text:
            raise ValueError(f"{text!r} is not a number here: write decimals with a point, {text.replace(',', '.')}.")
        try:
            value = Fraction(text)  # exact for "1/3" and "0.1" alike; refuses "nan", "inf" and words
        except (ValueError, ZeroDivisionError):
            raise ValueError(f"{text!r} is not a number: type one such as 0.25 or 1/4.") from None
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{number} is not a finite number.")
    return number


@dataclass(frozen=True)
class ThinkQuestion:
    """A Think! question answered in words, with a model answer shown after the student's own."""

    question: str
    model_answer: str

    def reveal(self, answer: str) -> bool:
        """Print the model answer if ``answer`` has at least ``MIN_WORDS`` words; otherwise ask for
        an answer first. Returns whether the model answer was shown."""
        if not isinstance(answer, str):
            raise TypeError(f"Write your answer as a string (between the triple quotes), not a {type(answer).__name__}.")
        if len(answer.split()) < MIN_WORDS:
            print(PROMPT.format(n=MIN_WORDS))
            return False
        print("Your answer is saved in the notebook. A model answer to compare it with:\n")
        print(self.model_answer)
        return True


def _escape(text: str) -> str:
    import html

    return html.escape(text)
