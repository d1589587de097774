"""A fixture class as Canvas and Moodle hand it to an instructor: the bulk-download folders and
the class lists (Canvas's gradebook export, Moodle's grading worksheet), with Unicode names, two
students who share a display name, resubmissions, late and missing students and a stranger.

``canvas_class(folder, solution)`` and ``moodle_class(folder, solution)`` write the download
(notebooks made from the synthetic assignment's ``solution``) and return the roster's path and
what each student should get.
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

from course_admin.grading.synthetic import TINY, student_version

CANVAS_HEADER = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Tiny (4242)", "Current Score",
                 "Unposted Current Score", "Final Score", "Unposted Final Score"]
"""The first row of a Canvas gradebook export (one assignment), as Canvas writes it."""

MOODLE_HEADER = ["Identifier", "Full name", "ID number", "Email address", "Status", "Grade", "Maximum Grade",
                 "Grade can be changed", "Last modified (submission)", "Online text", "Last modified (grade)",
                 "Feedback comments"]
"""The first row of a Moodle offline grading worksheet, as Moodle writes it."""


def _notebook(solution: dict, *answered: str) -> str:
    return json.dumps(student_version(solution, *answered))


def canvas_class(folder: Path, solution: dict) -> Path:
    """Canvas's download of assignment 4242 (unzipped into ``folder``) and its gradebook export."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {
        # Zoë Müller: on time, full marks
        f"müllerzoë_1001_50001_{TINY}.ipynb": ("add", "square"),
        # John Smith (1002) uploaded twice: the re-upload (-1, a later attachment id) is graded
        f"smithjohn_1002_50002_{TINY}.ipynb": ("add",),
        f"smithjohn_1002_50010_{TINY}-1.ipynb": ("add", "square"),
        # the other John Smith (1003), late, half done: same display name, never merged
        f"smithjohn_LATE_1003_50011_{TINY}.ipynb": ("add",),
        # a student not enrolled any more
        f"strangerdan_9999_50012_{TINY}.ipynb": ("add", "square"),
        # a login that starts with '-', late: its roster cell is protected as '-dash
        f"minusdash_late_1005_50013_{TINY}.ipynb": ("square",),
    }
    for name, answered in files.items():
        (folder / name).write_text(_notebook(solution, *answered))
    older = folder / f"smithjohn_1002_50002_{TINY}.ipynb"
    os.utime(older, (2_000_000_000, 2_000_000_000))  # a newer file time must not make the first upload win
    roster = folder.parent / "canvas_gradebook.csv"
    with roster.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(CANVAS_HEADER)
        writer.writerow(["    Points Possible", "", "", "", "", "3.00", "(read only)", "(read only)", "(read only)",
                         "(read only)"])
        writer.writerow(["Müller, Zoë", "1001", "S1001", "zmuller", "Section A", "", "", "", "", ""])
        writer.writerow(["Smith, John", "1002", "S1002", "jsmith", "Section A", "", "", "", "", ""])
        writer.writerow(["Smith, John", "1003", "S1003", "jsmith2", "Section B", "", "", "", "", ""])
        writer.writerow(["O'Brien, Ana", "1004", "S1004", "aobrien", "Section B", "", "", "", "", ""])
        writer.writerow(["Minus, Dash", "1005", "S1005", "'-dash", "Section B", "", "", "", "", ""])
        writer.writerow(["Student, Test", "1999", "", "", "", "", "", "", "", ""])
    return roster


def moodle_class(folder: Path, solution: dict) -> Path:
    """Moodle's download in folders (unzipped into ``folder``) and its grading worksheet."""
    folder.mkdir(parents=True, exist_ok=True)
    students = {
        "Ελένη Παπαδοπούλου_200001_assignsubmission_file_": [(TINY, ("add", "square"), 0)],
        # an older Moodle: no trailing '_'; two notebooks, the later file is graded
        "Pierre Dupont_200002_assignsubmission_file": [(f"{TINY} (old)", ("add",), 1_700_000_000),
                                                       (TINY, ("add", "square"), 1_700_000_600)],
        "Ghost Writer_299999_assignsubmission_file_": [(TINY, ("add",), 0)],
    }
    for student, notebooks in students.items():
        (folder / student).mkdir()
        for name, answered, mtime in notebooks:
            path = folder / student / f"{name}.ipynb"
            path.write_text(_notebook(solution, *answered))
            if mtime:
                os.utime(path, (mtime, mtime))
    roster = folder.parent / "moodle_worksheet.csv"
    with roster.open("w", newline="", encoding="utf-8-sig") as f:  # Moodle writes a byte-order mark
        writer = csv.writer(f)
        writer.writerow(MOODLE_HEADER)
        writer.writerow(["Participant 200001", "Ελένη Παπαδοπούλου", "E1", "eleni@example.org", "Submitted for grading",
                         "", "10.00", "Yes", "Monday, 19 October 2026, 9:15 PM", "", "-", ""])
        writer.writerow(["Participant 200002", "Pierre Dupont", "P2", "pierre@example.org", "Submitted for grading",
                         "", "10.00", "Yes", "Thursday, 22 October 2026, 11:30 AM", "", "-", ""])
        writer.writerow(["Participant 200003", "Nobody Home", "N3", "nobody@example.org", "No submission",
                         "", "10.00", "Yes", "-", "", "-", ""])
    return roster


TERM = """timezone = "Europe/Berlin"

[tutorials.00_tiny]
due = 2026-10-20T23:59:00
title = "Tiny"
canvas_id = 4242

[late]
percent_per_day = 10
max_percent = 50
cutoff_days = 7
grace_minutes = 5

[extensions]
"1005" = { 00_tiny = 3 }
"zmuller" = { 00_tiny = 2026-10-27T12:00:00 }
"""
"""The term file of the Canvas fixture class: due 20 October 2026, 23:59 in Berlin (21:59 UTC)."""

CANVAS_TIMES = """user_id,submitted_at
1001,2026-10-20T20:00:00Z
1002,2026-10-21T03:00:00Z
1005,2026-10-22T08:00:00Z
9999,2026-10-30T08:00:00Z
"""
"""Canvas's ``submitted_at`` per user: 1002 five hours late, 1005 late but within a 3-day
extension, the stranger 9 days late (after the cut-off), 1003 (flagged late) missing."""


MOODLE_TERM = TERM.split("[extensions]")[0] + """[extensions]
"pierre@example.org" = { 00_tiny = 1 }
"""
"""The term file of the Moodle fixture class: the Canvas class's dates and policy, and one day's
extension for Pierre Dupont, keyed by his e-mail address."""


def moodle_term(folder: Path) -> Path:
    """The term file of the Moodle fixture class, written in ``folder`` (its submission times are
    the worksheet's ``Last modified (submission)``: the roster is the times file)."""
    term = folder / "term.toml"
    term.write_text(MOODLE_TERM, encoding="utf-8")
    return term


def canvas_term(folder: Path) -> tuple[Path, Path]:
    """The term file and the submission times of the Canvas fixture class, written in ``folder``."""
    term, times = folder / "term.toml", folder / "submitted_at.csv"
    term.write_text(TERM, encoding="utf-8")
    times.write_text(CANVAS_TIMES, encoding="utf-8")
    return term, times
