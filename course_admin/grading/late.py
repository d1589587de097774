"""How late each submission was, and what that costs under the term's late policy.

When a submission was handed in comes from, in this order:

1. a submission-times file the instructor exports (``--times``): a CSV with the student's id
   (``ID``, ``user_id``, ``id``, ``login``...) and Canvas's ``submitted_at`` (ISO 8601, UTC), or
   Moodle's grading worksheet (``Identifier``, ``Last modified (submission)``, written in the
   exporting user's time zone, read in the term's). The LMS recorded these when the student
   submitted: they are the times to trust.
2. the file's own modification time, only for a plain folder and only when the term says
   ``file_times = true`` (a collection the instructor controls that keeps files as received).
   Never for Canvas or Moodle downloads: Canvas dates its zip entries when the zip is made,
   and neither LMS promises the upload time there.
3. nothing: the row says the time is unknown. A Canvas ``_LATE_`` flag without a time says
   "late per Canvas, how late unknown" and no penalty is applied (there is no number of days
   to apply it for); export the times to apply one.

``assess(...)`` returns a ``Lateness`` per submission: the due time used (extensions included),
the submission time and where it came from, how late, the penalty and the final score. The
raw score is never changed: every row shows raw, lateness, penalty and final.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from course_admin.grading.roster import column, participant_number, read_export, unprotect
from course_admin.grading.term import Term

MOODLE_FORMATS = ("%A, %d %B %Y, %I:%M %p", "%A, %B %d, %Y, %I:%M %p", "%A, %d %B %Y, %H:%M")
"""Moodle's ``strftimedatetime`` in its English packs (UK, then US order), and a 24-hour one."""

ID_COLUMNS = ("id", "user_id", "user id", "canvas user id", "identifier", "login", "sis login id", "sis user id",
              "email address", "email")
TIME_COLUMNS = ("submitted_at", "submitted at", "last modified (submission)", "submission time", "submitted")


class TimesError(ValueError):
    """A submission-times file that cannot be used; the message says what to export instead."""


@dataclass
class Lateness:
    """One row's lateness. ``late_by`` is None when not known; ``penalty_percent`` is of the
    raw score; ``final`` is the score after the penalty."""

    due: datetime | None = None
    submitted: datetime | None = None
    time_source: str = ""
    late_by: timedelta | None = None
    penalty_percent: float = 0.0
    final: float = 0.0
    note: str = ""

    def late_text(self) -> str:
        """``late_by`` for a row: "on time", "2 d 3 h 5 min", or "unknown"."""
        if self.late_by is None:
            return "unknown" if self.due is not None else ""
        if self.late_by <= timedelta(0):
            return "on time"
        minutes = math.ceil(self.late_by.total_seconds() / 60)
        days, rest = divmod(minutes, 24 * 60)
        hours, minutes = divmod(rest, 60)
        parts = (f"{days} d" * bool(days), f"{hours} h" * bool(hours), f"{minutes} min" * bool(minutes))
        return " ".join(part for part in parts if part)


def parse_time(text: str, zone) -> datetime | None:
    """An LMS's time as an aware datetime: ISO 8601 (Canvas's ``submitted_at``; no offset: in
    ``zone``) or Moodle's ``Monday, 19 October 2026, 9:15 PM`` (in ``zone``); None for "" or "-"."""
    text = (text or "").strip()
    if text in ("", "-"):
        return None
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        cleaned = re.sub(r"\s+", " ", text)
        for fmt in MOODLE_FORMATS:
            try:
                when = datetime.strptime(cleaned, fmt)
                break
            except ValueError:
                continue
        else:
            raise TimesError(f"{text!r} is not a time this grader reads: export ISO 8601 times (Canvas's submitted_at)"
                             " or Moodle's worksheet in English") from None
    return when if when.tzinfo is not None else when.replace(tzinfo=zone)


def read_times(path: str | Path, zone, tutorial: str | None = None) -> dict[tuple[str, str | None], datetime]:
    """{(student id, tutorial or None): submission time} from a times CSV. The tutorial comes
    from an ``assignment`` column, else ``tutorial`` (``--times TUTORIAL=FILE``), else None
    (the file's times apply to whichever tutorial the run grades, when it grades one)."""
    path = Path(path)
    header, rows = read_export(path, TimesError, "the submission-times file", "is not UTF-8: export the CSV again as UTF-8")
    ids = [header.index(c) for c in ID_COLUMNS if c in header]
    at = column(header, TIME_COLUMNS)
    if not ids or at is None:
        raise TimesError(f"the submission-times file {path} needs a student id column ({', '.join(ID_COLUMNS[:3])}...) and a"
                         f" time column (submitted_at, or Moodle's 'Last modified (submission)'); found {rows[0][:8]}")
    assignment = column(header, ("assignment",))
    times = {}
    for row in rows[1:]:
        if len(row) <= at:
            continue
        when = parse_time(row[at], zone)
        if when is None:
            continue
        which = row[assignment].strip() if assignment is not None and assignment < len(row) else tutorial
        for i in ids:
            value = unprotect(row[i]) if i < len(row) else ""
            if header[i] == "identifier":
                value = participant_number(value)
            if value:
                times[(value, which)] = when
    return times


