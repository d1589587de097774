"""Where the course's files are: every path computed from the package's own location, once.

``PACKAGE`` is this package; ``ROOT`` the folder holding it (the repository in an editable
install), with ``assets/`` (checkpoints, their registry, expected values, the style),
``solutions/`` (instructor notebooks), ``notebooks/`` (released student notebooks) and
``grading/`` (the instructor's nbgrader course folder, out of git).
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
ROOT = PACKAGE.parent
ASSETS = ROOT / "assets"
SOLUTIONS = ROOT / "solutions"
NOTEBOOKS = ROOT / "notebooks"
COURSE_DIR = ROOT / "grading"
