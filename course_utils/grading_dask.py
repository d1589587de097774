"""Grading many submissions at once with Dask, and the grading benchmark.

``grade_all(jobs, ...)`` sends each job to ``grading_worker.grade_submission`` on a Dask
cluster and yields the results as they finish, with a progress bar:

- ``scheduler=None`` (default): a ``LocalCluster`` on this machine, one single-threaded worker
  process per core (``workers`` to choose). Processes, not threads: nbgrader's converters set
  environment variables while they run, so one process grades one submission at a time.
- ``scheduler="tcp://host:8786"``: an existing cluster, e.g. started with ``dask scheduler``
  and ``dask worker`` by hand, dask-jobqueue on Slurm or dask-kubernetes. The workers need
  this repository installed (the same ``course_utils``, nbgrader and tutorial dependencies);
  jobs carry the notebooks as bytes, so no shared filesystem is needed.
- ``workers=0``: no Dask at all, grade in this process one by one (debugging).

A task that fails (a worker lost, an exception) becomes a result with a problem and a zero,
never a stopped run. ``synthetic_assignment`` builds a two-exercise nbgrader assignment used by
the tests and by ``bench_grading``.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import Future
from pathlib import Path

from course_utils.grading_worker import empty_result, grade_submission


def _failed(job: dict, error: BaseException) -> dict:
    return empty_result(job, [f"the grading task failed: {type(error).__name__}: {str(error)[:200]}"])


def start_local_cluster(workers: int | None = None) -> Future:
    """Start a ``LocalCluster`` (``workers`` single-threaded worker processes, default one per
    core) in a background thread; returns a ``concurrent.futures.Future`` of the cluster.

    Starting the worker processes takes seconds (each imports Python, nbgrader and the
    course); ``course autograde`` starts them first and builds the grading jobs meanwhile.
    Pass the future to ``grade_all(cluster=...)``; close it with ``close_cluster`` when done.
    """
    from concurrent.futures import ThreadPoolExecutor

    from distributed import LocalCluster

    def start():
        return LocalCluster(
            n_workers=workers or os.cpu_count() or 1,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",  # any free port: never clash with another cluster
            memory_limit=0,  # the kernels have their own limits; the workers stay small
            silence_logs=logging.ERROR,
        )

    executor = ThreadPoolExecutor(1, thread_name_prefix="course-dask-start")
    future = executor.submit(start)
    executor.shutdown(wait=False)
    return future


def close_cluster(cluster) -> None:
    """Close a cluster, or a ``start_local_cluster`` future once the cluster is up (or failed)."""
    if isinstance(cluster, Future):
        try:
            cluster = cluster.result()
        except Exception:  # it never started: nothing to close
            return
    if cluster is not None:
        cluster.close()


def grade_all(
    jobs: list[dict],
    workers: int | None = None,
    scheduler: str | None = None,
    progress: bool = True,
    timings: dict | None = None,
    cluster=None,
):
    """Yield ``grade_submission(job)`` for every job, in the order they finish. ``timings``
    (if given) gets ``submitted``: the ``time.perf_counter()`` when the cluster was up and
    every task had been sent. ``cluster``: a ``LocalCluster`` or a ``start_local_cluster``
    future to use instead of starting one; it stays the caller's to close. A cluster that
    ``grade_all`` starts itself is closed at the end, whatever happens."""
    timings = timings if timings is not None else {}
    from tqdm.auto import tqdm

    bar = tqdm(total=len(jobs), desc="grading", unit="submission", disable=not progress or not jobs)
    if not jobs:
        bar.close()
        return
    if workers == 0 and scheduler is None:
        timings["submitted"] = time.perf_counter()
        for job in jobs:
            try:
                yield grade_submission(job)
            except Exception as error:  # pragma: no cover - grade_submission catches its own errors
                yield _failed(job, error)
            bar.update()
        bar.close()
        return
    from distributed import Client, wait

    own = scheduler is None and cluster is None
    if own:
        cluster = start_local_cluster(workers)
    try:
        if isinstance(cluster, Future):
            cluster = cluster.result()  # raises if the cluster could not start
        client = Client(cluster if scheduler is None else scheduler)
    except BaseException:
        if own:
            close_cluster(cluster)
        raise
    try:
        futures = {}
        for job in jobs:
            key = f"grade-{job['student']}-{job['assignment']}-{(job.get('key') or '')[:12]}"
            futures[client.submit(grade_submission, job, key=key, pure=False, retries=0)] = job
        timings["submitted"] = time.perf_counter()
        pending = set(futures)
        no_workers_since = None
        while pending:
            try:
                done, pending = wait(pending, timeout=POLL_S, return_when="FIRST_COMPLETED")
            except TimeoutError:  # nothing finished within POLL_S
                done = set()
            for future in done:
                try:
                    yield future.result()
                except Exception as error:
                    yield _failed(futures[future], error)
                bar.update()
            if not pending or done:
                no_workers_since = None
                continue
            # Nothing finished: is anybody still working? A cluster that lost (or never got) its
            # workers would otherwise wait forever; grade what is left here instead.
            if _worker_count(client) > 0:
                no_workers_since = None
            elif no_workers_since is None:
                no_workers_since = time.monotonic()
            elif time.monotonic() - no_workers_since > NO_WORKERS_GRACE_S:
                for future in list(pending):
                    future.cancel()
                    result = _grade_here(futures[future])
                    yield result
                    bar.update()
                pending = set()
    finally:
        bar.close()
        client.close()
        if own:
            close_cluster(cluster)


POLL_S = 10
NO_WORKERS_GRACE_S = 60
"""Seconds with no Dask worker connected (and nothing finishing) before ``grade_all`` grades the
remaining submissions in its own process, so a lost cluster never stalls a run."""


def _worker_count(client) -> int:
    try:
        return len(client.scheduler_info(n_workers=-1).get("workers", {}))
    except TypeError:  # older distributed: no n_workers argument
        return len(client.scheduler_info().get("workers", {}))
    except Exception:
        return 0


def _grade_here(job: dict) -> dict:
    try:
        result = grade_submission(job)
    except Exception as error:  # pragma: no cover - grade_submission catches its own errors
        return _failed(job, error)
    result["problems"] = list(result.get("problems", [])) + [
        "graded in the coordinating process: the Dask cluster had no workers left"
    ]
    return result


# --------------------------------------------------------------------------------------
# A tiny assignment for tests and the benchmark

TINY = "00_tiny"
TINY_SOLUTIONS = {
    "add": "def add(a, b):\n    ### BEGIN SOLUTION\n    return a + b\n    ### END SOLUTION",
    "square": "def square(x):\n    ### BEGIN SOLUTION\n    return x * x\n    ### END SOLUTION",
}
TINY_TESTS = {
    "test_add": (1, "assert add(1, 2) == 3\n### BEGIN HIDDEN TESTS\nassert add(-1, 1) == 0\n### END HIDDEN TESTS"),
    "test_square": (2, "assert square(3) == 9\n### BEGIN HIDDEN TESTS\nassert square(-2) == 4\n### END HIDDEN TESTS"),
}


TRAIN_CELL = """# Like the course's notebooks, every submission trains a model before its exercises:
# logistic regression by gradient descent, a fixed amount of work (about 1 s of CPU per 80000 steps here).
import numpy as np

