"""Grading runs only what grades depend on: given cells no graded cell needs are not executed.

A course notebook's hidden tests are driven apart (``drive_apart``): their records come from the
header, the answer cells and the hidden cell, run in a runner of their own, never from the
kernel. What the kernel runs of a submission is then for the outputs formgrader and the feedback
show, and for any hidden test still judged in the kernel. The given demonstrations, experiments,
animations, plots and check cells of a tutorial cost most of that run (tutorial 3's experiments
alone are most of its grading time) and feed no grade.

``marks(notebook)`` computes, from the instructor's notebook (whose answer cells hold the
solutions, so that what an answer needs from a given cell is seen), the given code cells no
kept cell depends on. Kept cells are the answer cells (nbgrader ``solution``), every graded cell, and the
given cells an instructor pins with ``"course": {"grading": "run"}`` in the cell's metadata; a
given cell that binds a name a kept cell uses (read from the code, the way Python resolves a
global name) is kept too, and so on until nothing changes. The marks are computed rather than
stored in the notebook so that they cannot go stale when a cell changes.

In a submission (``SkipGivenCells``, before execution), a cell is skipped only if its cell id is
marked and its source is the released source, unchanged: a given cell the student edited, and
every cell the student added, runs. The same closure is then taken over the submission itself,
so that a cell of the student's that uses a name only a skipped cell binds brings that cell back.
Which cells were not run is in ``resources["skip_cells"]`` (never in the notebook, which the
student wrote), for ``worker.LimitedExecute``. Where any autograded test still runs in the kernel
(``kernel_tests``), nothing is skipped: such a test can depend on what a given cell does
without binding a name (a seed it sets), which the name analysis cannot see.
"""

from __future__ import annotations

import ast
import hashlib
import json
from pathlib import Path

from nbconvert.preprocessors import Preprocessor
from traitlets import Bool, Unicode

from course_admin.grading.cells import cell_source

PIN = "run"
"""``cell.metadata["course"]["grading"]`` value that keeps a given cell run when grading."""


