"""Grading many submissions at once with Dask.

``grade_all(jobs, ...)`` sends each job to ``worker.grade_submission`` on a Dask
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
never a stopped run.
"""

from __future__ import annotations

import logging
import os
import time
from concurrent.futures import Future

from course_admin.grading.worker import empty_result, grade_submission


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
