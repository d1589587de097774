"""Release and grading: the instructor's side of the course, apart from the tutorials.

Modules, from the bottom up (each imports only those above it in this list):

- ``cgroups``, ``processes``: the cgroup filesystem; processes through ``/proc`` and signals
- ``process_tree``: every process of one submission's kernel, found and killed (cgroups or a
  fallback without them)
- ``kernel_restrictions``: rlimits, Landlock, no capabilities and seccomp, applied by the
  launcher to the kernel's own process
- ``sandbox``: the limits a submission gets, the kernel's clean environment, and the kernel
  launcher script (it and the four modules above: standard library only)
- ``html_cleaning``, ``escaping``: HTML and SVG made inert (allow-lists, checks, bleach);
  names and messages made safe for a CSV file, the terminal and a markdown table
- ``markdown_cleaning``: markdown made inert, rendered and checked as nbconvert renders it
- ``sanitize``: whole notebooks made inert for formgrader and the feedback HTML, and the
  nbconvert preprocessor and ``GenerateFeedback`` configuration that run it
- ``intake``: reading a folder of submissions, student ids
- ``lms_layout``, ``roster``: Canvas's and Moodle's download names; the class list and who
  matches whom; ``term``: the term file (due dates, extensions, late and feedback policies)
- ``notebook_repair``: a submitted notebook made gradable against the released one
- ``notebook_size``: the autograded notebook held under a size cap, whatever its parts
- ``synthetic``: a tiny assignment for tests and the benchmark
- ``harvest``: the graded exercises' solution cells copied into each tutorial's ``solutions``
  module (``course release``; checked by ``course release --check``)
- ``nbgrader_run``: the course's nbgrader configuration and converters run in process
- ``student_notebooks``: student notebooks from ``solutions/`` (``course release``)
- ``feedback_policy``: what a student's feedback page shows of the hidden tests
- ``feedback_page``: the feedback page's exporter (templates compiled once, no BeautifulSoup pass)
- ``worker``: grading one submission (the Dask task)
- ``dispatch``: many submissions on a Dask cluster
- ``class_list``: each submission's student (LMS ids, the roster, the latest upload), and the
  roster students with no submission; ``late``: submission times, lateness and penalties;
  ``lms_export``: Canvas's gradebook import CSV and Moodle's grading worksheet;
  ``similarity``: answers that look copied (copydetect), for the instructor to look at
- ``autograder``: a class, end to end (``course autograde``)
- ``bench``: ``course bench grading``; ``bundle``: the student bundle (``course bundle OUT``)

This front door loads a module only when one of its names is used: ``grading.autograde``,
``grading.release``, ``grading.stale_notebooks``.
"""

from __future__ import annotations

import importlib
import sys

# jsonschema (which nbformat imports) imports rfc3987-syntax where it is installed, to check the
# "iri" string formats, and that builds its lark grammars at import: 3.5 s of CPU (4.4 s on a
# loaded machine) in the coordinator and again in every grading worker. ``make install`` leaves
# the package out (requirements-overrides.txt), but an environment installed before that keeps
# it. Nothing in grading validates an IRI; the import failing leaves those formats unchecked.
sys.modules.setdefault("rfc3987_syntax", None)

_NAMES = {
    "autograde": "course_admin.grading.autograder",
    "Report": "course_admin.grading.autograder",
    "release": "course_admin.grading.student_notebooks",
    "stale_notebooks": "course_admin.grading.student_notebooks",
    "assignments": "course_admin.grading.student_notebooks",
    "bench_grading": "course_admin.grading.bench",
}


def __getattr__(name: str):
    if name in _NAMES:
        return getattr(importlib.import_module(_NAMES[name]), name)
    raise AttributeError(f"module 'course_admin.grading' has no attribute {name!r}")


__all__ = sorted(_NAMES)
