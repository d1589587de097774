"""Judging hidden tests in the grader's process, where student code cannot reach.

In a graded notebook, each exercise's hidden-test cell only drives the student's answer on the
hidden cases and shows what came back as a record (``checking.Exercise.submit``). After the
notebook has run, ``JudgeRecords`` (an nbgrader preprocessor, placed after execution and before
``SaveAutoGrades``) reads each record in this process, judges it against the course's own
answer driven here on the same cases (``reference_record``), and replaces the cell's outputs
with the verdict alone: an error output (0 points in nbgrader) with the reason, or one line
saying it passed. Whatever the student's code printed, patched or returned in the kernel, only
the record's plain data reaches the judging, and the expected values never enter the kernel.

``write_check_records`` stores the course's records on the public cases in the package's assets
(``checking.CHECK_RECORDS``) for the student's check cells; ``course release`` writes them and
``course release --check`` fails when they are stale (``stale_check_records``).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import io
import json
import re
from pathlib import Path
from typing import NamedTuple

from nbconvert.preprocessors import Preprocessor
from nbformat.notebooknode import NotebookNode
from traitlets import Bool

from course_admin import stored_json
from course_admin.exercises import GRADED
from course_admin.grading import hidden_cases, synthetic_exercises
from course_admin.grading.cells import nbgrader_meta
from course_utils import records
from course_utils.checking import CHECK_RECORDS, Exercise, outcome
from course_utils.paths import ASSETS

hidden_cases.install()  # the grader drives the course's answers on the hidden cases, and judges on them

NOT_YET = "NotYet"
"""The ``ename`` of a judged test cell that failed (nbgrader gives an error output 0 points)."""


def exercise_for(grade_id: str) -> Exercise | None:
    """The ``Exercise`` a hidden-test cell grades, or None (a written answer, an unknown cell):
    the course's (``exercises.GRADED``), then the synthetic assignment's (``synthetic_exercises``)."""
    cell = next((cell for cell in GRADED if cell.grade_id == grade_id), None)
    if cell is None:
        return synthetic_exercises.EXERCISES.get(grade_id)
    if cell.check is None:
        return None
    module = importlib.import_module(cell.check.split(":")[0])
    return getattr(module, "EXERCISES", {}).get(grade_id)


def exercises() -> list[Exercise]:
    """Every course exercise judged from records, in the order of the exercise index."""
    found = (exercise_for(cell.grade_id) for cell in GRADED)
    return [exercise for exercise in found if exercise is not None]


@functools.cache
def _reference_text(grade_id: str, hidden: bool) -> str:
    exercise = exercise_for(grade_id)
    tutorial = next((cell.tutorial for cell in GRADED if cell.grade_id == grade_id), None)
    solutions = importlib.import_module(f"course_admin.{tutorial}.solutions") if tutorial else synthetic_exercises
    answers = [getattr(solutions, name) for name in exercise.reference]
    with contextlib.redirect_stdout(io.StringIO()):
        return exercise.record(*answers, hidden=hidden)


def reference_record(grade_id: str, hidden: bool = True):
    """The course's own answer driven on the exercise's hidden (or public) cases, decoded anew
    on each call (computed once per process)."""
    return records.load(_reference_text(grade_id, hidden))


class Shown(NamedTuple):
    """What a hidden-test cell's record output holds: the record text, what the grader's runner
    measured from outside the answer's process (``drive_apart`` writes it beside the record, in
    place of anything the answer wrote there; None when nothing was measured), and the runner's
    notes on the answer's run (a course module or a setup-cell name it reached for and was not given)."""

    record: str
    measured: object
    notes: list[str]


