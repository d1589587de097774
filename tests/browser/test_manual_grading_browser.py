"""Manual grading in the real UI: after a parallel ``course autograde`` of tutorial 1 (on its
grading path, ``submissions.grading_path``), the instructor opens the submission in formgrader
(served by Jupyter from the course folder), types a score for the written Think! answer, and
``nbgrader export`` includes it in the total. Screenshots of the submission before and after
grading go to ``test-artifacts/screenshots/``."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from submissions import grading_path, grading_path_source, load, write

from browser.conftest import SCREENSHOTS, jupyter_server
from course_admin import grading

pytestmark = pytest.mark.browser

ASSIGNMENT = "01_harlow_meta_rl"
WRITTEN = "think_lamarck"  # 2 points, graded by hand
MANUAL = 1.5
PAGE_MS = 30_000


@pytest.fixture(scope="module")
def course(tmp_path_factory, dask_scheduler):
    tmp = tmp_path_factory.mktemp("manual-grading")
    submissions, course = tmp / "submissions", tmp / "course"
    submissions.mkdir()
    # Tutorial 1 on its grading path (its exercises, checks, hidden tests and the written answer):
    # this test is about formgrader and the export; the whole tutorial is graded in test_tutorial_harlow.
    write(submissions, "ada", grading_path(load("solution", ASSIGNMENT)))
    write(submissions, "bob", grading_path(load("student", ASSIGNMENT)))
    report = grading.autograde(submissions, out=tmp / "out", course_dir=course, scheduler=dask_scheduler, progress=False,
                               source=grading_path_source(tmp / "source", ASSIGNMENT))
    assert {s.name: s.score for s in report.submissions} == {"ada": 9.0, "bob": 0.0}
    (course / "nbgrader_config.py").write_text(
        "c = get_config()  # noqa: F821\n"
        f"c.CourseDirectory.root = {str(course)!r}\n"
        f"c.CourseDirectory.db_url = {'sqlite:///' + str(course / 'gradebook.db')!r}\n"
        "c.CourseDirectory.course_id = 'manual-grading-test'\n"
    )
    return course


@pytest.fixture(scope="module")
def server(course, tmp_path_factory):
    yield from jupyter_server(course, tmp_path_factory.mktemp("manual-grading-home"), "manual-grading-server")


def _gradebook(course: Path):
    from nbgrader.api import Gradebook

    return Gradebook(f"sqlite:///{course / 'gradebook.db'}")


def _manual_score(course: Path, student: str):
    with _gradebook(course) as gradebook:
        return gradebook.find_grade(WRITTEN, ASSIGNMENT, ASSIGNMENT, student).manual_score


def _export(course: Path, out: Path) -> dict[str, dict]:
    command = [sys.executable, "-m", "nbgrader", "export", f"--CsvExportPlugin.to={out}"]
    result = subprocess.run(command, cwd=course, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    return {row["student_id"]: row for row in csv.DictReader(out.open()) if row["assignment"] == ASSIGNMENT}


def test_a_written_answer_graded_in_formgrader_counts_in_the_export(browser, server, course, tmp_path):
    with _gradebook(course) as gradebook:
        notebook_id = gradebook.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, "ada").id
        assert gradebook.find_grade(WRITTEN, ASSIGNMENT, ASSIGNMENT, "ada").needs_manual_grade
    assert _manual_score(course, "ada") is None
    before = _export(course, tmp_path / "before.csv")
    assert float(before["ada"]["score"]) == 9.0

    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    context.set_default_timeout(PAGE_MS)
    try:
        page = context.new_page()
        page.goto(f"{server.base}/formgrader?token={server.token}")  # logs the browser in, as an instructor's session is
        page.goto(f"{server.base}/formgrader/submissions/{notebook_id}/")
        score = page.locator(f"input.score#{WRITTEN}")
        score.wait_for(state="visible")
        assert "Lamarck" in page.content() or "lamarck" in page.content().lower()
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "manual_grading_before.png"), full_page=False)
        score.fill(str(MANUAL))
        score.press("Tab")  # formgrader saves a score when its input changes
        deadline = time.monotonic() + 30
        while _manual_score(course, "ada") != MANUAL and time.monotonic() < deadline:
            time.sleep(0.2)
        score.scroll_into_view_if_needed()
        page.screenshot(path=str(SCREENSHOTS / "manual_grading_after.png"), full_page=False)
    finally:
        context.close()
    assert _manual_score(course, "ada") == MANUAL, "formgrader did not save the manual score"

    after = _export(course, tmp_path / "after.csv")
    assert float(after["ada"]["score"]) == 9.0 + MANUAL and float(after["ada"]["max_score"]) == 11.0
    assert float(after["bob"]["score"]) == 0.0
    with _gradebook(course) as gradebook:  # the autograded scores are untouched
        grades = {g.name: g.score for g in gradebook.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, "ada").grades}
    assert grades["test_evaluate_individual"] == 3 and grades["test_genetic_algorithm"] == 4 and grades[WRITTEN] == MANUAL
    assert grades["test_lamarckian_individual"] == 2
    assert json.dumps(grades)  # plain numbers
