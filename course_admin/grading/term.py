"""The term file: one small TOML file the instructor keeps with the course (``grading/term.toml``).

It holds, per tutorial, the due date (and the LMS's name and id for the gradebook exports), per
student, extensions, the late policy, what feedback shows of the hidden tests, and the
similarity report's threshold. Every date without an offset is in the file's ``timezone``::

    timezone = "Europe/Berlin"

    [tutorials.02_colour_replay]
    due = 2026-10-20T23:59:00          # local time in `timezone` (or give an offset: 2026-10-20T23:59:00+02:00)
    title = "Colour replay"            # the LMS's name for the assignment (the Canvas column's name)
    canvas_id = 4242                   # Canvas's assignment id: the import updates that column

    [late]
    percent_per_day = 10               # of the raw score, per started day (24 h) after the due time
    max_percent = 50                   # the penalty never exceeds this...
    cutoff_days = 7                    # ...unless later than this: 0 points ("after the cut-off")
    grace_minutes = 5                  # an upload finishing this long after the due time is on time
    file_times = false                 # true: a plain folder's file times are the submission times

    [extensions]                       # student (roster id, login or e-mail) = { tutorial = new due date or days }
    "1003" = { 02_colour_replay = 2026-10-23T23:59:00 }
    jdoe = { 02_colour_replay = 2 }

    [feedback]
    hidden = "pass_fail"               # what feedback shows of hidden tests: "pass_fail", "hint" or "full"

    [similarity]
    threshold = 0.65                   # pairs where either answer shares this much of its code are listed

``read_term(path)`` reads it into a ``Term``; every mistake is a ``TermError`` that names the
key and says what to write instead.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

FEEDBACK_POLICIES = ("pass_fail", "hint", "full")


class TermError(ValueError):
    """A term file that cannot be used; the message names the key and what to write."""


@dataclass(frozen=True)
class LatePolicy:
    """How lateness costs: ``percent_per_day`` of the raw score per started day after the due
    time (past ``grace_minutes``), at most ``max_percent``; later than ``cutoff_days`` (None:
    no cut-off), 0 points. ``file_times``: trust a plain folder's file times."""

    percent_per_day: float = 0.0
    max_percent: float = 100.0
    cutoff_days: float | None = None
    grace_minutes: float = 0.0
    file_times: bool = False


@dataclass(frozen=True)
class Tutorial:
    """One tutorial's due date (aware) and its name and id in the LMS."""

    due: datetime | None = None
    title: str = ""
    canvas_id: str = ""


@dataclass
class Term:
    """The term file as read (``read_term``); ``Term()`` is a term with no dates and no policy."""

    timezone: str = "UTC"
    tutorials: dict[str, Tutorial] = field(default_factory=dict)
    late: LatePolicy = field(default_factory=LatePolicy)
    extensions: dict[str, dict[str, datetime | float]] = field(default_factory=dict)  # student -> tutorial -> due or days
    feedback: str = "pass_fail"
    similarity_threshold: float = 0.65
    path: Path | None = None

    @property
    def zone(self):
        return UTC if self.timezone == "UTC" else ZoneInfo(self.timezone)

    def check_tutorials(self, course: list[str], source) -> None:
        """``TermError`` when a tutorial of the file is not one of ``course`` (the notebooks in
        ``source``): its due date would meet no submission, and nobody would be late."""
        unknown = sorted(set(self.tutorials) - set(course))
        if unknown:
            raise TermError(f"the term file {self.path} has [tutorials.{unknown[0]}], which is not a tutorial of the "
                            f"course ({', '.join(course)}: the notebooks in {source}): write one of these names")

    def due(self, tutorial: str, students: list[str]) -> tuple[datetime | None, str]:
        """The due time of ``tutorial`` for the student known by any of ``students`` (ids,
        login, e-mail), and a note when an extension moved it."""
        base = self.tutorials.get(tutorial, Tutorial()).due
        for student in students:
            extension = self.extensions.get(student, {}).get(tutorial)
            if extension is None:
                continue
            if isinstance(extension, datetime):
                return extension, f"extension to {extension.isoformat(sep=' ', timespec='minutes')}"
            if base is None:
                return None, f"an extension of {extension:g} day{'' if extension == 1 else 's'}, but {tutorial} has no due date"
            return base + timedelta(days=float(extension)), f"extension of {extension:g} day{'' if extension == 1 else 's'}"
        return base, ""


