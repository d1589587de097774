"""What each worker process of a local grading cluster does as it starts (Dask's worker
``preload``, named by ``dispatch.start_local_cluster``): start its kernel zygote
(``forked_kernels.start_early``), without waiting for it.

The zygote's imports (about 2.3 s of CPU) then run while the coordinator generates the
assignments and prepares the jobs, rather than in the worker's first grading task, which
waited for them before its first kernel. Its CPU is still counted by the submission that first
needs a kernel. A cluster started by hand (``--scheduler``) does not preload this; its workers
start their zygote with their first task, as before.
"""

from __future__ import annotations


def dask_setup(worker) -> None:  # noqa: ARG001 (Dask's preload interface passes the worker)
    from course_admin.grading import forked_kernels

    forked_kernels.start_early()