rng = np.random.default_rng(0)
X = rng.normal(size=(256, 8))
y = (X @ np.arange(8) > 0).astype(float)
w = np.zeros(8)
for step in range({steps}):
    p = 1 / (1 + np.exp(-(X @ w)))
    w -= 0.1 * X.T @ (p - y) / len(y)"""


def synthetic_assignment(folder: str | os.PathLike, name: str = TINY, train_steps: int = 0) -> Path:
    """Write ``folder/<name>.ipynb``: an instructor notebook with two exercises (``add``, 1
    point; ``square``, 2 points) and hidden tests, runnable in about a second. With
    ``train_steps`` it first trains a small model for that many gradient steps (``TRAIN_CELL``,
    a locked cell): a submission that computes, as real ones do, instead of grading overhead only."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    def meta(grade_id, grade=False, solution=False, points=None):
        info = {"grade": grade, "solution": solution, "locked": not solution, "grade_id": grade_id}
        info.update(schema_version=3, task=False)
        if points is not None:
            info["points"] = points
        return {"nbgrader": info}

    cells = [
        new_markdown_cell("# A tiny assignment\nTwo small functions.", metadata=meta("intro")),
        new_code_cell("import math", metadata={**meta("setup"), "tags": ["setup"]}),
    ]
    if train_steps:
        cells.append(new_code_cell(TRAIN_CELL.format(steps=int(train_steps)), metadata=meta("train")))
    for (exercise, solution), (test, (points, source)) in zip(TINY_SOLUTIONS.items(), TINY_TESTS.items(), strict=True):
        cells.append(new_code_cell(solution, metadata=meta(exercise, solution=True)))
        cells.append(new_code_cell(source, metadata=meta(test, grade=True, points=points)))
    kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook = new_notebook(cells=cells, metadata={"kernelspec": kernelspec})
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.ipynb"
    nbformat.write(notebook, path)
    return path


