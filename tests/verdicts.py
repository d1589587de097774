"""The grading verdict of an answer, as the grader reaches it: the answer driven on the hidden
cases, its record shown as a hidden-test cell shows it, and judged by ``judging`` (for the tests
that compare it with the check cell's verdict)."""

from __future__ import annotations

import json

from course_admin.grading import judging
from course_utils import records


def record_output(grade_id: str, record: str) -> dict:
    """The display output a hidden-test cell leaves for the record text ``record``."""
    payload = json.dumps({"grade_id": grade_id, "record": record})
    return {"output_type": "display_data", "metadata": {}, "data": {records.RECORD_MIME: payload}}


def graded(exercise, *answers) -> tuple[bool, str]:
    """(passed, message) of the grader for ``answers`` on ``exercise``'s hidden cases."""
    return judging.judge_outputs(exercise.grade_id, [record_output(exercise.grade_id, exercise.record(*answers, hidden=True))])


def not_yet(check, *answers, **options) -> str:
    """What a check cell prints for ``answers`` that do not pass ``check`` (the test fails if they pass)."""
    import contextlib
    import io

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        passed = check(*answers, **options)
    assert passed is False, printed.getvalue()
    return printed.getvalue()