def lookup(times: dict, students: list[str], tutorial: str, only_tutorial: bool) -> datetime | None:
    """The time recorded for any of ``students``' ids for ``tutorial`` (or, when the run grades
    only that tutorial, a time with no tutorial)."""
    for student in students:
        if (student, tutorial) in times:
            return times[(student, tutorial)]
    if only_tutorial:
        for student in students:
            if (student, None) in times:
                return times[(student, None)]
    return None


def assess(raw: float, due: datetime | None, submitted: datetime | None, time_source: str, term: Term,
           late_flag: bool = False, due_note: str = "") -> Lateness:
    """The ``Lateness`` of one graded submission with raw score ``raw``."""
    policy = term.late
    out = Lateness(due, submitted, time_source, final=raw)
    notes = [due_note] if due_note else []
    if submitted is None:
        if late_flag:
            notes.append("late per Canvas's flag; how late is unknown without submission times (--times): no penalty applied")
        elif due is not None:
            notes.append("no submission time (export them: --times): no penalty applied")
        out.note = "; ".join(notes)
        return out
    if due is None:  # said only when there is a term file that could have given one
        out.note = "; ".join(notes + ["no due date for this tutorial in the term file"] * (term.path is not None))
        return out
    out.late_by = submitted - due
    over = out.late_by - timedelta(minutes=policy.grace_minutes)
    if over > timedelta(0):
        days = math.ceil(over / timedelta(days=1))
        if policy.cutoff_days is not None and out.late_by > timedelta(days=policy.cutoff_days):
            out.penalty_percent = 100.0
            notes.append(f"after the {policy.cutoff_days:g}-day cut-off: 0 points")
        else:
            out.penalty_percent = min(policy.max_percent, policy.percent_per_day * days)
            notes.append(f"{days} started day{'s' * (days > 1)} late: {out.penalty_percent:g}% off")
    elif late_flag:
        notes.append("Canvas flagged it late, but by the term's due date and extensions it is on time")
    out.final = round(raw * (1 - out.penalty_percent / 100), 4)
    out.note = "; ".join(notes)
    return out


def time_text(when: datetime | None, zone) -> str:
    """``when`` for a CSV cell: ISO 8601 in the term's time zone, to the minute, with its
    offset ("" when None)."""
    return when.astimezone(zone).isoformat(timespec="minutes") if when else ""


def file_time(mtime: float) -> datetime:
    """A file's modification time (seconds since the epoch) as an aware datetime."""
    return datetime.fromtimestamp(mtime, tz=UTC)


def read_all_times(specs: list[str], term, class_list, tutorials: list[str]) -> dict:
    """Every submission time given: the ``--times`` files (``PATH`` or ``TUTORIAL=PATH``), then a
    Moodle worksheet used as the roster (its ``Last modified (submission)``)."""
    found: dict = {}
    for spec in specs:
        tutorial, sep, path = str(spec).partition("=")
        if sep and tutorial not in tutorials and not Path(spec).exists():
            raise TimesError(f"--times {spec}: {tutorial!r} is not a tutorial of the course ({', '.join(tutorials)}): "
                             "write TUTORIAL=FILE with one of them, or FILE alone")
        if not sep or tutorial not in tutorials:
            tutorial, path = None, str(spec)
        for key, when in read_times(path, term.zone, tutorial).items():
            found.setdefault(key, when)
    if class_list is not None and class_list.source == "moodle":
        for key, when in read_times(class_list.path, term.zone).items():
            found.setdefault(key, when)
    return found


def apply_term(submissions: list, missing: list, term, recorded: dict, class_list) -> list[str]:
    """Each row's ``Lateness`` (``assess``), on ``autograder``'s submissions (graded) and
    ``missing`` rows (roster students with no submission); what in the term matched no student."""
    from course_admin.grading.lms_layout import PLAIN, submission_entry

    entries = class_list.by_key() if class_list is not None else {}
    graded = [s for s in submissions if s.assignment is not None]
    only = len({s.assignment for s in graded}) == 1
    known: set[str] = set()
    for sub in graded:
        entry = entries.get(sub.name)
        ids = [sub.name] + ([entry.lms_id, entry.participant, entry.login, entry.sis_id, entry.email] if entry else [])
        ids = [i for i in dict.fromkeys(ids) if i]
        known.update(ids)
        due, due_note = term.due(sub.assignment, ids)
        submitted, source = lookup(recorded, ids, sub.assignment, only), "the LMS's submission times"
        plain = submission_entry(sub).layout == PLAIN
        if submitted is None and term.late.file_times and plain and sub.mtime:
            submitted, source = file_time(sub.mtime), "the file's time (file_times = true)"
        sub.lateness = assess(sub.score, due, submitted, source if submitted else "", term, sub.late_flag, due_note)
    for row in missing:
        row.lateness = Lateness(final=0.0)
        entry = entries.get(row.name)
        known.update(i for i in ([row.name] + ([entry.login, entry.sis_id, entry.email] if entry else [])) if i)
    for sub in submissions:
        if sub.assignment is None and sub.lateness is None:
            sub.lateness = Lateness(final=0.0)
    return [f"the term file's extension for {student!r} matches no student of this run"
            for student in term.extensions if student not in known]
