"""Deadlines, extensions and the late policy (``term``, ``late``), and every row of the Canvas
fixture class graded with them (``conftest.canvas_graded``)."""

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from course_admin.grading.late import TimesError, assess, parse_time, read_times
from course_admin.grading.term import Term, TermError, read_term

BERLIN = ZoneInfo("Europe/Berlin")


@pytest.fixture
def term(tmp_path):
    from lms_class import TERM

    path = tmp_path / "term.toml"
    path.write_text(TERM)
    return read_term(path)


def test_due_dates_are_read_in_the_term_s_time_zone_across_daylight_saving(term):
    due, note = term.due("00_tiny", ["1001"])
    assert due == datetime(2026, 10, 20, 21, 59, tzinfo=UTC) and note == ""  # CEST, +02:00
    due, note = term.due("00_tiny", ["1001", "zmuller"])  # her extension is under her login
    assert due == datetime(2026, 10, 27, 11, 0, tzinfo=UTC) and "extension to" in note  # CET by then, +01:00
    due, note = term.due("00_tiny", ["1005"])
    assert due == datetime(2026, 10, 23, 21, 59, tzinfo=UTC) and note == "extension of 3 days"


def test_penalty_per_started_day_with_grace_cap_and_cut_off(term):
    due = datetime(2026, 10, 20, 21, 59, tzinfo=UTC)
    on_time = assess(3, due, due + timedelta(minutes=4), "times", term)  # within the 5-minute grace
    assert (on_time.penalty_percent, on_time.final, on_time.late_text()) == (0, 3, "4 min")
    one_day = assess(3, due, due + timedelta(hours=5), "times", term)
    assert (one_day.penalty_percent, one_day.final) == (10, 2.7) and "1 started day late" in one_day.note
    two_days = assess(3, due, due + timedelta(days=1, minutes=6), "times", term)
    assert two_days.penalty_percent == 20
    capped = assess(3, due, due + timedelta(days=6, hours=23), "times", term)
    assert (capped.penalty_percent, capped.final) == (50, 1.5)  # 7 started days, capped at 50 %
    cut = assess(3, due, due + timedelta(days=7, minutes=1), "times", term)
    assert (cut.penalty_percent, cut.final) == (100, 0) and "cut-off" in cut.note


def test_a_late_flag_without_a_time_is_said_and_costs_nothing(term):
    due = datetime(2026, 10, 20, 21, 59, tzinfo=UTC)
    flagged = assess(3, due, None, "", term, late_flag=True)
    assert flagged.final == 3 and flagged.penalty_percent == 0 and flagged.late_text() == "unknown"
    assert "late per Canvas's flag" in flagged.note and "--times" in flagged.note
    forgiven = assess(3, due, due - timedelta(hours=1), "times", term, late_flag=True)
    assert forgiven.final == 3 and "on time" in forgiven.note


def test_no_term_no_penalty():
    assert assess(2, None, datetime(2026, 1, 1, tzinfo=UTC), "times", Term()).final == 2


def test_times_from_canvas_and_moodle(tmp_path):
    assert parse_time("2026-10-21T03:00:00Z", BERLIN) == datetime(2026, 10, 21, 3, tzinfo=UTC)
    assert parse_time("Monday, 19 October 2026, 9:15 PM", BERLIN) == datetime(2026, 10, 19, 19, 15, tzinfo=UTC)
    assert parse_time("Monday, October 19, 2026, 9:15 PM", BERLIN) == datetime(2026, 10, 19, 19, 15, tzinfo=UTC)
    assert parse_time("-", BERLIN) is None
    with pytest.raises(TimesError, match="ISO 8601"):
        parse_time("19/10/2026", BERLIN)
    import json

    from lms_class import moodle_class

    from course_admin.grading.synthetic import synthetic_assignment

    solution = json.loads(synthetic_assignment(tmp_path / "source").read_text())
    worksheet = moodle_class(tmp_path / "subs", solution)
    times = read_times(worksheet, BERLIN)
    assert times[("200002", None)] == datetime(2026, 10, 22, 9, 30, tzinfo=UTC)
    assert ("200003", None) not in times  # "-": no submission, no time
    # A worksheet saved by a spreadsheet that separates with semicolons is read as the roster reads it.
    semicolons = tmp_path / "semicolons.csv"
    semicolons.write_text('Identifier;Last modified (submission)\nParticipant 200002;"Thursday, 22 October 2026, 11:30 AM"\n')
    assert read_times(semicolons, BERLIN) == {("200002", None): datetime(2026, 10, 22, 9, 30, tzinfo=UTC)}
    bad = tmp_path / "bad.csv"
    bad.write_text("who,when\n1,2\n")
    with pytest.raises(TimesError, match="submitted_at"):
        read_times(bad, BERLIN)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('timezone = "Mars/Olympus"', "not a time zone"),
        ("[late]\npercent_per_day = 150", "between 0 and 100"),
        ('[feedback]\nhidden = "everything"', "pass_fail, hint, full"),
        ("[tutorials.00_tiny]\ndue = 2026-10-20T23:59:00\n[extensions]\nbob = { 99_nope = 2 }", "not a tutorial"),
        ("deadline = 3", "unknown keys"),
        ("[tutorials.00_tiny]\ndue = \"next friday\"", "is not a date"),
    ],
)
def test_term_file_mistakes_say_what_to_write(tmp_path, text, message):
    path = tmp_path / "term.toml"
    path.write_text(text)
    with pytest.raises(TermError, match=message):
        read_term(path)


def test_every_row_shows_raw_lateness_penalty_and_final(canvas_graded):
    _, rows, _ = canvas_graded
    zoe = rows["1001"]  # on time, and the extension under her login shows as her due date
    assert (zoe["score"], zoe["late_by"], zoe["penalty_percent"], zoe["final_score"]) == ("3", "on time", "0", "3")
    assert zoe["due"] == "2026-10-27T12:00+01:00" and zoe["submitted_at"] == "2026-10-20T22:00+02:00"
    john = rows["1002"]  # five hours late: one started day, 10 %
    assert (john["score"], john["late_by"], john["penalty_percent"], john["final_score"]) == ("3", "5 h 1 min", "10", "2.7")
    assert john["time_source"] == "the LMS's submission times"
    namesake = rows["1003"]  # Canvas says late, no time exported: said, not applied
    assert (namesake["late_by"], namesake["penalty_percent"], namesake["final_score"]) == ("unknown", "0", "1")
    assert "late per Canvas's flag" in namesake["late_note"]
    dash = rows["1005"]  # flagged late by Canvas, on time by its extension
    assert (dash["late_by"], dash["final_score"]) == ("on time", "2") and "extension of 3 days" in dash["late_note"]
    stranger = rows["9999"]  # graded (3 raw) but after the cut-off
    assert (stranger["score"], stranger["penalty_percent"], stranger["final_score"]) == ("3", "100", "0")
    assert rows["1004"]["final_score"] == "0" and rows["1004"]["problems"] == "no submission"