def student_version(solution: dict, *answered: str) -> dict:
    """The released form of a synthetic notebook (solutions stubbed, hidden tests removed),
    with the exercises in ``answered`` filled in with their solutions."""
    notebook = json.loads(json.dumps(solution))
    for cell in notebook["cells"]:
        info = cell["metadata"].get("nbgrader", {})
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if info.get("solution") and info.get("grade_id") not in answered:
            head = source.split("### BEGIN SOLUTION")[0]
            cell["source"] = head + "# YOUR CODE HERE\n    raise NotImplementedError()"
        elif info.get("solution"):
            cell["source"] = source.replace("    ### BEGIN SOLUTION\n", "").replace("\n    ### END SOLUTION", "")
        elif info.get("grade"):
            cell["source"] = source.split("### BEGIN HIDDEN TESTS")[0].rstrip()
    return notebook


# --------------------------------------------------------------------------------------
# Benchmark


def _start_dask_cluster(workers: int) -> tuple[str, list[subprocess.Popen]]:
    """``dask scheduler`` and ``workers`` single-threaded ``dask worker`` processes on
    127.0.0.1, started with the command-line tools as an instructor would."""
    scripts = Path(sys.executable).parent
    dask = str(scripts / "dask")
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        scheduler_file = f.name
    os.unlink(scheduler_file)
    env = {**os.environ, "PATH": str(scripts) + os.pathsep + os.environ.get("PATH", "")}
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": env}
    processes = [
        subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--dashboard-address", ":0",
                          "--scheduler-file", scheduler_file], **quiet)
    ]
    deadline = time.time() + 120
    while not os.path.exists(scheduler_file) or not Path(scheduler_file).read_text().strip():
        if time.time() > deadline:
            raise RuntimeError("dask scheduler did not start")
        time.sleep(0.2)
    time.sleep(0.2)
    address = json.loads(Path(scheduler_file).read_text())["address"]
    for _ in range(workers):
        processes.append(
            subprocess.Popen([dask, "worker", address, "--nthreads", "1", "--nworkers", "1", "--host", "127.0.0.1",
                              "--memory-limit", "0", "--no-dashboard"], **quiet)
        )
    from distributed import Client

    with Client(address) as client:
        client.wait_for_workers(workers, timeout=180)
    return address, processes


