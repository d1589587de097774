"""A cluster without workers (lost, or never started) must not stall a grading run: after a grace
period the remaining submissions are graded in the coordinating process, with a note."""

import csv
import json

import pytest

from course_utils import grading, grading_dask
from course_utils.grading_dask import student_version, synthetic_assignment

pytestmark = pytest.mark.grading


def test_grading_finishes_when_the_cluster_has_no_workers(tmp_path, monkeypatch):
    from distributed import LocalCluster

    monkeypatch.setattr(grading_dask, "POLL_S", 1)
    monkeypatch.setattr(grading_dask, "NO_WORKERS_GRACE_S", 2)
    solutions = tmp_path / "solutions"
    solution = json.loads(synthetic_assignment(solutions).read_text())
    folder = tmp_path / "submissions"
    folder.mkdir()
    (folder / "ada.ipynb").write_text(json.dumps(student_version(solution, "add", "square")))
    (folder / "bob.ipynb").write_text(json.dumps(student_version(solution, "add")))
    with LocalCluster(n_workers=0, processes=False, dashboard_address=":0") as empty:
        report = grading.autograde(
            folder, out=tmp_path / "out", course_dir=tmp_path / "course", source=solutions,
            scheduler=empty.scheduler_address, progress=False,
        )
    rows = {row["student"]: row for row in csv.DictReader(report.csv_path.open())}
    assert (float(rows["ada"]["score"]), float(rows["bob"]["score"])) == (3.0, 1.0)
    assert all("no workers left" in rows[s]["problems"] for s in rows)
