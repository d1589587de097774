"""The record a tutorial 4 drive writes, shared by its three checks (``checks``,
``checks_buffer``, ``checks_td``) and the TD loss's judge (``td_judge``).

A drive writes what the student's code did into a ``_Log``: an ordered dict of observations,
each named by the call that gave it (``"sum(0, 8)"``); the first call into student code that
fails is recorded as an error under its name and ends the drive, so the judge reads what the
answer did up to its first failure. The judge reads the observations back with ``_seen`` in the
same order (``_passed`` for a call recorded only when it fails).
"""

from __future__ import annotations

from course_utils.check_helpers import is_error
from course_utils.checking import Problem, attempt, raise_if_error
from course_utils.records import StudentError, encode


class _Stopped(Exception):
    """A call into student code failed: the drive ends here (its log holds the error)."""


class _Log:
    """What a drive saw, in order: {name: encoded value}."""

    def __init__(self):
        self.seen: dict = {}

    def call(self, name: str, what: str, fn, *args, keep: bool = True):
        """``attempt(what, fn, *args)``: the value (recorded under ``name`` if ``keep``); on an
        error, record it under ``name`` and stop the drive."""
        value = attempt(what, fn, *args)
        if is_error(value):
            self.seen[name] = value
            raise _Stopped
        if keep:
            self.seen[name] = encode(value)
        return value

    def each(self, name: str, calls: list) -> list:
        """Several calls ``(what, fn, *args)`` recorded as one list under ``name``."""
        values = [self.call(name, what, fn, *args, keep=False) for what, fn, *args in calls]
        self.seen[name] = encode(values)
        return values

    def note(self, name: str, value) -> None:
        self.seen[name] = encode(value)


def _drive_log(steps, *args) -> dict:
    """Run ``steps(log, *args)`` and return the log's observations (up to the first error)."""
    log = _Log()
    try:
        steps(log, *args)
    except _Stopped:
        pass
    return log.seen


def _seen(got, name: str, hint: str = ""):
    """The observation ``name`` of a decoded log; a ``Problem`` with the student's error (and
    ``hint``) where the drive stopped before or at it."""
    if type(got) is not dict:
        raise Problem("the record of your answer is not what the check writes (a damaged record).")
    if name in got:
        value = got[name]
        if isinstance(value, StudentError):
            raise Problem(f"{value.message} {hint}".strip())
        return value
    for value in got.values():
        raise_if_error(value)
    raise Problem("the record of your answer stops early.")


def _passed(got, name: str, hint: str = "") -> None:
    """A call recorded only when it fails (``keep=False``): its error, with ``hint``, if it failed."""
    if type(got) is dict and name in got:
        _seen(got, name, hint)
