"""Grading many submissions at once with Dask.

``grade_all(jobs, ...)`` sends each job to ``worker.grade_submission`` on a Dask
cluster and yields the results as they finish, with a progress bar:

- ``scheduler=None`` (default): a ``LocalCluster`` on this machine, one single-threaded worker
  process per core (``workers`` to choose). Processes, not threads: nbgrader's converters set
  environment variables while they run, so one process grades one submission at a time. The
  workers are forked from one process that imported the grading code once, and start their
  kernel zygote as they start (``start_local_cluster``).
- ``scheduler="tcp://host:8786"``: an existing cluster, e.g. started with ``dask scheduler``
  and ``dask worker`` by hand, dask-jobqueue on Slurm or dask-kubernetes. The workers need
  this repository installed (the same ``course_utils``, nbgrader and tutorial dependencies);
  jobs carry the notebooks as bytes, so no shared filesystem is needed.
- ``workers=0``: no Dask at all, grade in this process one by one (debugging).

A task that fails (an exception, a worker lost more often than ``allowed-failures``) becomes
a result with a problem and a zero for this run, never a stopped run, and is graded again at
the next (``task_failed``). A cluster left with no workers at all
for ``NO_WORKERS_GRACE_S`` has the rest graded in this process (``graded_here`` in the result).

A loaded machine grades like an idle one: ``DASK_CONFIG`` gives the scheduler, the workers and
the client the time a starved process needs before distributed calls a worker lost, and the
worker count that decides the fallback is asked of the scheduler each time (``_worker_count``).
"""

from __future__ import annotations

import logging
import os
import threading
import time
import weakref
from concurrent.futures import CancelledError, Future

from course_admin.grading.worker import GradingJob, GradingResult, grade_submission


class SchedulerUnreachable(ConnectionError):
    """``--scheduler`` named a scheduler that does not answer; the message says what to do."""


DASK_CONFIG = {
    # A worker whose heartbeat has not reached the scheduler for this long is restarted and its
    # task sent to another worker. distributed's 5 minutes is reached on a machine at load 15-22
    # on 2 cores, where a heartbeat's connection can time out again and again (below); a crashed
    # worker is seen at once all the same (its nanny sees the process exit, its sockets close).
    "distributed.scheduler.worker-ttl": "30 minutes",
    # Opening a connection (a worker registering, each heartbeat, the client): distributed's
    # 30 s fails under that load, and a worker that cannot register is not started.
    "distributed.comm.timeouts.connect": "120s",
    # How long sent data may stay unacknowledged (TCP_USER_TIMEOUT) before the connection is
    # called dead, and with it the worker on its other end: 30 s in distributed. A reader
    # starved of CPU leaves its peer's data unread that long; a dead local process's sockets
    # are closed by the kernel at once, so a long timeout delays no real failure here.
    "distributed.comm.timeouts.tcp": "300s",
}
"""The ``distributed`` settings every grading cluster, its workers and its client run with
(``use_grading_config``)."""


def use_grading_config() -> None:
    """Set ``DASK_CONFIG`` in this process, for good: the scheduler of a local cluster reads it
    when it starts, each nanny hands its worker process a copy, and the client and scheduler
    read the timeouts whenever they connect. A cluster started elsewhere (``--scheduler``) keeps
    its own settings unless started with ``dask_environment()``."""
    import dask

    dask.config.set(DASK_CONFIG)


def dask_environment() -> dict[str, str]:
    """``DASK_CONFIG`` as the environment variables Dask reads at start-up
    (``DASK_DISTRIBUTED__SCHEDULER__WORKER_TTL``, ...): for a ``dask scheduler`` and ``dask worker``
    started by hand, so that a cluster given to ``--scheduler`` runs with the same settings."""
    return {"DASK_" + key.upper().replace(".", "__").replace("-", "_"): value for key, value in DASK_CONFIG.items()}