def _when(value, zone, where: str) -> datetime:
    """A TOML date-time (or ISO string) as an aware datetime; local ones in ``zone``; a date
    alone is the end of that day."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip())
        except ValueError:
            raise TermError(f"{where} = {value!r} is not a date: write it as 2026-10-20T23:59:00") from None
    if isinstance(value, datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=zone)
    if isinstance(value, date):
        return datetime.combine(value, time(23, 59, 59), tzinfo=zone)
    raise TermError(f"{where} = {value!r} is not a date: write it as 2026-10-20T23:59:00")


def _number(table: dict, key: str, where: str, default, low: float = 0.0, high: float | None = None):
    value = table.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < low or (high is not None and value > high):
        bounds = f"between {low:g} and {high:g}" if high is not None else f"{low:g} or more"
        raise TermError(f"{where}.{key} = {value!r}: write a number {bounds}")
    return float(value)


def read_term(path: str | Path) -> Term:
    """The term file at ``path``; ``TermError`` saying what to fix otherwise."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise TermError(f"cannot read the term file {path}: {error.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise TermError(f"the term file {path} is not valid TOML ({error}): see the example in the README") from None
    known = {"timezone", "tutorials", "late", "extensions", "feedback", "similarity"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise TermError(f"the term file {path} has unknown keys {unknown}: the keys are {sorted(known)}")
    name = data.get("timezone", "UTC")
    try:
        zone = ZoneInfo(name) if name != "UTC" else UTC
    except (ZoneInfoNotFoundError, ValueError):
        raise TermError(f"timezone = {name!r} is not a time zone: write one like \"Europe/Berlin\" or \"UTC\"") from None
    tutorials = {}
    for tutorial, table in data.get("tutorials", {}).items():
        if not isinstance(table, dict):
            raise TermError(f"tutorials.{tutorial} must be a table: [tutorials.{tutorial}] with due = ...")
        due = _when(table["due"], zone, f"tutorials.{tutorial}.due") if "due" in table else None
        tutorials[tutorial] = Tutorial(due, str(table.get("title", "")), str(table.get("canvas_id", "")))
    late = data.get("late", {})
    policy = LatePolicy(
        percent_per_day=_number(late, "percent_per_day", "late", 0.0, high=100.0),
        max_percent=_number(late, "max_percent", "late", 100.0, high=100.0),
        cutoff_days=_number(late, "cutoff_days", "late", None),
        grace_minutes=_number(late, "grace_minutes", "late", 0.0),
        file_times=bool(late.get("file_times", False)),
    )
    extensions: dict[str, dict] = {}
    for student, table in data.get("extensions", {}).items():
        if not isinstance(table, dict):
            raise TermError(f"extensions.{student} must be a table: {student!r} = {{ 02_colour_replay = 2 }}")
        extensions[str(student)] = {}
        for tutorial, value in table.items():
            where = f"extensions.{student}.{tutorial}"
            if isinstance(value, int | float) and not isinstance(value, bool):
                extensions[str(student)][tutorial] = float(value)
            else:
                extensions[str(student)][tutorial] = _when(value, zone, where)
            if tutorials and tutorial not in tutorials:
                raise TermError(f"{where}: {tutorial!r} is not a tutorial of the term ({', '.join(sorted(tutorials))})")
    hidden = data.get("feedback", {}).get("hidden", "pass_fail")
    if hidden not in FEEDBACK_POLICIES:
        raise TermError(f"feedback.hidden = {hidden!r}: write one of {', '.join(FEEDBACK_POLICIES)}")
    threshold = _number(data.get("similarity", {}), "threshold", "similarity", 0.65, high=1.0)
    return Term(name, tutorials, policy, extensions, hidden, threshold, path)
