"""`course autograde` end to end with nbgrader: full, zero and partial marks, tampered and
broken submissions. One autograde run backs all the assertions: "full" and "zero" hand in the
whole tutorial, the other notebooks their grading path (``submissions.grading_path``), as
students who deleted the demos would: they are about intake and repair, not the tutorial."""

import csv
import json
import zipfile

import pytest
from submissions import ASSIGNMENT, cell_index, grading_path, load, ratio_wrapper, with_answer, write

from course_admin import grading

pytestmark = pytest.mark.grading


@pytest.fixture(scope="module")
def graded(tmp_path_factory, dask_scheduler):
    folder = tmp_path_factory.mktemp("submissions")
    solution, student = load("solution"), load("student")
    write(folder, "full", solution)
    write(folder, "zero", student)
    write(folder, "partial", grading_path(with_answer(student, solution, "replay_actor_loss")))
    edited = with_answer(student, solution, "replay_actor_loss")
    edited["cells"][cell_index(edited, "test_replay_memory")]["source"] = "pass  # the student emptied the test cell"
    edited["cells"][cell_index(edited, "replay_memory")]["source"] = "class ReplayMemory:\n    pass\n"
    write(folder, "edited", grading_path(edited))
    deleted = with_answer(student, solution, "replay_actor_loss")
    del deleted["cells"][cell_index(deleted, "test_replay_memory")]
    write(folder, "deleted", grading_path(deleted))
    # an honest student who copy-pasted cells in JupyterLab (their nbgrader metadata came along)
    copied = json.loads(json.dumps(solution))
    for grade_id in ("replay_memory", "test_replay_memory"):
        at = cell_index(copied, grade_id)
        copied["cells"].insert(at + 1, json.loads(json.dumps(copied["cells"][at])))
    write(folder, "copied", grading_path(copied))
    with zipfile.ZipFile(folder / "zipped.zip", "w") as archive:  # a hostile path is never extracted
        partial = grading_path(with_answer(student, solution, "replay_actor_loss"))
        archive.writestr(f"../../{ASSIGNMENT}.ipynb", json.dumps(partial))
    # answers that wrap the course's importance ratio (issue 27): an import, and a module the setup cell binds
    wrapped = with_answer(student, solution, "replay_memory")
    wrapped["cells"][cell_index(wrapped, "replay_actor_loss")]["source"] = ratio_wrapper(through_setup=False)
    write(folder, "wrapped", grading_path(wrapped))
    wrapped["cells"][cell_index(wrapped, "replay_actor_loss")]["source"] = ratio_wrapper(through_setup=True)
    write(folder, "through_setup", grading_path(wrapped))
    (folder / "corrupt.ipynb").write_text('{"cells": [')
    (folder / "essay.docx").write_bytes(b"PK not really")
    out = tmp_path_factory.mktemp("grades")
    report = grading.autograde(folder, out=out, course_dir=tmp_path_factory.mktemp("course"), scheduler=dask_scheduler)
    rows = {row["student"]: row for row in csv.DictReader(report.csv_path.open())}
    return report, rows, out


def score(rows, student):
    return float(rows[student]["score"]), float(rows[student]["max_score"])


def test_solution_gets_full_marks(graded):
    _, rows, _ = graded
    assert score(rows, "full") == (8, 8)
    assert rows["full"]["test_replay_actor_loss"] == "5" and rows["full"]["test_replay_memory"] == "3"
    assert "test_discounted_returns" not in rows["full"]  # optional: no marks


def test_copied_cells_keep_an_honest_students_marks(graded):
    _, rows, _ = graded
    assert score(rows, "copied") == (8, 8)
    assert "appears 2 times" in rows["copied"]["problems"]


def test_untouched_student_notebook_gets_zero(graded):
    _, rows, _ = graded
    assert score(rows, "zero") == (0, 8)


def test_one_exercise_done_gets_exactly_its_points(graded):
    _, rows, _ = graded
    assert score(rows, "partial") == (5, 8)
    assert rows["partial"]["test_replay_actor_loss"] == "5" and rows["partial"]["test_replay_memory"] == "0"


def test_edited_test_cell_is_restored_and_graded(graded):
    _, rows, _ = graded
    assert score(rows, "edited") == (5, 8)


def test_deleted_test_cell_is_restored_and_graded(graded):
    _, rows, _ = graded
    assert score(rows, "deleted") == (5, 8)
    assert "restored" in rows["deleted"]["problems"]


def test_zip_submission_is_graded_without_extracting_paths(graded, tmp_path_factory):
    _, rows, _ = graded
    assert score(rows, "zipped") == (5, 8)


def test_broken_submissions_get_a_reason_not_a_crash(graded):
    _, rows, _ = graded
    assert "not valid notebook JSON" in rows["corrupt"]["problems"]
    assert "not a notebook" in rows["essay"]["problems"]
    assert rows["corrupt"]["score"] == "0"