def start_local_cluster(workers: int | None = None) -> Future:
    """Start a ``LocalCluster`` (``workers`` single-threaded worker processes, default one per
    core) in a background thread; returns a ``concurrent.futures.Future`` of the cluster.

    Starting the worker processes takes seconds (Python, distributed, nbgrader and the course
    imported once in the forkserver they are forked from, ``_fork_workers_from_one_import``;
    then each worker's kernel zygote, ``worker_start``); ``course autograde`` starts them first
    and builds the grading jobs meanwhile. Pass the future to ``grade_all(cluster=...)``; close
    it with ``close_cluster`` (or ``close_cluster_soon``) when done.
    """
    from concurrent.futures import ThreadPoolExecutor

    from distributed import LocalCluster

    use_grading_config()  # here, not in the thread: the nannies copy the config when they are made
    _fork_workers_from_one_import()

    def start():
        global _STARTING
        with _FORKSERVER_USERS:
            _STARTING += 1
        try:
            cluster = LocalCluster(
                n_workers=workers or os.cpu_count() or 1,
                threads_per_worker=1,
                processes=True,
                dashboard_address=":0",  # any free port: never clash with another cluster
                memory_limit=0,  # the kernels have their own limits; the workers stay small
                silence_logs=logging.ERROR,
                preload=[WORKER_START],
            )
            _OPEN.add(cluster)
            return cluster
        finally:
            with _FORKSERVER_USERS:
                _STARTING -= 1

    executor = ThreadPoolExecutor(1, thread_name_prefix="course-dask-start")
    future = executor.submit(start)
    executor.shutdown(wait=False)
    return future


WORKER_START = "course_admin.grading.worker_start"
"""The module each local worker process runs as it starts (Dask's worker ``preload``)."""
WORKER_IMPORTS = (
    "distributed",
    "course_admin.grading.worker",
    "nbgrader.converters",
    "nbgrader.api",
    "nbconvert.preprocessors",
    "course_admin.grading.sanitize",
    "course_admin.grading.feedback_policy",
    "course_admin.grading.drive_apart",
    "course_admin.grading.judging",
    "course_admin.grading.skip_cells",
    WORKER_START,
)
"""What a local cluster's worker processes are forked from (``_fork_workers_from_one_import``):
distributed and the modules every grading task imports, none of which starts a thread or
runs course or student code at import."""


def _fork_workers_from_one_import() -> None:
    """Have the local cluster's nannies fork their worker processes from one ``forkserver``
    process that imported ``WORKER_IMPORTS`` once (multiprocessing's ``forkserver`` method),
    instead of each worker starting Python and importing them itself (``spawn``): 2 workers
    on 2 cores otherwise paid the same imports twice at once. The forkserver is a fresh
    interpreter (nothing of this process's memory), single-threaded when it forks; it lives
    until ``close_cluster`` stops it, so that a later cluster of this process imports the
    course's code as it is then."""
    import multiprocessing

    import dask
    from distributed import utils

    dask.config.set({"distributed.worker.multiprocessing-method": "forkserver"})
    multiprocessing.get_context("forkserver").set_forkserver_preload(list(WORKER_IMPORTS))
    # distributed sets its own list on its first forkserver start unless told it is set: its
    # list imports pandas and NumPy (here first), which no grading task needs
    utils._forkserver_preload_set = True


_FORKSERVER_USERS = threading.Lock()
_STARTING = 0
"""Local clusters being started now (their workers are being forked)."""
_OPEN: weakref.WeakSet = weakref.WeakSet()
"""Local clusters started and not closed yet: their workers share the forkserver."""


def _stop_forkserver() -> None:
    """Stop this process's forkserver once no local cluster of this process is open or starting
    (it waits for the forkserver's children, their workers, to end); the next cluster starts one
    anew. Nothing to do where there is none."""
    from multiprocessing import forkserver

    stop = getattr(forkserver._forkserver, "_stop", None)  # noqa: SLF001 (the stdlib gives no public stop)
    with _FORKSERVER_USERS:
        if stop is not None and not _STARTING and not len(_OPEN):
            stop()


def close_cluster(cluster) -> None:
    """Close a cluster, or a ``start_local_cluster`` future once the cluster is up (or failed),
    then the forkserver its workers were forked from when no other local cluster uses it."""
    if isinstance(cluster, Future):
        try:
            cluster = cluster.result()
        except Exception:  # it never started: nothing to close
            _stop_forkserver()
            return
    if cluster is not None:
        cluster.close()
        _OPEN.discard(cluster)
        _stop_forkserver()