def bench_grading(submissions: int = 40, workers: int = 2, train_steps: int = 80_000) -> dict:
    """Submissions per minute for ``submissions`` synthetic submissions (a third full marks,
    a third partial, a third untouched) graded with 1 worker, with ``workers`` workers (local
    cluster), and through a ``dask scheduler`` plus ``workers`` ``dask worker`` processes on
    127.0.0.1.

    Each submission first trains a small model for ``train_steps`` gradient steps (about 1 s
    of CPU; real submissions of this course train for 20 to 70 s), so that the figures are
    about grading work. ``overhead_*`` repeats 1 and ``workers`` workers with no training
    (``train_steps=0``): what is left is nbgrader's and the kernels' own cost per submission,
    where latencies (kernel start-up, polling) weigh most and parallel workers gain least.

    Each run starts from an empty course folder, so nothing is skipped as unchanged.
    ``*_per_minute`` is end to end (course set-up and cluster start-up included);
    ``*_grading_phase_per_minute`` counts from the tasks sent (cluster up) to the last result
    merged. ``*_cores_used`` is the tasks' CPU seconds (grading and kernels) plus the
    coordinator's over the grading phase's wall seconds. On a shared machine the wall
    figures are inflated by other load: see ``load_average_*``."""
    from course_utils import grading

    figures: dict = {"benchmark": "grading", "submissions": submissions, "workers": workers, "cores": os.cpu_count()}
    figures["train_steps"] = train_steps
    figures["load_average_before"] = round(os.getloadavg()[0], 2)
    with tempfile.TemporaryDirectory(prefix="course-bench-grading-") as tmp:
        tmp = Path(tmp)

        def submissions_folder(label: str, steps: int) -> tuple[Path, Path]:
            source = tmp / f"solutions-{label}"
            solution = json.loads(synthetic_assignment(source, train_steps=steps).read_text())
            folder = tmp / f"submissions-{label}"
            folder.mkdir()
            variants = [student_version(solution, "add", "square"), student_version(solution, "add"), student_version(solution)]
            for i in range(submissions):
                (folder / f"student{i:03d}.ipynb").write_text(json.dumps(variants[i % 3]))
            return folder, source

        def run(label: str, folder: Path, source: Path, **kwargs) -> None:
            course = tmp / f"course-{label}"
            children = os.times()
            start, cpu = time.perf_counter(), time.process_time()
            report = grading.autograde(folder, out=tmp / f"out-{label}", course_dir=course, source=source,
                                       progress=False, **kwargs)
            wall = time.perf_counter() - start
            after = os.times()
            graded = sum(s.assignment is not None and not s.problems for s in report.submissions)
            figures[f"{label}_wall_s"] = round(wall, 2)
            figures[f"{label}_coordinator_cpu_s"] = round(time.process_time() - cpu, 2)
            figures[f"{label}_children_cpu_s"] = round(after.children_user + after.children_system
                                                       - children.children_user - children.children_system, 2)
            figures[f"{label}_worker_cpu_s"] = round(sum(report.task_cpu_seconds.values()), 2)
            figures[f"{label}_per_minute"] = round(60 * submissions / wall, 1)
            figures[f"{label}_grading_phase_per_minute"] = round(60 * submissions / report.grading_seconds, 1)
            task_cpu = figures[f"{label}_worker_cpu_s"] + figures[f"{label}_coordinator_cpu_s"]
            figures[f"{label}_cores_used"] = round(task_cpu / report.grading_seconds, 2)
            figures[f"{label}_graded_ok"] = graded

        work = submissions_folder("train", train_steps)
        run("workers_1", *work, workers=1)
        run(f"workers_{workers}", *work, workers=workers)
        address, processes = _start_dask_cluster(workers)
        try:
            run("scheduler", *work, scheduler=address)
        finally:
            for process in processes[::-1]:
                process.terminate()
            for process in processes:
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    process.kill()
        empty = submissions_folder("overhead", 0)
        run("overhead_workers_1", *empty, workers=1)
        run(f"overhead_workers_{workers}", *empty, workers=workers)
    figures[f"speedup_{workers}_vs_1"] = round(figures[f"workers_{workers}_per_minute"] / figures["workers_1_per_minute"], 2)
    figures[f"speedup_{workers}_vs_1_grading_phase"] = round(
        figures[f"workers_{workers}_grading_phase_per_minute"] / figures["workers_1_grading_phase_per_minute"], 2
    )
    figures[f"overhead_speedup_{workers}_vs_1"] = round(
        figures[f"overhead_workers_{workers}_per_minute"] / figures["overhead_workers_1_per_minute"], 2
    )
    figures["load_average_after"] = round(os.getloadavg()[0], 2)
    figures["note"] = "shared machine: wall figures include contention from other jobs; see the cpu figures"
    return figures
