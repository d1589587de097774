"""Grades as the LMS imports them, keyed by the roster's own ids.

``canvas_gradebook(rows, roster, term, path)`` writes Canvas's gradebook import CSV: Canvas's
own export columns ``Student, ID, SIS User ID, SIS Login ID, Section``, then one column per
tutorial named ``<title> (<Canvas assignment id>)`` (the term file's ``title`` and
``canvas_id``; without an id Canvas offers to create a new assignment of that name), a
``Points Possible`` row as Canvas's export has, and one row per roster student with the final
score (after the late penalty). Canvas finds each student by ``ID``.

``moodle_worksheet(rows, roster, term, tutorial, path)`` writes Moodle's offline grading
worksheet for one assignment (Moodle grades one assignment per upload): ``Identifier``
(``Participant <number>``, Moodle's key), ``Full name``, ``Email address``, ``Grade``,
``Maximum Grade`` and ``Last modified (grade)``, the three columns Moodle's importer requires
being ``Identifier``, ``Grade`` and ``Last modified (grade)``. The grade is scaled to the
worksheet's ``Maximum Grade`` when the roster is a worksheet (Moodle skips a grade above it).
``Last modified (grade)`` is carried over from that worksheet: Moodle skips a row whose grade
was changed in Moodle after that time, so a grade an instructor typed since the export is
never overwritten; without a worksheet it is now.

Students not on the roster are not written (the LMS has nobody to give them to): the summary
lists them. Key columns (Canvas's numeric ``ID``, Moodle's ``Participant <number>``) are
written exactly; names, sections and SIS fields get ``escaping.csv_cell``'s guard against
spreadsheet formulas (a SIS login ``-dash`` becomes ``'-dash``, which ``roster.read_roster``
reads back as ``-dash``; the row is still found by its ``ID``).
"""

from __future__ import annotations

import csv
import re
from datetime import datetime
from pathlib import Path

from course_admin.grading.escaping import csv_cell, plain_text
from course_admin.grading.roster import Roster
from course_admin.grading.term import Term

CANVAS_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
POINTS_POSSIBLE = "    Points Possible"  # Canvas's export writes it indented; its importer skips the row
MOODLE_COLUMNS = ["Identifier", "Full name", "Email address", "Grade", "Maximum Grade", "Last modified (grade)"]
MOODLE_TIME = "%A, %d %B %Y, %I:%M %p"  # Moodle's own (English) strftimedatetime: its importer reads it with strtotime
SAFE_KEY = re.compile(r"^(\d+|Participant \d+)$")


def _text(value: str) -> str:
    return csv_cell(plain_text(value))


def _key(value: str) -> str:
    return value if SAFE_KEY.match(value) else _text(value)


def _final(rows, student: str, tutorial: str) -> tuple[float, float] | None:
    """(final score, maximum) of ``student``'s row for ``tutorial``, or None if there is none."""
    for sub in rows:
        if sub.name == student and (sub.assignment or sub.missing_assignment) == tutorial:
            return sub.final, sub.max_score
    return None


def canvas_column(term: Term, tutorial: str) -> str:
    """The Canvas column a tutorial's grades go to: ``<title> (<id>)``, or the title alone."""
    info = term.tutorials.get(tutorial)
    title = (info.title if info and info.title else tutorial).replace("(", "[").replace(")", "]")
    return f"{title} ({info.canvas_id})" if info and info.canvas_id else title


def canvas_gradebook(rows, roster: Roster, term: Term, tutorials: list[str], path: Path) -> Path:
    """Canvas's gradebook import CSV for ``tutorials``, one row per roster student."""
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(CANVAS_COLUMNS + [canvas_column(term, t) for t in tutorials])
        maxima = []
        for tutorial in tutorials:
            found = [s.max_score for s in rows if (s.assignment or s.missing_assignment) == tutorial and s.max_score]
            maxima.append(f"{max(found):.2f}" if found else "")
        writer.writerow([POINTS_POSSIBLE, "", "", "", ""] + maxima)
        for entry in roster.entries:
            scores = [_final(rows, entry.key, tutorial) for tutorial in tutorials]
            writer.writerow([_text(entry.name), _key(entry.lms_id), _text(entry.sis_id), _text(entry.login),
                             _text(entry.section)] + ["" if s is None else f"{s[0]:.2f}" for s in scores])
    return path


def moodle_worksheet(rows, roster: Roster, term: Term, tutorial: str, path: Path, now: datetime | None = None) -> Path:
    """Moodle's grading worksheet for ``tutorial``, one row per roster student with a participant number."""
    stamp = (now or datetime.now(term.zone)).strftime(MOODLE_TIME).replace(" 0", " ")
    with path.open("w", newline="", encoding="utf-8-sig") as f:  # Moodle's own worksheets start with a BOM
        writer = csv.writer(f)
        writer.writerow(MOODLE_COLUMNS)
        for entry in roster.entries:
            if not entry.participant:
                continue
            found = _final(rows, entry.key, tutorial)
            top = _float(_column(entry.extra, "maximum grade"))
            if found is None:
                grade = ""
            elif top and found[1]:
                grade = f"{found[0] / found[1] * top:.2f}"
            else:
                grade = f"{found[0]:.2f}"
            modified = _column(entry.extra, "last modified (grade)") or stamp
            writer.writerow([_key(f"Participant {entry.participant}"), _text(entry.name), _text(entry.email), grade,
                             f"{top:.2f}" if top else "", modified if modified == "-" else _text(modified)])
    return path


def _column(extra: dict, name: str) -> str:
    """A roster row's cell by its header, case-insensitively (Moodle wrote ``Maximum Grade``,
    newer versions ``Maximum grade``)."""
    return next((value for header, value in extra.items() if header.strip().lower() == name), "")


def _float(text: str) -> float | None:
    try:
        return float(str(text).replace(",", "."))
    except ValueError:
        return None


def write_exports(rows, roster: Roster | None, term: Term, out: Path) -> list[Path]:
    """The LMS imports for this run, in ``out``: Canvas's gradebook CSV when the roster is a
    Canvas export, Moodle's worksheet per tutorial when it is a Moodle worksheet. Without a
    roster there is nobody's LMS key to write: nothing (``grades.csv`` is still written)."""
    if roster is None:
        return []
    tutorials = sorted({s.assignment or s.missing_assignment for s in rows if s.assignment or s.missing_assignment})
    if roster.source == "canvas":
        return [canvas_gradebook(rows, roster, term, tutorials, out / "canvas_gradebook_import.csv")]
    if roster.source == "moodle":
        return [moodle_worksheet(rows, roster, term, t, out / f"moodle_grading_worksheet_{t}.csv") for t in tutorials]
    return []