def find_record(outputs: list, grade_id: str) -> Shown:
    """The record a hidden-test cell's ``outputs`` hold, read once; ``records.RecordError`` saying
    why there is none to judge (no record, several, or one for another cell)."""
    found = [
        output["data"][records.RECORD_MIME]
        for output in outputs
        if output.get("output_type") in ("display_data", "execute_result") and records.RECORD_MIME in output.get("data", {})
    ]
    if not found:
        errors = [f"{o.get('ename')}: {o.get('evalue')}" for o in outputs if o.get("output_type") == "error"]
        reason = f" It stopped at {errors[0][:300]}" if errors else ""
        raise records.RecordError(f"the hidden test left no record of your answer.{reason}")
    if len(found) > 1:
        raise records.RecordError(f"the hidden test cell shows {len(found)} records instead of one")
    text = "".join(found[0]) if isinstance(found[0], list) else found[0]
    try:
        payload = json.loads(text)
        grade_id_found, record = payload["grade_id"], payload["record"]
    except (ValueError, TypeError, KeyError, RecursionError):
        raise records.RecordError("the record could not be read") from None
    if grade_id_found != grade_id or type(record) is not str:
        raise records.RecordError(f"the record is for {str(grade_id_found)[:40]!r}, not for this cell")
    notes = payload.get("notes")
    notes = [str(note)[:500] for note in notes if type(note) is str][:10] if type(notes) is list else []
    return Shown(record, payload.get("measured"), notes)


def judge_outputs(grade_id: str, outputs: list) -> tuple[bool, str]:
    """Judge a hidden-test cell from its outputs: (passed, the message for the student)."""
    exercise = exercise_for(grade_id)
    try:
        shown = find_record(outputs, grade_id)
    except records.RecordError as problem:
        return False, f"{exercise.name}: not yet. {problem}"
    passed, message = outcome(exercise.name, lambda: exercise.judge_record(
        shown.record, reference_record(grade_id), hidden=True, measured=shown.measured))
    notes = [] if passed else shown.notes
    return passed, " ".join([message, *(f"Note: {note}." for note in notes)])


SUBMITS = re.compile(r"\.submit\(")
"""A hidden-test cell whose (instructor's) source submits a record; nbgrader has put the
instructor's source back into every graded cell before the notebook ran."""


class JudgeRecords(Preprocessor):
    """Judge every hidden-test cell that submits a record for an ``Exercise``, here; leave other
    cells (written answers, tests that judge in the kernel the old way) to nbgrader. The judged
    cell's outputs become the verdict alone."""

    enabled = Bool(True, help="judge the records (nbconvert preprocessors are off unless enabled)").tag(config=True)

    def preprocess_cell(self, cell, resources, index):
        meta = nbgrader_meta(cell)
        if cell.get("cell_type") != "code" or not meta.get("grade") or meta.get("solution"):
            return cell, resources
        grade_id = meta.get("grade_id", "")
        if exercise_for(grade_id) is None or not SUBMITS.search(cell.get("source", "")):
            return cell, resources
        try:
            passed, message = judge_outputs(grade_id, cell.get("outputs", []))
        except Exception as error:  # the grader's own failure must not stop the notebook
            passed, message = False, f"the grader could not judge this cell ({type(error).__name__}: {str(error)[:200]})"
        if passed:
            cell.outputs = [NotebookNode(output_type="stream", name="stdout", text=f"{message}\n")]
        else:
            cell.outputs = [NotebookNode(output_type="error", ename=NOT_YET, evalue=message, traceback=[message])]
        return cell, resources


# --------------------------------------------------------------------------------------
# The stored records for the check cells


def check_records() -> dict:
    """{grade_id: the course's record on the public cases (encoded)} for every judged exercise."""
    return {exercise.grade_id: json.loads(_reference_text(exercise.grade_id, False)) for exercise in exercises()}


def write_check_records(path: Path = ASSETS / CHECK_RECORDS) -> Path:
    return stored_json.write(path, check_records())


def stale_check_records(path: Path = ASSETS / CHECK_RECORDS) -> list[str]:
    """What ``course release`` would change in the stored records, a line per exercise (empty when
    up to date)."""
    return stored_json.stale(path, check_records())
