"""The two exercises of the tiny synthetic assignment (``grading.synthetic``: ``add`` and
``square``) as ``Exercise``s, so that the grading tests and ``course bench grading`` can judge
them from records as the course's own exercises are judged (``grading.judging``).

This module sits outside ``grading/`` because the grading kernels drive these exercises, and a
kernel may not read that folder (``grading.kernel_restrictions``). ``add`` and ``square`` below
are the references the grader drives; they answer nothing in the course.
"""

from __future__ import annotations

from course_utils.checking import Exercise, Problem, attempt, raise_if_error
from course_utils.records import Opaque


def add(a, b):
    return a + b


def square(x):
    return x * x


def _judge(name: str):
    def judge(got: list, expected: list, cases: list) -> None:
        if len(got) != len(cases):
            raise Problem(f"the record holds {len(got)} cases instead of {len(cases)}.")
        for args, mine, reference in zip(cases, got, expected, strict=True):
            raise_if_error(mine)
            if isinstance(mine, Opaque) or type(mine) not in (int, float) or mine != reference:
                shown = mine.description if isinstance(mine, Opaque) else repr(mine)
                raise Problem(f"{name}{tuple(args)} gave {shown}, expected {reference!r}.")

    return judge


ADD = Exercise(
    name="add",
    grade_id="test_add",
    cases=lambda: [(1, 2), (0, 0)],
    hidden_cases=lambda: [(-1, 1), (7, 35), (2.5, 0.5)],
    drive=lambda cases, fn: [attempt("add", fn, *args) for args in cases],
    judge=_judge("add"),
    reference=("add",),
)
SQUARE = Exercise(
    name="square",
    grade_id="test_square",
    cases=lambda: [(3,)],
    hidden_cases=lambda: [(-2,), (11,), (0.5,)],
    drive=lambda cases, fn: [attempt("square", fn, *args) for args in cases],
    judge=_judge("square"),
    reference=("square",),
)

EXERCISES = {exercise.grade_id: exercise for exercise in (ADD, SQUARE)}
"""The synthetic assignment's exercises by the grade id of their hidden-test cell."""

SUBMIT = {"test_add": "from course_admin.grading.synthetic_exercises import ADD\nADD.submit(add)",
          "test_square": "from course_admin.grading.synthetic_exercises import SQUARE\nSQUARE.submit(square)"}
"""The hidden part of each test cell when the synthetic notebook is judged from records."""
