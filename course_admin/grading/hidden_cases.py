"""Every exercise's hidden cases, which only the grader holds (``course_admin.<tutorial>.hidden_cases``):
``install`` gives them to ``course_utils.checking.HIDDEN_CASES`` in the grader's process (and the
oracles its judges need for them, the module's ``ORACLES``, to ``checking.ORACLES``), and
``encode`` turns one exercise's cases into the text ``drive_apart`` hands the process that drives a
submission's answer.

The student's package holds the public cases and the code that builds cases of each kind, not
the hidden inputs: a student cannot compute the hidden answers ahead (with the course's own code
in the notebook) and paste them, nor fit an answer to them."""

from __future__ import annotations

import base64
import functools
import importlib
import pickle

from course_admin.exercises import GRADED
from course_utils import checking


def _cases(tutorial: str, grade_id: str):
    # by name, when first asked for: grading imports no tutorial's code up front
    return importlib.import_module(f"course_admin.{tutorial}.hidden_cases").HIDDEN[grade_id]()


def _oracle(tutorial: str, grade_id: str):
    # the tutorial's oracle of the exercise (its ``ORACLES``), None where its judge needs none
    return getattr(importlib.import_module(f"course_admin.{tutorial}.hidden_cases"), "ORACLES", {}).get(grade_id)


def install() -> None:
    """Let every course ``Exercise`` in this process drive and judge its hidden cases: their inputs
    (``checking.HIDDEN_CASES``) and the oracles their judges' hints need (``checking.ORACLES``),
    each tutorial's loaded when one of its exercises first asks."""
    for cell in GRADED:
        if cell.check:
            checking.HIDDEN_CASES.setdefault(cell.grade_id, functools.partial(_cases, cell.tutorial, cell.grade_id))
            checking.ORACLES.setdefault(cell.grade_id, functools.partial(_oracle, cell.tutorial, cell.grade_id))


def every_tutorial() -> dict:
    """{grade id: a function returning its hidden cases}, from every tutorial."""
    tutorials = sorted({cell.tutorial for cell in GRADED})
    return {grade_id: cases for tutorial in tutorials
            for grade_id, cases in importlib.import_module(f"course_admin.{tutorial}.hidden_cases").HIDDEN.items()}


def encode(cases) -> str:
    """Cases as text for the drive runner's job (pickled: the cases keep their exact types, tuples
    and arrays included, so the answer is driven on what the grader judges)."""
    return base64.b64encode(pickle.dumps(cases, protocol=pickle.HIGHEST_PROTOCOL)).decode("ascii")
