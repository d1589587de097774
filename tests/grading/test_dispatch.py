"""A cluster without workers (lost, or never started) must not stall a grading run: after a grace
period the remaining submissions are graded in the coordinating process, with a note on the run.
A loaded machine must not lose its workers to distributed's idle-machine timeouts: the cluster,
its workers and the client run with ``dispatch.DASK_CONFIG``, and the worker count that decides
the fallback is the scheduler's answer, never a stale copy."""

import csv
import json

import pytest

from course_admin import grading
from course_admin.grading import autograder, dispatch
from course_admin.grading.synthetic import TINY, student_version, synthetic_assignment

pytestmark = pytest.mark.grading


def _ada_and_bob(tmp_path):
    """The synthetic assignment's source and a folder of two submissions: ada (full marks), bob (add only)."""
    solutions = tmp_path / "solutions"
    solution = json.loads(synthetic_assignment(solutions).read_text())
    folder = tmp_path / "submissions"
    folder.mkdir()
    (folder / "ada.ipynb").write_text(json.dumps(student_version(solution, "add", "square")))
    (folder / "bob.ipynb").write_text(json.dumps(student_version(solution, "add")))
    return solutions, folder


def test_grading_finishes_when_the_cluster_has_no_workers(tmp_path, monkeypatch):
    from distributed import LocalCluster

    monkeypatch.setattr(dispatch, "POLL_S", 1)
    monkeypatch.setattr(dispatch, "NO_WORKERS_GRACE_S", 2)
    solutions, folder = _ada_and_bob(tmp_path)
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
    assert report.graded_here == ["ada", "bob"]  # the run says so; the students' rows have no problem from it
    assert not any("worker" in rows[s]["problems"] for s in rows)
    assert "Graded in the coordinating process" in (tmp_path / "out" / "summary.md").read_text()
    assert "Graded in the coordinating process" in (tmp_path / "out" / "summary.html").read_text()


def test_the_local_cluster_runs_with_timeouts_a_loaded_machine_meets(monkeypatch):
    """The values ``course autograde``'s cluster starts with, in the scheduler, in each worker
    process and in this process (the client's side of every connection)."""
    import dask
    from distributed import Client

    assert dispatch.DASK_CONFIG == {
        "distributed.scheduler.worker-ttl": "30 minutes",
        "distributed.comm.timeouts.connect": "120s",
        "distributed.comm.timeouts.tcp": "300s",
    }
    assert dispatch.NO_WORKERS_GRACE_S == 300
    with dask.config.set({key: None for key in dispatch.DASK_CONFIG}):  # whatever was set before: back afterwards
        cluster = dispatch.start_local_cluster(1).result()
        try:
            assert cluster.scheduler.worker_ttl == 30 * 60
            with Client(cluster) as client:
                seen = client.run(lambda: {key: dask.config.get(key) for key in dispatch.DASK_CONFIG})
                assert list(seen.values()) == [dispatch.DASK_CONFIG]
                assert [w["memory_limit"] for w in client.scheduler_info(n_workers=-1)["workers"].values()] == [0]
                assert {key: dask.config.get(key) for key in dispatch.DASK_CONFIG} == dispatch.DASK_CONFIG
        finally:
            dispatch.close_cluster(cluster)


def test_the_worker_count_is_the_schedulers_answer_and_unknown_is_not_zero(dask_scheduler):
    import time

    from distributed import Client

    with Client(dask_scheduler) as client:
        time.sleep(2.5)  # past the client's own refresh of its cached scheduler info, which has no workers
        assert dispatch._worker_count(client) == 1  # the fixture's one worker

    class Unanswered:
        def nthreads(self):
            raise OSError("Timed out trying to connect to tcp://127.0.0.1:8786 after 120 s")

    assert dispatch._worker_count(Unanswered()) is None


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


