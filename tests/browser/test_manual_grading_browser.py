"""Manual grading in the real UI: after a parallel ``course autograde`` of tutorial 1 (the run
``harlow_graded`` shares with ``tests/grading/test_tutorial_harlow.py``), the instructor opens the
solution's submission in formgrader (served by Jupyter from a copy of the course folder), types a
score for the written Think! answer, and ``nbgrader export`` includes it in the total.
Screenshots of the submission before and after grading go to ``test-artifacts/screenshots/``."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import harlow_graded
import pytest
from submissions import rows_by_student

from browser.conftest import SCREENSHOTS, jupyter_server

pytestmark = pytest.mark.browser

ASSIGNMENT = harlow_graded.ASSIGNMENT
WRITTEN = "think_lamarck"  # 2 points, graded by hand
MANUAL = 1.5
PAGE_MS = 30_000
ANSWERED, UNTOUCHED = "full", "zero"
"""The students of ``harlow_graded``: the solution notebook and the untouched released one."""


@pytest.fixture(scope="module")
def course(tmp_path_factory, dask_scheduler):
    graded = harlow_graded.graded(tmp_path_factory, dask_scheduler)
    scores = {student: float(row["score"]) for student, row in rows_by_student(graded["csv"]).items()}
    assert (scores[ANSWERED], scores[UNTOUCHED]) == (9.0, 0.0)
    course = tmp_path_factory.mktemp("manual-grading") / "course"
    shutil.copytree(graded["course"], course)  # this test grades by hand: the shared run stays as graded
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
        notebook_id = gradebook.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, ANSWERED).id
        assert gradebook.find_grade(WRITTEN, ASSIGNMENT, ASSIGNMENT, ANSWERED).needs_manual_grade
    assert _manual_score(course, ANSWERED) is None
    before = _export(course, tmp_path / "before.csv")
    assert float(before[ANSWERED]["score"]) == 9.0

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
        while _manual_score(course, ANSWERED) != MANUAL and time.monotonic() < deadline:
            time.sleep(0.2)
        score.scroll_into_view_if_needed()
        page.screenshot(path=str(SCREENSHOTS / "manual_grading_after.png"), full_page=False)
    finally:
        context.close()
    assert _manual_score(course, ANSWERED) == MANUAL, "formgrader did not save the manual score"

    after = _export(course, tmp_path / "after.csv")
    assert float(after[ANSWERED]["score"]) == 9.0 + MANUAL and float(after[ANSWERED]["max_score"]) == 11.0
    assert float(after[UNTOUCHED]["score"]) == 0.0
    with _gradebook(course) as gradebook:  # the autograded scores are untouched
        grades = {g.name: g.score for g in gradebook.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, ANSWERED).grades}
    assert grades["test_evaluate_individual"] == 3 and grades["test_genetic_algorithm"] == 4 and grades[WRITTEN] == MANUAL
    assert grades["test_lamarckian_individual"] == 2
    assert json.dumps(grades)  # plain numbers
