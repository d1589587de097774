"""Where the course's files are: every path computed here, once.

``ASSETS`` (checkpoints, their registry, expected values, the style) comes from the installed
package: ``course_utils.assets``, which ``pyproject.toml`` maps to this repository's ``assets/``
folder, so a wheel installed anywhere carries them (importlib.resources finds them there; an
editable install finds them in the repository). Running from a source tree that was never
installed falls back to ``ROOT / "assets"``.

``PACKAGE`` is this package; ``ROOT`` the folder holding it (the repository in an editable
install), with ``solutions/`` (instructor notebooks), ``notebooks/`` (released student
notebooks) and ``grading/`` (the instructor's nbgrader course folder, out of git): instructor
files that an installed student package does not have.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
ROOT = PACKAGE.parent
try:
    ASSETS = Path(str(resources.files("course_utils.assets")))
except ModuleNotFoundError:  # a source tree on sys.path, never installed
    ASSETS = ROOT / "assets"
SOLUTIONS = ROOT / "solutions"
NOTEBOOKS = ROOT / "notebooks"
COURSE_DIR = ROOT / "grading"