def test_a_task_the_grader_failed_is_graded_again_at_the_next_run(tmp_path, monkeypatch):
    """A task that fails outright (its worker lost too often, an error in the grader) gives a 0
    with the reason for this run, and is not recorded as graded: the next run grades it."""
    solutions, folder = _ada_and_bob(tmp_path)
    grade = dispatch.grade_submission

    def lost_for_bob(job):
        if job.student == "bob":
            raise RuntimeError("worker tcp://127.0.0.1:4242 lost")
        return grade(job)

    def run():
        report = grading.autograde(folder, out=tmp_path / "out", course_dir=tmp_path / "course", source=solutions,
                                   workers=0, progress=False)
        return report, {row["student"]: row for row in csv.DictReader(report.csv_path.open())}

    monkeypatch.setattr(dispatch, "grade_submission", lost_for_bob)
    report, rows = run()
    assert rows["ada"]["score"] == "3" and rows["bob"]["score"] == "0"
    assert "the grading task failed (RuntimeError: worker tcp://127.0.0.1:4242 lost)" in rows["bob"]["problems"]
    monkeypatch.setattr(dispatch, "grade_submission", grade)
    report, rows = run()
    assert (report.graded_now, report.unchanged) == (1, 1)  # bob again, ada kept
    assert rows["bob"]["score"] == "1" and rows["bob"]["problems"] == ""


def test_a_cluster_started_by_hand_gets_the_same_settings_from_the_environment():
    """``dask_environment()``: what to export before ``dask scheduler`` and ``dask worker`` (and
    what ``course bench grading`` does) for a cluster given to ``--scheduler``."""
    import subprocess
    import sys

    env = {**dispatch.dask_environment(), "PATH": ""}
    assert env["DASK_DISTRIBUTED__SCHEDULER__WORKER_TTL"] == "30 minutes"
    code = f"import dask, distributed; print([dask.config.get(k) for k in {list(dispatch.DASK_CONFIG)!r}])"
    seen = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert seen.strip() == repr(list(dispatch.DASK_CONFIG.values()))


def test_a_scheduler_lost_mid_run_has_the_rest_graded_here(tmp_path, monkeypatch):
    """The scheduler goes away while tasks wait for a worker: distributed cancels their futures
    (and ``wait`` raises); each is graded in this process, none lost, none twice."""
    from distributed import LocalCluster

    monkeypatch.setattr(dispatch, "POLL_S", 1)
    solutions, folder = _ada_and_bob(tmp_path)
    empty = LocalCluster(n_workers=0, processes=False, dashboard_address=":0")  # nothing will run the tasks

    def lose_the_scheduler(client):
        empty.close()
        return None

    monkeypatch.setattr(dispatch, "_worker_count", lose_the_scheduler)
    results = []
    grade_all = dispatch.grade_all

    def recorded(*args, **kwargs):
        for result in grade_all(*args, **kwargs):
            results.append(result.student)
            yield result

    monkeypatch.setattr(dispatch, "grade_all", recorded)
    report = grading.autograde(folder, out=tmp_path / "out", course_dir=tmp_path / "course", source=solutions,
                               scheduler=empty.scheduler_address, progress=False)
    rows = {row["student"]: row for row in csv.DictReader(report.csv_path.open())}
    assert (rows["ada"]["score"], rows["bob"]["score"]) == ("3", "1")
    assert sorted(results) == ["ada", "bob"] and report.graded_here == ["ada", "bob"]


