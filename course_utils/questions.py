"""Questions in the notebooks that are not graded by code: concept checks and Think! answers.

A **concept check** is a multiple-choice question with instant feedback: pick an option and
the notebook says at once whether it is right and why (each option carries its own
explanation). Without a front-end (CI, nbgrader) it prints the question and its options.

A **Think! question** is answered in words. Ungraded ones are answered in a code cell, as a
string, and ``reveal(answer, model)`` shows the model answer once the student has written
something (at least ``MIN_WORDS`` words): first think, then compare. Think! questions graded by
hand are answered in a markdown cell that formgrader shows the instructor; their model answers
are only in the instructor's notebook, so they never reach students before grading.

Each tutorial keeps its own questions next to its code (``course_utils/<tutorial>/questions.py``)
as ``ConceptCheck`` and ``ThinkQuestion`` objects; the notebooks show them with ``.show()``.
"""

from __future__ import annotations

from dataclasses import dataclass

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
