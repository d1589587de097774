"""``course where GRADE_ID``: every place one graded exercise is written, as ``path:line``.

A teaching assistant who wants to change an exercise needs its parts: the row of the exercise
index, the solution cell, the student's check cell and the hidden-test cell in the solution
notebook, the ``Exercise`` the two cells share (its cases, drive and judge), the check function,
the harvested solution, the helpers it gives the student, the course modules hidden from its
answer when it is graded (``twins``) and the tests that prove its hints. ``where(grade_id)``
finds each of them from the index and the code itself, so the answer cannot go stale.

Notebook places are lines of the ``.ipynb`` file (the cell's ``"id"`` line: editors open a
notebook there) with the cell's index and id beside them.
"""

from __future__ import annotations

import ast
import inspect
import json
from importlib import import_module
from pathlib import Path

from course_admin import PACKAGE as ADMIN
from course_admin.exercises import GRADED, TUTORIALS, GradedCell
from course_utils.paths import ROOT, SOLUTIONS


class WhereError(LookupError):
    """The grade id is not in the exercise index; the message lists the ones that are."""


def _relative(path: Path | str) -> str:
    path = Path(path).resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def _line_of(path: Path, needle: str, start: int = 0) -> int:
    """1-based number of the first line of ``path`` (from line ``start``) containing ``needle``."""
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if number > start and needle in line:
            return number
    raise LookupError(f"{needle!r} is not in {_relative(path)}")


def _source_place(obj) -> str:
    """``path:line`` where a function, class or method is defined."""
    obj = inspect.unwrap(obj)
    if inspect.ismethod(obj):
        obj = obj.__func__
    return f"{_relative(inspect.getsourcefile(obj))}:{inspect.getsourcelines(obj)[1]}"


def _binding_place(module_name: str, name: str) -> str:
    """``path:line`` of ``name`` in a module: its definition, or the assignment that binds it."""
    module = import_module(module_name)
    value = getattr(module, name)
    if inspect.isfunction(value) or inspect.isclass(value):
        return _source_place(value)
    path = Path(inspect.getsourcefile(module))
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if (alias.asname or alias.name) == name:  # a re-export: where it is written
                    return _binding_place(node.module, alias.name)
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return f"{_relative(path)}:{node.lineno}"
    return f"{_relative(path)}:1"


def _notebook_cells(tutorial: str) -> tuple[Path, list[dict]]:
    path = SOLUTIONS / f"{TUTORIALS[tutorial]}.ipynb"
    return path, json.loads(path.read_text())["cells"]


def _cell_place(path: Path, cells: list[dict], index: int) -> str:
    cell_id = cells[index].get("id", "")
    line = _line_of(path, f'"id": "{cell_id}"') if cell_id else 1
    return f"{_relative(path)}:{line} (cell {index}, id {cell_id})"


def _grade_index(cells: list[dict], grade_id: str) -> int:
    for index, cell in enumerate(cells):
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id:
            return index
    raise LookupError(f"no cell with grade id {grade_id!r}")


def _hidden_import(source: str) -> tuple[str, str] | None:
    """(module, name) of the ``Exercise`` a hidden-test cell imports and submits to."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.names:
            if f"{node.names[0].asname or node.names[0].name}.submit(" in source:
                return node.module, node.names[0].name
    return None


def where(grade_id: str) -> list[tuple[str, str]]:
    """Every place of the graded cell ``grade_id`` (or of the graded cells of the solution cell
    with that grade id), as (what, ``path:line``) pairs, in the order a reader would visit them."""
    cells = [cell for cell in GRADED if grade_id in (cell.grade_id, cell.solution)]
    if not cells:
        known = ", ".join(cell.grade_id for cell in GRADED)
        raise WhereError(f"{grade_id!r} is not a graded cell of the course. Graded cells: {known}")
    places: list[tuple[str, str]] = []
    for cell in cells:
        places += _places(cell)
    return places


def _places(cell: GradedCell) -> list[tuple[str, str]]:
    index_file = Path(import_module("course_admin.exercises").__file__)
    quoted = '"' + cell.grade_id + '"'
    places = [("index row", f"{_relative(index_file)}:{_line_of(index_file, quoted)}")]
    path, cells = _notebook_cells(cell.tutorial)
    solution = _grade_index(cells, cell.solution)
    places.append(("solution cell", _cell_place(path, cells, solution)))
    if cell.manual:
        places.append(("harvested model answer", "none: a written answer, graded by hand in formgrader"))
        return places
    module_name, function = cell.check.split(":")
    hidden = _grade_index(cells, cell.grade_id)
    for index in range(solution + 1, hidden):
        if cells[index]["cell_type"] == "code" and f"{function}(" in "".join(cells[index]["source"]):
            places.append(("check cell", _cell_place(path, cells, index)))
            break
    places.append(("hidden-test cell", _cell_place(path, cells, hidden)))
    exercise = _hidden_import("".join(cells[hidden]["source"]))
    if exercise is not None:
        places.append(("Exercise", _binding_place(*exercise)))
        value = getattr(import_module(exercise[0]), exercise[1])
        for part in ("cases", "drive", "judge"):
            places.append((f"  {part}", _source_place(getattr(value, part))))
    places.append(("check function", _binding_place(module_name, function)))
    harvested = ADMIN / cell.tutorial / "solutions.py"
    places.append(("harvested solution", f"{_relative(harvested)}:{_line_of(harvested, f'# Solution cell {cell.solution!r}')}"))
    for helper in cell.helpers:
        places.append((f"helper {helper}", _binding_place(*helper.split(":"))))
    for twin in cell.twins:
        places.append((f"hidden when graded: {twin}", f"{_relative(import_module(twin).__file__)}:1"))
    for test in cell.hint_tests:
        file, _, name = test.partition("::")
        places.append(("hint test", f"{file}:{_line_of(ROOT / file, f'def {name}(')}"))
    return places


def report(grade_id: str) -> str:
    """``where(grade_id)`` as aligned lines for the terminal."""
    places = where(grade_id)
    width = max(len(what) for what, _ in places)
    return "\n".join(f"{what:<{width}}  {place}" for what, place in places)