def test_a_grading_worker_does_not_build_the_iri_grammars():
    """Where an older install left rfc3987-syntax, importing the grading task (as each Dask worker
    does) must not build its lark grammars (3.5 s of CPU per process); nbformat still validates."""
    import subprocess
    import sys

    code = ("import sys\nimport course_admin.grading.worker\nimport nbformat\n"
            "nbformat.validate(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('1')]))\n"
            "print(sorted(name for name in sys.modules if name.startswith('rfc3987_syntax.')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_a_source_that_gained_a_graded_cell_over_graded_submissions_says_what_to_do(tmp_path):
    """nbgrader will not add or remove an assignment's cells while its gradebook holds submissions,
    and its own error ends with "see the above traceback": the run stops before grading with the
    reason and the two ways out, and the gradebook keeps what it held."""
    from course_admin.grading.student_notebooks import GradebookConflict

    solutions, folder = _ada_and_bob(tmp_path)
    course = tmp_path / "course"
    grading.autograde(folder, out=tmp_path / "out", course_dir=course, source=solutions, workers=0, progress=False)
    source = solutions / f"{TINY}.ipynb"
    notebook = json.loads(source.read_text())
    extra = {"cell_type": "code", "execution_count": None, "outputs": [], "source": "assert True",
             "metadata": {"nbgrader": {"grade": True, "grade_id": "test_extra", "locked": True, "points": 1,
                                       "schema_version": 3, "solution": False, "task": False}}}
    notebook["cells"].append(extra)
    source.write_text(json.dumps(notebook))
    before = (course / "gradebook.db").read_bytes()
    with pytest.raises(GradebookConflict, match=r"adds or removes cells nbgrader tracks .* move .*course aside"):
        grading.autograde(folder, out=tmp_path / "out2", course_dir=course, source=solutions, workers=0, progress=False)
    assert (course / "gradebook.db").read_bytes() == before


def test_the_local_workers_are_forked_ready_to_grade_and_leave_nothing_behind():
    """The local cluster's workers are forked from one process that imported the grading code
    once (not this one, and single-threaded), each has its kernel zygote started before any task,
    and closing the cluster stops every zygote, their folders, and that process once no other
    local cluster (the session's ``dask_scheduler``, when it runs) forks from it."""
    import glob
    import os
    import time
    from multiprocessing import forkserver

    from distributed import Client

    def state():
        import os
        import sys

        from course_admin.grading import forked_kernels

        zygote = forked_kernels._ZYGOTE.alive()
        return {"pid": os.getpid(), "parent": os.getppid(), "zygote": zygote.pid if zygote else None,
                "imported": "course_admin.grading.worker" in sys.modules and "nbgrader.converters" in sys.modules}

    cluster = dispatch.start_local_cluster(2).result()
    try:
        server = forkserver._forkserver._forkserver_pid
        server_threads = len(os.listdir(f"/proc/{server}/task"))
        with Client(cluster) as client:
            seen = list(client.run(state).values())
    finally:
        dispatch.close_cluster(cluster)
    assert server not in (None, os.getpid()) and server_threads == 1
    assert len(seen) == 2 and {worker["parent"] for worker in seen} == {server}
    assert all(worker["imported"] and worker["zygote"] for worker in seen)
    # the next cluster imports the course's code anew, unless another one still uses the forkserver
    assert (forkserver._forkserver._forkserver_pid is None) == (len(dispatch._OPEN) == 0)
    time.sleep(0.5)
    for worker in seen:
        with pytest.raises(ProcessLookupError):
            os.kill(worker["zygote"], 0)
        assert glob.glob(f"/tmp/course-*-{worker['pid']}-*") == []


def test_autograde_closes_its_cluster_once_every_result_is_in_not_after_the_reports(tmp_path, monkeypatch):
    """The cluster's close (its workers stopping) overlaps the read-back, the CSV and the reports,
    which need no worker; ``autograde`` returns once it is done."""
    from course_admin.grading import similarity

    events, clusters = [], []
    start, soon, pairs = dispatch.start_local_cluster, dispatch.close_cluster_soon, similarity.class_pairs

    def started(workers=None):
        clusters.append(start(workers))
        return clusters[-1]

    def closing(cluster):
        events.append("closing")
        return soon(cluster)

    def compared(*args, **kwargs):
        events.append("similarity")
        return pairs(*args, **kwargs)

    monkeypatch.setattr(dispatch, "start_local_cluster", started)
    monkeypatch.setattr(dispatch, "close_cluster_soon", closing)
    monkeypatch.setattr(similarity, "class_pairs", compared)
    solutions, folder = _ada_and_bob(tmp_path)
    report = grading.autograde(folder, out=tmp_path / "out", course_dir=tmp_path / "course", source=solutions,
                               workers=1, progress=False)
    rows = {row["student"]: row for row in csv.DictReader(report.csv_path.open())}
    assert (rows["ada"]["score"], rows["bob"]["score"]) == ("3", "1")
    assert events == ["closing", "similarity"]
    assert clusters[0].result().status.name == "closed"


def test_the_forkserver_stops_with_the_last_local_cluster_that_uses_it():
    """Two local clusters at once fork their workers from one forkserver: closing the first
    leaves it (and the second's worker) running; closing the second stops it."""
    from multiprocessing import forkserver

    from distributed import Client

    others = len(dispatch._OPEN)  # the session's dask_scheduler cluster, when an earlier test started it
    first = dispatch.start_local_cluster(1)
    first.result()  # one after the other: distributed's first imports are not safe from two threads at once
    second = dispatch.start_local_cluster(1)
    try:
        second.result()
        dispatch.close_cluster(first)
        assert forkserver._forkserver._forkserver_pid is not None
        with Client(second.result()) as client:
            assert client.submit(sum, [1, 2]).result(timeout=120) == 3
    finally:
        dispatch.close_cluster(second)
        dispatch.close_cluster(first)  # a second close of a closed cluster is harmless
    assert (forkserver._forkserver._forkserver_pid is None) == (others == 0)
