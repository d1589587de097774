"""A cluster without workers (lost, or never started) must not stall a grading run: after a grace
period the remaining submissions are graded in the coordinating process, with a note."""

import csv
import json

import pytest

from course_admin import grading
from course_admin.grading import autograder, dispatch
from course_admin.grading.synthetic import student_version, synthetic_assignment

pytestmark = pytest.mark.grading


def test_grading_finishes_when_the_cluster_has_no_workers(tmp_path, monkeypatch):
    from distributed import LocalCluster

    monkeypatch.setattr(dispatch, "POLL_S", 1)
    monkeypatch.setattr(dispatch, "NO_WORKERS_GRACE_S", 2)
    solutions = tmp_path / "solutions"
    solution = json.loads(synthetic_assignment(solutions).read_text())
    folder = tmp_path / "submissions"
    folder.mkdir()
    (folder / "ada.ipynb").write_text(json.dumps(student_version(solution, "add", "square")))
    (folder / "bob.ipynb").write_text(json.dumps(student_version(solution, "add")))
    with LocalCluster(n_workers=0, processes=False, dashboard_address=":0") as empty:
        report = grading.autograde(
            folder,
            out=tmp_path / "out",
            course_dir=tmp_path / "course",
            source=solutions,
            scheduler=empty.scheduler_address,
            progress=False,
        )
    rows = {row["student"]: row for row in csv.DictReader(report.csv_path.open())}
    assert (float(rows["ada"]["score"]), float(rows["bob"]["score"])) == (3.0, 1.0)
    assert all("no workers left" in rows[s]["problems"] for s in rows)


def test_autograde_starts_the_cluster_first_and_closes_it_when_preparation_fails(tmp_path, monkeypatch):
    """The local cluster starts (in the background) before the jobs are prepared; if preparing
    them fails, the cluster is closed all the same and the error reaches the instructor."""
    from concurrent.futures import Future

    events = []

    class FakeCluster:
        def close(self):
            events.append("closed")

    def fake_start(workers=None):
        events.append(f"started with {workers} workers")
        future = Future()
        future.set_result(FakeCluster())
        return future

    def broken_assignments(source):
        events.append("preparing")
        raise RuntimeError("no instructor notebooks")

    monkeypatch.setattr(dispatch, "start_local_cluster", fake_start)
    monkeypatch.setattr(autograder, "assignments", broken_assignments)
    (tmp_path / "subs").mkdir()
    with pytest.raises(RuntimeError, match="no instructor notebooks"):
        grading.autograde(tmp_path / "subs", out=tmp_path / "out", course_dir=tmp_path / "course", workers=2, progress=False)
    assert events == ["started with 2 workers", "preparing", "closed"]
    events.clear()
    with pytest.raises(RuntimeError, match="no instructor notebooks"):  # workers=0: no cluster at all
        grading.autograde(tmp_path / "subs", out=tmp_path / "out", course_dir=tmp_path / "course", workers=0, progress=False)
    assert events == ["preparing"]
