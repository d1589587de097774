"""The grading verdict of an answer, as the grader reaches it: the answer driven on the hidden
cases, its record shown as a hidden-test cell shows it, and judged by ``judging`` (for the tests
that compare it with the check cell's verdict)."""

from __future__ import annotations

import json

from course_admin.grading import judging
from course_utils import records


def record_output(grade_id: str, record: str, measured=None) -> dict:
    """The display output a hidden-test cell leaves for the record text ``record`` (and what the
    grader's runner measured of its speed part)."""
    payload = json.dumps({"grade_id": grade_id, "record": record, "measured": measured})
    return {"output_type": "display_data", "metadata": {}, "data": {records.RECORD_MIME: payload}}


def measured_apart(exercise, *answers, timeout: float = 120.0) -> dict:
    """The speed part of ``exercise`` (``checking.Timed``) timed as the grader's runner times it
    (``timed_steps.measure``), in a forked child of this process that runs the hidden cell's
    ``submit`` (no sandbox: the tests' answers are the tests' own)."""
    import os

    from course_admin.grading import timed_steps
    from course_utils import checking

    to_child, steps_fd = os.pipe()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 0
        try:
            os.close(read_end)
            os.close(steps_fd)
            with os.fdopen(write_end, "wb") as out:
                checking.TIMED_APART = timed_steps.Steps(to_child, out)
                exercise.submit(*answers)
        except BaseException:  # noqa: BLE001
            code = 1
        os._exit(code)
    os.close(write_end)
    os.close(to_child)
    return timed_steps.measure(pid, read_end, steps_fd, exercise.timed, exercise.cases_for(True), timeout)


def graded(exercise, *answers) -> tuple[bool, str]:
    """(passed, message) of the grader for ``answers`` on ``exercise``'s hidden cases."""
    measured = measured_apart(exercise, *answers) if exercise.timed is not None else None
    output = record_output(exercise.grade_id, exercise.record(*answers, hidden=True), measured)
    return judging.judge_outputs(exercise.grade_id, [output])


def not_yet(check, *answers, **options) -> str:
    """What a check cell prints for ``answers`` that do not pass ``check`` (the test fails if they pass)."""
    import contextlib
    import io

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        passed = check(*answers, **options)
    assert passed is False, printed.getvalue()
    return printed.getvalue()