def test_feedback_html_per_student(graded):
    report, _, out = graded
    html = (out / "feedback" / "partial" / f"{ASSIGNMENT}.html").read_text()
    assert "ReplayMemory: not yet" in html  # the check's friendly message reaches the student
    assert "not implemented yet" in html
    assert "zipped" in report.summary()


def test_summary_table_and_markdown(graded):
    report, _, out = graded
    assert (report.graded_now, report.unchanged) == (9, 0)  # full, copied, zero, partial, edited, deleted, zipped,
    # and the two that wrap course code
    assert len(report.task_spans) == 9 and all(start <= stop for _, start, stop in report.task_spans.values())
    table = {row["exercise"]: row for row in report.exercise_table()}
    assert table["test_replay_memory"]["points"] == 3 and table["test_replay_memory"]["failed"] == 5  # all but full, copied
    text = (out / "summary.md").read_text()
    assert "| test_replay_actor_loss | 5 |" in text and "| corrupt |" in text and "| full |" not in text


@pytest.mark.slow
def test_grading_benchmark_measures_every_configuration():
    from course_admin.grading.bench import bench_grading

    figures = bench_grading(submissions=4, train_steps=2000)
    labels = ("workers_1", "workers_2", "records_workers_1", "records_workers_2", "scheduler", "overhead_workers_1",
              "overhead_workers_2")
    for label in labels:
        assert figures[f"{label}_graded_ok"] == 4 and figures[f"{label}_per_minute"] > 0
    assert figures["speedup_2_vs_1"] > 0 and figures["overhead_speedup_2_vs_1"] > 0
    assert figures["records_same_scores"] and figures["records_vs_kernel_wall_s"] > 0
    assert figures["speedup_2_vs_1_of_machine"] == pytest.approx(
        figures["speedup_2_vs_1"] / figures["machine_speedup_2_vs_1"], abs=0.01)


def test_synthetic_submissions_can_train_first(tmp_path):
    """The benchmark's submissions train for a fixed number of steps in a locked cell the
    student version keeps; without ``train_steps`` there is no such cell."""
    from course_admin.grading import synthetic as grading_dask

    solution = json.loads(grading_dask.synthetic_assignment(tmp_path / "a", train_steps=123).read_text())
    train = [c for c in solution["cells"] if c["metadata"]["nbgrader"]["grade_id"] == "train"]
    assert len(train) == 1 and "range(123)" in "".join(train[0]["source"])
    assert train[0]["metadata"]["nbgrader"]["locked"] and not train[0]["metadata"]["nbgrader"]["grade"]
    student = grading_dask.student_version(solution, "add")
    assert any("range(123)" in "".join(c["source"]) for c in student["cells"])
    plain = json.loads(grading_dask.synthetic_assignment(tmp_path / "b").read_text())
    assert not any(c["metadata"]["nbgrader"]["grade_id"] == "train" for c in plain["cells"])


def test_new_gradebooks_get_nbgrader_s_own_alembic_revision(tmp_path):
    """``nbgrader_run.alembic_head`` (in-process, cached) gives what nbgrader's ``alembic heads``
    subprocess gives, and a gradebook the course creates carries it."""
    import sqlite3
    import subprocess
    import sys
    from pathlib import Path

    from nbgrader.dbutil import _temp_alembic_ini

    from course_admin.grading import student_notebooks
    from course_admin.grading import synthetic as grading_dask
    from course_admin.grading.nbgrader_run import alembic_head

    alembic = str(Path(sys.executable).parent / "alembic")
    with _temp_alembic_ini(f"sqlite:///{tmp_path / 'x.db'}") as ini:
        heads = subprocess.check_output([alembic, "-c", ini, "heads"], text=True)
    assert heads.split()[0] == alembic_head() and len(alembic_head()) == 12
    grading_dask.synthetic_assignment(tmp_path / "solutions")
    student_notebooks.generate_here(tmp_path / "course", [grading_dask.TINY], source=tmp_path / "solutions")
    with sqlite3.connect(tmp_path / "course" / "gradebook.db") as db:
        assert db.execute("SELECT version_num FROM alembic_version").fetchall() == [(alembic_head(),)]


def test_an_answer_that_wraps_course_code_scores_zero_and_the_row_says_why(graded):
    """The same run gives the solution full marks (``test_solution_gets_full_marks``)."""
    _, rows, out = graded
    for student, used in (("wrapped", "course_utils.colour"), ("through_setup", "`colour` of the setup cell")):
        assert rows[student]["test_replay_actor_loss"] == "0" and rows[student]["test_replay_memory"] == "3"
        assert f"test_replay_actor_loss: 0 points, its answer uses course code the exercise does not give it ({used}" \
            in rows[student]["problems"]
    feedback = (out / "feedback" / "wrapped" / f"{ASSIGNMENT}.html").read_text()
    assert "is not available to this exercise&#39;s answer when it is graded" in feedback \
        or "is not available to this exercise's answer when it is graded" in feedback