def close_cluster_soon(cluster) -> Future:
    """``close_cluster(cluster)`` in a background thread, for a run that has every result and
    goes on with work that needs no worker (reading the gradebook back, the CSV, the reports):
    closing a local cluster waits about 2 s for its workers to stop. Returns the close's
    ``Future``; its ``result()`` waits for it and raises what the close raised."""
    from concurrent.futures import ThreadPoolExecutor

    executor = ThreadPoolExecutor(1, thread_name_prefix="course-dask-close")
    future = executor.submit(close_cluster, cluster)
    executor.shutdown(wait=False)
    return future


def grade_all(
    jobs: list[GradingJob],
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
                yield GradingResult.failed(job, error)
            bar.update()
        bar.close()
        return
    from distributed import Client, wait

    use_grading_config()
    own = scheduler is None and cluster is None
    if own:
        cluster = start_local_cluster(workers)
    try:
        if isinstance(cluster, Future):
            cluster = cluster.result()  # raises if the cluster could not start
        client = Client(cluster if scheduler is None else scheduler)
    except BaseException as error:
        if own:
            close_cluster(cluster)
        if scheduler is not None and isinstance(error, OSError):  # nothing was graded or recorded yet
            raise SchedulerUnreachable(f"cannot reach the Dask scheduler at {scheduler} ({error}): start it "
                                       "(dask scheduler) or check --scheduler; nothing was graded") from error
        raise
    try:
        futures = {}
        for job in jobs:
            key = f"grade-{job.student}-{job.assignment}-{(job.key or '')[:12]}"
            futures[client.submit(grade_submission, job, key=key, pure=False, retries=0)] = job
        timings["submitted"] = time.perf_counter()
        pending = set(futures)
        no_workers_since = None
        while pending:
            try:
                done, pending = wait(pending, timeout=POLL_S, return_when="FIRST_COMPLETED")
            except TimeoutError:  # nothing finished within POLL_S
                done = set()
            except CancelledError:  # distributed's FuturesCancelledError: the client lost its scheduler
                done = {future for future in pending if future.cancelled() or future.done()}
                pending = pending - done
            for future in done:
                if future.cancelled():  # not by us: the client lost its scheduler; grade it here
                    yield _grade_here(futures[future])
                    bar.update()
                    continue
                try:
                    yield future.result()
                except Exception as error:
                    yield GradingResult.failed(futures[future], error)
                bar.update()
            if not pending or done:
                no_workers_since = None
                continue
            # Nothing finished: is anybody still working? A cluster that lost (or never got) its
            # workers would otherwise wait forever; grade what is left here instead. A count the
            # scheduler did not give (None: it did not answer in time) neither starts nor stops
            # the clock: only the scheduler saying "no workers" for the whole grace period does.
            count = _worker_count(client)
            if count is None:
                continue
            if count > 0:
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
NO_WORKERS_GRACE_S = 300
"""Seconds with no Dask worker connected (and nothing finishing) before ``grade_all`` grades the
remaining submissions in its own process, so a lost cluster never stalls a run. A nanny
restarting its worker leaves the cluster with none for as long as the start takes: 2.4 s of
CPU (Python, distributed, nbgrader and the course), about half a minute at load 20 on 2 cores;
the grace is several times that."""


def _worker_count(client) -> int | None:
    """How many workers the scheduler has now, asked of it (``Client.nthreads``); None when it
    cannot say (no answer in time, a lost connection).

    Never ``Client.scheduler_info()``: when its fresh query fails it returns, without an error,
    the client's cached copy, and the client refreshes that copy every 2 s without the workers
    (``n_workers=0``), so a slow scheduler read as "no workers"."""
    try:
        return len(client.nthreads())
    except Exception:
        return None


def _grade_here(job: GradingJob) -> GradingResult:
    try:
        result = grade_submission(job)
    except Exception as error:  # pragma: no cover - grade_submission catches its own errors
        return GradingResult.failed(job, error)
    result.graded_here = True  # the same grading, elsewhere: a note for the run's summary, not the student's row
    return result
