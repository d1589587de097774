"""The LMS imports (``lms_export``), checked against each format's rules with a real export's
header as the fixture (``lms_class.CANVAS_HEADER``, ``MOODLE_HEADER``)."""

import csv
import json
import re
from datetime import UTC, datetime

from lms_class import CANVAS_HEADER, MOODLE_HEADER, moodle_class

from course_admin.grading.intake import Submission
from course_admin.grading.late import Lateness
from course_admin.grading.lms_export import moodle_worksheet, write_exports
from course_admin.grading.roster import read_roster
from course_admin.grading.synthetic import TINY, synthetic_assignment
from course_admin.grading.term import Term


def test_canvas_import_has_canvas_s_columns_points_row_and_roster_ids(canvas_graded):
    report, _, out = canvas_graded
    [path] = report.exports
    assert path == out / "canvas_gradebook_import.csv"
    rows = list(csv.reader(path.open(encoding="utf-8")))
    header, points, students = rows[0], rows[1], rows[2:]
    assert header[:5] == CANVAS_HEADER[:5]  # Canvas's own export's identity columns, in its order
    assert header[5:] == ["Tiny (4242)"]  # "<name> (<assignment id>)": Canvas updates assignment 4242
    assert re.fullmatch(r"\s*Points Possible", points[0]) and points[5] == "3.00"
    by_id = {row[1]: row for row in students}
    assert list(by_id) == ["1001", "1002", "1003", "1004", "1005"]  # the roster's order; the stranger 9999 is not in it
    assert by_id["1001"][0] == "Müller, Zoë" and by_id["1001"][5] == "3.00"
    assert by_id["1002"][5] == "2.70"  # the final score: 10 % off for a day late
    assert by_id["1004"][5] == "0.00"  # no submission
    assert by_id["1005"][3] == "'-dash"  # a SIS login starting with '-' is guarded; Canvas keys the row by ID
    for row in students:
        assert re.fullmatch(r"\d+", row[1]) and float(row[5]) <= float(points[5])
    # Canvas's import reads its own export's layout: so does our roster reader, round trip
    again = read_roster(path)
    assert again.source == "canvas" and [e.key for e in again.entries] == list(by_id)
    assert again.by_key()["1005"].login == "-dash"


def _moodle_import(path):
    """What Moodle's offline-grading importer reads (mod/assign/feedback/offline/importgradeslib.php):
    the columns named exactly Identifier, Grade and Last modified (grade), the number after
    "Participant ", and the grade and time of each row; None when a required column is missing."""
    rows = list(csv.reader(path.open(encoding="utf-8-sig")))
    header = rows[0]
    if not {"Identifier", "Grade", "Last modified (grade)"} <= set(header):
        return None
    at = {name: header.index(name) for name in ("Identifier", "Grade", "Last modified (grade)")}
    return {row[at["Identifier"]][len("Participant "):]: (row[at["Grade"]], row[at["Last modified (grade)"]])
            for row in rows[1:]}


def test_moodle_worksheet_keeps_moodle_s_keys_scale_and_modified_times(tmp_path):
    solution = json.loads(synthetic_assignment(tmp_path / "source").read_text())
    roster = read_roster(moodle_class(tmp_path / "subs", solution))
    rows = []
    for key, raw, final in (("200001", 3.0, 3.0), ("200002", 3.0, 2.1)):
        sub = Submission(key, "x", TINY, name=key, score=raw, max_score=3.0)
        sub.lateness = Lateness(final=final)
        rows.append(sub)
    missing = Submission("200003", "", None, name="200003", max_score=3.0, missing_assignment=TINY)
    missing.lateness = Lateness(final=0.0)
    now = datetime(2026, 11, 2, 9, 5, tzinfo=UTC)
    path = moodle_worksheet(rows + [missing], roster, Term(), TINY, tmp_path / "worksheet.csv", now=now)
    header = next(csv.reader(path.open(encoding="utf-8-sig")))
    assert set(header) <= set(MOODLE_HEADER)  # only columns Moodle's own worksheet has
    imported = _moodle_import(path)
    assert imported == {"200001": ("10.00", "-"), "200002": ("7.00", "-"), "200003": ("0.00", "-")}  # out of 10
    for grade, _ in imported.values():
        assert 0 <= float(grade) <= 10  # Moodle skips a grade above the assignment's maximum


def test_without_a_worksheet_moodle_rows_are_dated_now(tmp_path):
    roster_path = tmp_path / "worksheet.csv"
    roster_path.write_text("Identifier,Full name,Email address\nParticipant 7,Ann Example,ann@example.org\n")
    roster = read_roster(roster_path)
    sub = Submission("7", "x", TINY, name="7", score=2.0, max_score=3.0)
    now = datetime(2026, 11, 2, 9, 5, tzinfo=UTC)
    path = moodle_worksheet([sub], roster, Term(), TINY, tmp_path / "out.csv", now=now)
    assert _moodle_import(path) == {"7": ("2.00", "Monday, 2 November 2026, 9:05 AM")}


def test_a_plain_roster_gets_no_lms_import(tmp_path):
    roster_path = tmp_path / "roster.csv"
    roster_path.write_text("login,name\njdoe,Jane Doe\n")
    assert write_exports([], read_roster(roster_path), Term(), tmp_path) == []
