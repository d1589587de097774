import csv
import json

import pytest
from lms_class import canvas_class, canvas_term, moodle_class, moodle_term

from course_admin.grading.synthetic import synthetic_assignment


@pytest.fixture(scope="session")
def canvas_graded(tmp_path_factory):
    """The Canvas fixture class (``lms_class``) graded once with its roster, term file and
    submission times, in this process (no Dask): (report, rows of grades.csv by student, out)."""
    from course_admin import grading

    base = tmp_path_factory.mktemp("canvas")
    source = base / "source"
    solution = json.loads(synthetic_assignment(source).read_text())
    folder = base / "subs"
    roster = canvas_class(folder, solution)
    term, times = canvas_term(base)
    report = grading.autograde(folder, out=base / "out", course_dir=base / "course", source=source, workers=0,
                               progress=False, roster=roster, term=term, times=[str(times)])
    rows = {row["student"]: row for row in csv.DictReader(report.csv_path.open(encoding="utf-8"))}
    return report, rows, base / "out"


@pytest.fixture(scope="session")
def moodle_graded(tmp_path_factory):
    """The Moodle fixture class (``lms_class``) graded once with its grading worksheet as the
    roster (and so as the submission times) and its term file, in this process (no Dask):
    (report, rows of grades.csv by student, out)."""
    from course_admin import grading

    base = tmp_path_factory.mktemp("moodle")
    source = base / "source"
    solution = json.loads(synthetic_assignment(source).read_text())
    folder = base / "subs"
    roster = moodle_class(folder, solution)
    report = grading.autograde(folder, out=base / "out", course_dir=base / "course", source=source, workers=0,
                               progress=False, roster=roster, term=moodle_term(base))
    rows = {row["student"]: row for row in csv.DictReader(report.csv_path.open(encoding="utf-8"))}
    return report, rows, base / "out"
