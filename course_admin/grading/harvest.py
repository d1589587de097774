"""Reference solutions harvested from the solution notebooks: ``course release`` writes them.

Every exercise is written once, in a solution cell of ``solutions/*.ipynb``. The package needs
the same code on the instructor's side (to train checkpoints, compute expected values, run
benchmarks), so, the way d2l harvests its ``#@save`` cells into its package, ``write_solutions``
copies every code solution cell of a tutorial, in notebook order and without nbgrader's
``### BEGIN/END SOLUTION`` markers, into ``course_admin/<tutorial>/solutions.py`` under the
imports the notebook gives those cells (``exercises.SOLUTION_IMPORTS``). Each copy names its
cell. ``stale_solutions`` (part of ``course release --check``) says when a harvested module no
longer matches its notebook. They live in the instructor package, which the student wheel leaves out.
"""

from __future__ import annotations

import json
from pathlib import Path

from course_admin import PACKAGE as ADMIN
from course_admin.exercises import SOLUTION_IMPORTS, TUTORIALS
from course_admin.grading.cells import cell_source, nbgrader_meta, solution_code
from course_utils.paths import SOLUTIONS


def solution_cells(notebook: Path) -> list[tuple[str, str]]:
    """``(grade_id, source)`` of every code solution cell of ``notebook``, in order, markers removed."""
    cells = []
    for cell in json.loads(Path(notebook).read_text())["cells"]:
        meta = nbgrader_meta(cell)
        if cell["cell_type"] == "code" and meta.get("solution"):
            cells.append((meta["grade_id"], solution_code(cell_source(cell))))
    return cells


def module_text(tutorial: str, source: Path = SOLUTIONS) -> str:
    """The harvested ``solutions.py`` of ``tutorial`` (a key of ``exercises.TUTORIALS``)."""
    name = TUTORIALS[tutorial]
    parts = [
        f'"""Reference solutions of tutorial {name[:2].lstrip("0")}\'s graded exercises, harvested by `course release`\n'
        f"from the solution cells of solutions/{name}.ipynb: edit the notebook, not this file.\n\n"
        "The instructor package uses them to train checkpoints, compute expected values and run\n"
        'benchmarks; the student package does not hold them."""\n\n'
        "from __future__ import annotations\n\n" + SOLUTION_IMPORTS[tutorial].strip("\n")
    ]
    for grade_id, code in solution_cells(Path(source) / f"{name}.ipynb"):
        parts.append(f"# Solution cell {grade_id!r}\n{code}")
    return "\n\n\n".join(parts) + "\n"


def solutions_path(tutorial: str) -> Path:
    return ADMIN / tutorial / "solutions.py"


def write_solutions(source: Path = SOLUTIONS) -> list[Path]:
    """Write every tutorial's ``solutions.py``; returns the paths."""
    written = []
    for tutorial in TUTORIALS:
        path = solutions_path(tutorial)
        path.write_text(module_text(tutorial, source))
        written.append(path)
    return written


def stale_solutions(source: Path = SOLUTIONS) -> list[str]:
    """Descriptions of every harvested module that differs from its notebook (empty: current)."""
    problems = []
    for tutorial, name in TUTORIALS.items():
        path = solutions_path(tutorial)
        if not path.exists() or path.read_text() != module_text(tutorial, source):
            problems.append(f"course_admin/{tutorial}/solutions.py differs from the solution cells of solutions/{name}.ipynb")
    return problems
