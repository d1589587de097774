"""The instructor's side of rl-course, beside the student package ``course_utils``.

Students install ``course_utils`` alone (the student wheel of ``course bundle``); instructors and
the course's developers install both. ``course_utils`` never imports this package (``make lint``
holds the contract). What is here:

- ``grading/``: releasing student notebooks, harvesting solutions, autograding a class
  (``course release``, ``course autograde``, ``course bundle``)
- ``harlow``, ``colour``, ``lunar``, ``replay``: per tutorial, the reference solutions harvested
  from ``solutions/`` (``solutions``), ``course train`` (``train``; tutorial 3's stored runs and
  expected values: ``lunar.reference``) and the benchmarks (``bench``)
- ``exercises``: the exercise index (every graded cell, its solution, check, hidden test and hint
  tests; ``course where``: ``where``); ``claims``: the claims audit (``course claims``);
  ``notebook_names``: which cell of a notebook makes which name (for the setup cell's NameErrors)
- ``bench``: the ``course bench`` registry; ``ci``: CI timed on a clean clone;
  ``notebook_timing``: every tutorial run at full size, timed per cell; ``schedule``: the
  course's timetable, which ``course release`` writes into the README and the notebooks
- ``cli``: the instructor's ``course`` commands (``course_utils.cli`` adds them when this package
  is installed)
"""

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
"""This package's folder (beside ``course_utils``'s): where ``course release`` writes the harvested
solutions. The sandbox's launcher computes it on its own (``grading.kernel_restrictions.ADMIN``):
it runs with the standard library only."""
