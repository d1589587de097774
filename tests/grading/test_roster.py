"""Rosters and LMS download layouts: who each submission is (``lms_layout``, ``roster``,
``class_list``), and ``course autograde --roster`` end to end on a Canvas class."""

import csv
import json

import pytest
from lms_class import canvas_class, moodle_class

from course_admin.grading.class_list import identify_students, missing_students
from course_admin.grading.intake import Submission, collect, grade_ids
from course_admin.grading.lms_layout import CANVAS, MOODLE, PLAIN, parse_entry, submission_entry
from course_admin.grading.roster import BY_LMS_ID, BY_LOGIN, BY_NAME, UNMATCHED, RosterError, read_roster, unprotect
from course_admin.grading.synthetic import TINY, student_version, synthetic_assignment


@pytest.fixture(scope="module")
def solution(tmp_path_factory):
    return json.loads(synthetic_assignment(tmp_path_factory.mktemp("source")).read_text())


def identified(folder, solution, roster):
    known = {TINY: grade_ids(solution)}
    return identify_students(collect(folder, known, separate=False), roster)


@pytest.mark.parametrize(
    ("name", "is_dir", "layout", "lms_id", "late", "reupload"),
    [
        ("smithjohn_LATE_1003_50011_02_colour_replay.ipynb", False, CANVAS, "1003", True, 0),
        ("smithjohn_late_1003_50011_02_colour_replay.ipynb", False, CANVAS, "1003", True, 0),  # older Canvas
        ("smithjohn_1002_50010_02_colour_replay-1.ipynb", False, CANVAS, "1002", False, 1),
        ("anon_x5Ki2_50014_02_colour_replay.ipynb", False, CANVAS, "x5Ki2", False, 0),
        ("Pierre Dupont_200002_assignsubmission_file_", True, MOODLE, "200002", False, 0),
        ("Pierre Dupont_200002_assignsubmission_file", True, MOODLE, "200002", False, 0),  # older Moodle
        ("Pierre Dupont_200002_assignsubmission_file_hw.ipynb", False, MOODLE, "200002", False, 0),
        ("alice.ipynb", False, PLAIN, "", False, 0),
        ("carol", True, PLAIN, "", False, 0),
    ],
)
def test_download_names_are_read_by_layout(name, is_dir, layout, lms_id, late, reupload):
    entry = parse_entry(name, is_dir)
    assert (entry.layout, entry.lms_id, entry.late, entry.reupload) == (layout, lms_id, late, reupload)


def test_a_submission_is_read_by_the_layout_of_the_entry_it_came_from():
    # A Canvas zip whose notebook sits in a folder inside it is still Canvas's file, not a plain folder.
    canvas_zip = "smithjohn_LATE_1003_50011_hw.zip"
    zipped = Submission("x", f"{canvas_zip}:hw/{TINY}.ipynb", TINY, entry=canvas_zip)
    assert (submission_entry(zipped).layout, submission_entry(zipped).lms_id) == (CANVAS, "1003")
    folder = "Jane Doe_200001_assignsubmission_file_"
    in_folder = Submission("x", f"{folder}/sub/{TINY}.ipynb", TINY, entry=folder)
    assert (submission_entry(in_folder).layout, submission_entry(in_folder).lms_id) == (MOODLE, "200001")
    assert submission_entry(Submission("bob", "bob.ipynb", TINY)).layout == PLAIN  # no entry: plain, by its own name


def test_canvas_export_is_read_as_a_roster(tmp_path, solution):
    roster = read_roster(canvas_class(tmp_path / "subs", solution))
    assert roster.source == "canvas"
    assert [e.key for e in roster.entries] == ["1001", "1002", "1003", "1004", "1005"]  # no Points Possible, no Test Student
    dash = roster.by_key()["1005"]
    assert dash.login == "-dash" and dash.section == "Section B"  # the spreadsheet guard ' is not part of the login