def _digest(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()


DYNAMIC = frozenset({"eval", "exec", "globals", "locals", "vars"})
"""Builtins through which a cell can read any global by a name computed at run time: a cell that
calls one (or names it) reads every name (``EVERY_NAME``)."""
EVERY_NAME = "*"
"""In a cell's reads: it may read any global (``DYNAMIC``)."""


def cell_names(source: str) -> tuple[set[str], set[str]] | None:
    """(names the cell binds at its top level, names it reads as globals), or None when the cell
    cannot be parsed (IPython syntax is translated first): such a cell is always kept."""
    import symtable

    from IPython.core.inputtransformer2 import TransformerManager

    try:
        code = TransformerManager().transform_cell(source)
        tree = ast.parse(code)
        table = symtable.symtable(code, "<cell>", "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # a hostile cell: kept, and run
        return None
    binds, uses = set(), _global_reads(table)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            binds.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            binds |= {(alias.asname or alias.name).split(".")[0] for alias in node.names if alias.name != "*"}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            binds.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            binds |= set(node.names)
        # ``x += 1`` and ``del x`` read the name first; the symbol table counts them as stores only
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            uses.add(node.target.id)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Del):
            uses.add(node.id)
    # every name bound anywhere counts, a function's locals too: more cells kept than needed, never fewer
    if uses & DYNAMIC:
        uses.add(EVERY_NAME)
    return binds, uses


def _global_reads(table) -> set[str]:
    """The names code compiled from ``table``'s scope and the scopes inside it may read as globals
    (``symtable``, as the compiler resolves them): every name the module's and a class body's code
    reads (a class body falls back to the globals for any name), and a function's, lambda's or
    comprehension's reads that are neither its own locals nor its enclosing function's. A function
    reads its globals when called, so they count when it is defined."""
    names = set()
    for symbol in table.get_symbols():
        if not symbol.is_referenced():
            continue
        if table.get_type() in ("module", "class") or symbol.is_global():
            names.add(symbol.get_name())
    for child in table.get_children():
        names |= _global_reads(child)
    return names


def _needs(uses: set[str], binds: set[str]) -> bool:
    """Whether a cell reading ``uses`` needs a cell binding ``binds``."""
    return bool(binds) and (EVERY_NAME in uses or bool(binds & uses))


def needed(cells: list, candidates: set[int]) -> set[int]:
    """Indices of ``candidates`` (code cells that may be left out) that a non-candidate code cell needs,
    directly or through other needed cells: a cell is needed when it binds a name that a kept
    cell after it reads."""
    names = {i: cell_names(cell_source(c)) for i, c in enumerate(cells) if c.get("cell_type") == "code"}
    kept = {i for i in names if i not in candidates or names[i] is None}
    queue = sorted(kept)
    while queue:
        index = queue.pop()
        uses = names[index][1] if names[index] else set()
        for other in candidates - kept:
            if other < index and names[other] and _needs(uses, names[other][0]):
                kept.add(other)
                queue.append(other)
    return kept & candidates


def is_given(cell) -> bool:
    meta = cell.get("metadata", {})
    nbgrader = meta.get("nbgrader", {})
    pinned = isinstance(meta.get("course"), dict) and meta["course"].get("grading") == PIN
    return cell.get("cell_type") == "code" and not nbgrader.get("solution") and not nbgrader.get("grade") and not pinned


def marks(notebook: dict) -> dict[str, str]:
    """{cell id: sha256 of its source} of the instructor's notebook's given code cells that no
    kept cell depends on (see the module's docstring)."""
    cells = notebook.get("cells", [])
    candidates = {i for i, c in enumerate(cells) if is_given(c) and c.get("id")}
    skipped = candidates - needed(cells, candidates)
    return {cells[i]["id"]: _digest(cell_source(cells[i])) for i in sorted(skipped)}


def skipped_in(nb, marked: dict[str, str]) -> set[int]:
    """Indices of the submission's cells not to run: marked, unchanged, and not needed by any
    cell that runs (the student's own cells included)."""
    candidates = {
        i for i, cell in enumerate(nb.get("cells", []))
        if cell.get("cell_type") == "code" and marked.get(cell.get("id")) == _digest(cell_source(cell))
        and not cell.get("metadata", {}).get("nbgrader", {}).get("grade")
    }
    return candidates - needed(nb.get("cells", []), candidates)


class SkipGivenCells(Preprocessor):
    """Before execution: the indices of the given cells not to run go into
    ``resources["skip_cells"]`` (``marks_file``: the assignment's ``marks``, as JSON; none, or
    no file: every cell runs)."""

    enabled = Bool(True).tag(config=True)  # nbconvert's preprocessors are off unless enabled
    marks_file = Unicode("", help="JSON {cell id: source sha256} of the cells grading may skip").tag(config=True)

    def preprocess(self, nb, resources):
        path = Path(self.marks_file) if self.marks_file else None
        marked = json.loads(path.read_text()) if path and path.is_file() else {}
        resources["skip_cells"] = skipped_in(nb, marked) if marked and not kernel_tests(nb, resources) else set()
        return nb, resources


def kernel_tests(nb, resources) -> list[int]:
    """Indices of autograded test cells that run in the kernel (not set aside by
    ``drive_apart.HideHiddenDrives``). Such a test may depend on what a given cell does without
    binding a name (a seed set, a file written), which the name analysis cannot see: where there
    is one, every cell runs."""
    apart = resources.get("drive_apart") or {}
    return [
        index for index, cell in enumerate(nb.cells)
        if cell.get("cell_type") == "code" and index not in apart
        and cell.get("metadata", {}).get("nbgrader", {}).get("grade")
        and not cell.get("metadata", {}).get("nbgrader", {}).get("solution")
    ]
