"""Release and grading: the instructor's side of the course, apart from the tutorials.

Modules, from the bottom up (each imports only those above it in this list):

- ``sandbox``: limits, Landlock, capabilities, seccomp and the process tree a submission's
  kernel runs in (standard library only: it is also the kernel launcher script)
- ``sanitize``: student content made inert for the instructor's browser, CSV and terminal
- ``intake``: reading a folder of submissions, student ids, notebooks made gradable
- ``synthetic``: a tiny assignment for tests and the benchmark
- ``nbgrader_run``: the course's nbgrader configuration and converters run in process
- ``student_notebooks``: student notebooks from ``solutions/`` (``course release``)
- ``worker``: grading one submission (the Dask task)
- ``dispatch``: many submissions on a Dask cluster
- ``autograder``: a class, end to end (``course autograde``)
- ``bench``: ``course bench grading``

This front door loads a module only when one of its names is used: ``grading.autograde``,
``grading.release``, ``grading.stale_notebooks``.
"""

from __future__ import annotations

import importlib

_NAMES = {
    "autograde": "course_utils.grading.autograder",
    "Report": "course_utils.grading.autograder",
    "release": "course_utils.grading.student_notebooks",
    "stale_notebooks": "course_utils.grading.student_notebooks",
    "assignments": "course_utils.grading.student_notebooks",
    "bench_grading": "course_utils.grading.bench",
}


def __getattr__(name: str):
    if name in _NAMES:
        return getattr(importlib.import_module(_NAMES[name]), name)
    raise AttributeError(f"module 'course_utils.grading' has no attribute {name!r}")


__all__ = sorted(_NAMES)