def test_canvas_download_matches_by_id_keeps_namesakes_apart_and_grades_the_latest_upload(tmp_path, solution):
    folder = tmp_path / "subs"
    roster = read_roster(canvas_class(folder, solution))
    kept, superseded = identified(folder, solution, roster)
    rows = {s.name: s for s in kept}
    assert set(rows) == {"1001", "1002", "1003", "1005", "9999"}
    assert rows["1001"].display_name == "Müller, Zoë" and rows["1001"].matched_by == BY_LMS_ID
    # two students called John Smith: two rows, each by its own id
    assert rows["1002"].section == "Section A" and rows["1003"].section == "Section B"
    assert rows["1002"].student != rows["1003"].student
    assert rows["1003"].late_flag and rows["1005"].late_flag and not rows["1002"].late_flag
    # the re-upload (later attachment id) is graded, even though the first upload's file is newer on disk
    assert rows["1002"].source == f"smithjohn_1002_50010_{TINY}-1.ipynb"
    assert [(d.student, d.source) for d in superseded] == [("1002", f"smithjohn_1002_50002_{TINY}.ipynb")]
    assert "latest of 2 uploads" in "; ".join(rows["1002"].problems)
    stranger = rows["9999"]
    assert stranger.matched_by == UNMATCHED and "not on the roster" in "; ".join(stranger.problems)
    missing = missing_students(roster, kept, [TINY])
    assert [(m.name, m.missing_assignment, m.problems) for m in missing] == [("1004", TINY, ["no submission"])]


def test_moodle_download_matches_by_participant_number(tmp_path, solution):
    folder = tmp_path / "subs"
    roster = read_roster(moodle_class(folder, solution))
    assert roster.source == "moodle" and [e.key for e in roster.entries] == ["200001", "200002", "200003"]
    kept, superseded = identified(folder, solution, roster)
    rows = {s.name: s for s in kept}
    assert rows["200001"].display_name == "Ελένη Παπαδοπούλου" and rows["200001"].matched_by == BY_LMS_ID
    assert rows["200002"].source.endswith(f"/{TINY}.ipynb")  # the later of Pierre's two notebooks
    assert len(superseded) == 1 and superseded[0].source.endswith(f"{TINY} (old).ipynb")
    assert rows["299999"].matched_by == UNMATCHED
    assert [m.name for m in missing_students(roster, kept, [TINY])] == ["200003"]


def test_plain_files_match_by_login_then_name_and_look_alikes_never_merge(tmp_path, solution):
    folder = tmp_path / "subs"
    folder.mkdir()
    for name in ("-dash", "JDoe", "jdoe", "Ana O'Brien", "John Smith"):
        (folder / f"{name}.ipynb").write_text(json.dumps(student_version(solution, "add")))
    roster_path = tmp_path / "roster.csv"
    roster_path.write_text("name,login,section\nDash Minus,'-dash,A\nJane Doe,jdoe,A\nJoe Doe,jd0e,A\n"
                           "Ana O'Brien,aob,B\nJohn Smith,js1,A\nJohn Smith,js2,B\n", encoding="utf-8")
    kept, _ = identified(folder, solution, read_roster(roster_path))
    by_source = {s.source: s for s in kept}
    assert (by_source["-dash.ipynb"].name, by_source["-dash.ipynb"].matched_by) == ("-dash", BY_LOGIN)
    assert (by_source["jdoe.ipynb"].name, by_source["jdoe.ipynb"].matched_by) == ("jdoe", BY_LOGIN)
    assert by_source["JDoe.ipynb"].matched_by == UNMATCHED  # looks like jdoe: not merged into her
    assert by_source["JDoe.ipynb"].student != by_source["jdoe.ipynb"].student
    assert "looks like" in "; ".join(by_source["JDoe.ipynb"].problems)
    assert (by_source["Ana O'Brien.ipynb"].name, by_source["Ana O'Brien.ipynb"].matched_by) == ("aob", BY_NAME)
    shared = by_source["John Smith.ipynb"]  # two roster students have this name
    assert shared.matched_by == UNMATCHED and "name of 2 roster students" in "; ".join(shared.problems)


def test_unprotect_reads_the_spreadsheet_guard_back():
    assert unprotect("'-dash") == "-dash" and unprotect("'=1+1") == "=1+1"
    assert unprotect("'quoted") == "'quoted" and unprotect(" jdoe ") == "jdoe"


def test_a_roster_without_ids_or_names_says_what_to_export(tmp_path):
    path = tmp_path / "roster.csv"
    path.write_text("colour,size\nred,3\n")
    with pytest.raises(RosterError, match="export the Canvas gradebook"):
        read_roster(path)
    path.write_text("login\njdoe\njdoe\n")
    with pytest.raises(RosterError, match="appears twice"):
        read_roster(path)
    path.write_bytes("name\nZo\xeb\n".encode("latin-1"))
    with pytest.raises(RosterError, match="not UTF-8"):
        read_roster(path)


def test_canvas_class_graded_end_to_end_with_its_roster(canvas_graded):
    report, rows, out = canvas_graded
    assert set(rows) == {"1001", "1002", "1003", "1004", "1005", "9999"}
    assert (rows["1001"]["score"], rows["1001"]["name"], rows["1001"]["matched_by"]) == ("3", "Müller, Zoë", BY_LMS_ID)
    assert rows["1002"]["score"] == "3" and rows["1003"]["score"] == "1"  # the namesakes keep their own marks
    assert (rows["1004"]["score"], rows["1004"]["max_score"], rows["1004"]["problems"]) == ("0", "3", "no submission")
    assert rows["1004"]["assignment"] == TINY
    assert rows["9999"]["matched_by"] == UNMATCHED and rows["9999"]["score"] == "3"  # graded, listed apart
    summary = (out / "summary.md").read_text()
    assert "### No submission" in summary and "1004" in summary.split("### No submission")[1]
    assert "9999" in summary.split("### Not on the roster")[1]
    assert f"smithjohn_1002_50002_{TINY}.ipynb" in summary.split("## Earlier uploads, not graded")[1]


def test_a_plain_folder_still_grades_every_notebook_a_student_handed_in(tmp_path, solution):
    folder = tmp_path / "subs"
    (folder / "bob").mkdir(parents=True)
    (folder / "bob" / "first.ipynb").write_text(json.dumps(student_version(solution, "add")))
    (folder / "bob" / "second.ipynb").write_text(json.dumps(student_version(solution, "add", "square")))
    kept, superseded = identified(folder, solution, None)
    assert superseded == [] and sorted(s.student for s in kept) == ["bob", "bob~2"]  # no upload order to trust


def test_moodle_class_graded_end_to_end_with_its_worksheet(moodle_graded):
    """Moodle's download graded with its grading worksheet as the roster: every row's match, how
    late (the worksheet's ``Last modified (submission)``, an extension keyed by e-mail) and final
    score; the missing student and the stranger; the worksheet to upload back."""
    report, rows, out = moodle_graded
    assert set(rows) == {"200001", "200002", "200003", "299999"}
    eleni, pierre, nobody, ghost = rows["200001"], rows["200002"], rows["200003"], rows["299999"]
    assert (eleni["name"], eleni["matched_by"], eleni["score"], eleni["late_by"], eleni["final_score"]) == (
        "Ελένη Παπαδοπούλου", BY_LMS_ID, "3", "on time", "3")
    assert eleni["submitted_at"] == "2026-10-19T21:15+02:00" and eleni["time_source"] == "the LMS's submission times"
    # due 20 October 23:59 in Berlin, one day's extension, handed in on the 22nd at 11:30: one started day, 10 %
    assert (pierre["due"], pierre["late_by"], pierre["penalty_percent"], pierre["final_score"]) == (
        "2026-10-21T23:59+02:00", "11 h 31 min", "10", "2.7")
    assert "extension of 1 day;" in pierre["late_note"] and "not graded: " in pierre["problems"]  # his older notebook
    assert (nobody["score"], nobody["max_score"], nobody["problems"]) == ("0", "3", "no submission")
    assert ghost["matched_by"] == UNMATCHED and ghost["score"] == "1" and "no submission time" in ghost["late_note"]
    worksheet = out / f"moodle_grading_worksheet_{TINY}.csv"
    assert report.exports == [worksheet]
    with worksheet.open(encoding="utf-8-sig") as f:
        graded = {row["Identifier"]: (row["Full name"], row["Grade"]) for row in csv.DictReader(f)}
    assert graded == {"Participant 200001": ("Ελένη Παπαδοπούλου", "10.00"),  # final scores on Moodle's scale of 10
                      "Participant 200002": ("Pierre Dupont", "9.00"), "Participant 200003": ("Nobody Home", "0.00")}


def test_a_roster_that_matches_no_submission_stops_before_grading(tmp_path, solution):
    """Another class's roster (here Canvas's export for a Moodle download) would make every
    submission a stranger and give every roster student 0 in the LMS import: it is refused,
    saying what was found on each side."""
    roster = read_roster(canvas_class(tmp_path / "canvas", solution))
    moodle_class(tmp_path / "moodle", solution)
    with pytest.raises(RosterError, match=r"none of the 4 submissions matches a student of the roster .*canvas export, "
                                          r"5 students\): the submissions are 200001, 200002, 299999; the roster's "
                                          r"students are 1001, 1002, 1003, 1004 and 1 more\. Give this class's roster"):
        identified(tmp_path / "moodle", solution, roster)
    folder = tmp_path / "one"  # a single stranger is a stranger: graded and listed apart
    folder.mkdir()
    (folder / "nobody.ipynb").write_text(json.dumps(student_version(solution, "add")))
    kept, _ = identified(folder, solution, roster)
    assert [s.matched_by for s in kept] == [UNMATCHED]
