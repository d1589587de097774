"""Making a submitted notebook gradable the way its student meant it: ``repair(content, released)``.

The graded cells' nbgrader metadata comes back from the released notebook (a cell copied in
JupyterLab duplicates it; a student may edit or break it), copies are graded as ordinary
cells, and graded cells a student deleted are put back at their place. The notebook is
normalised first (nbformat 4.5, unique cell ids chosen from the cells themselves, no outputs),
so an unchanged submission gives the same bytes on every run.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import warnings

import nbformat

from course_admin.grading.cells import cell_source, nbgrader_meta

__all__ = ["GRADING_FIELDS", "repair"]

GRADING_FIELDS = ("grade_id", "grade", "solution", "locked", "task", "points", "schema_version")
"""The nbgrader metadata fields that decide how a cell is graded (a change is reported)."""


_CELL_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")


def _no_surrogates(value):
    """``value`` (parsed JSON) with lone surrogates (which JSON allows and UTF-8 does not)
    replaced by U+FFFD in every string."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass").decode("utf-8", "replace") if _SURROGATE.search(value) else value
    if isinstance(value, list):
        return [_no_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_no_surrogates(k): _no_surrogates(v) for k, v in value.items()}
    return value


_SURROGATE = re.compile("[\ud800-\udfff]")


def _normalised(content: bytes) -> str:
    """The notebook's JSON as every front-end opens it and nbgrader can grade it: no byte
    order mark or lone surrogates; nbformat 4.5 with every cell id present, valid and unique
    (chosen from the cell's place and source: nbformat would pick random ones, and an
    unchanged submission must give the same bytes, and key, on every run); code cells with
    no outputs (grading runs them again), markdown and raw cells with none at all; metadata
    that are objects."""
    raw = _no_surrogates(json.loads(content.decode("utf-8-sig")))
    cells = raw.get("cells") if isinstance(raw, dict) else None
    if not isinstance(cells, list) or raw.get("nbformat") != 4:
        return json.dumps(raw)  # nbformat 3 and older: nbformat converts them
    raw["nbformat_minor"] = max(5, raw.get("nbformat_minor", 0) if isinstance(raw.get("nbformat_minor"), int) else 0)
    if not isinstance(raw.get("metadata"), dict):
        raw["metadata"] = {}
    seen: set[str] = set()
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict):
            continue
        if not isinstance(cell.get("metadata"), dict):
            cell["metadata"] = {}
        if cell.get("cell_type") == "code":
            cell["outputs"], cell["execution_count"] = [], None
        else:
            cell.pop("outputs", None)
            cell.pop("execution_count", None)
        ident = cell.get("id")
        if not isinstance(ident, str) or not _CELL_ID.fullmatch(ident) or ident in seen:
            ident = hashlib.sha256(f"{index}:{cell_source(cell)}".encode()).hexdigest()[:12]
            while ident in seen:
                ident = hashlib.sha256(ident.encode()).hexdigest()[:12]
            cell["id"] = ident
        seen.add(ident)
    return json.dumps(raw)


def repair(content: bytes, released: dict) -> tuple[bytes, list[str]]:
    """``content`` (a valid notebook) made gradable against the released notebook
    ``released`` (its JSON): returns the new bytes and a note per change.

    - A cell whose nbgrader metadata names a released cell of its type gets that cell's
      metadata back (schema version, points, flags edited or damaged are restored).
    - Copies of a cell (JupyterLab copies metadata with the cell) and cells with metadata
      nbgrader cannot read become ordinary cells: their code still runs. For an answer
      cell, the copy that differs from the released stub is the one graded.
    - Graded cells a student deleted are put back at their place in the released notebook,
      so a deleted test still runs against the student's code.
    - The kernel is the released notebook's (a student's kernelspec never starts anything).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        notebook = nbformat.reads(_normalised(content), as_version=4, capture_validation_error={})
    reference = nbformat.from_dict(released)
    ref_cells = {}
    for cell in reference.cells:
        grade_id = nbgrader_meta(cell).get("grade_id")
        if isinstance(grade_id, str):
            ref_cells.setdefault(grade_id, cell)
    notes: list[str] = []
    claims: dict[str, list[int]] = {}
    for index, cell in enumerate(notebook.cells):
        if "nbgrader" not in cell.get("metadata", {}):
            continue
        grade_id = nbgrader_meta(cell).get("grade_id")
        if isinstance(grade_id, str) and grade_id in ref_cells and ref_cells[grade_id].cell_type == cell.cell_type:
            claims.setdefault(grade_id, []).append(index)
        else:
            del cell.metadata["nbgrader"]
            what = f"for {grade_id!r}" if isinstance(grade_id, str) and grade_id else "nbgrader cannot read"
            notes.append(f"cell {index + 1} had nbgrader metadata {what}: graded as an ordinary cell")
    for grade_id, indices in claims.items():
        ref = ref_cells[grade_id]
        ref_info = nbgrader_meta(ref)
        keep = indices[0]
        if ref_info.get("solution"):
            changed = [i for i in indices if notebook.cells[i].source != ref.source]
            keep = changed[0] if changed else indices[0]
        for i in indices:
            if i != keep:
                del notebook.cells[i].metadata["nbgrader"]
        if len(indices) > 1:
            copies = ", ".join(str(i + 1) for i in indices if i != keep)
            notes.append(f"cell {grade_id} appears {len(indices)} times (copied?): graded cell {keep + 1}; "
                         f"cell {copies} run as ordinary cells")
        before = notebook.cells[keep].metadata["nbgrader"]
        if any(before.get(name) != ref_info.get(name) for name in GRADING_FIELDS):
            notes.append(f"cell {grade_id}: nbgrader metadata edited, restored from the released notebook")
        notebook.cells[keep].metadata["nbgrader"] = copy.deepcopy(ref_info)
    present = {nbgrader_meta(c).get("grade_id") for c in notebook.cells}
    restored = []
    for index, cell in enumerate(reference.cells):
        info = nbgrader_meta(cell)
        if info.get("grade") and info.get("grade_id") not in present:
            earlier = {nbgrader_meta(c).get("grade_id") for c in reference.cells[:index]} - {None}
            position = 0
            for i, existing in enumerate(notebook.cells):
                if nbgrader_meta(existing).get("grade_id") in earlier:
                    position = i + 1
            notebook.cells.insert(position, copy.deepcopy(cell))
            present.add(info["grade_id"])
            restored.append(info["grade_id"])
    if restored:
        notes.append(f"graded cells deleted, restored before grading: {', '.join(restored)}")
    kernel = notebook.metadata.get("kernelspec")
    wanted = reference.metadata.get("kernelspec")
    if wanted and (not isinstance(kernel, dict) or kernel.get("name") != wanted.get("name")):
        name = kernel.get("name") if isinstance(kernel, dict) else kernel
        notes.append(f"kernel {name!r} replaced by the course's {wanted.get('name')!r}")
    for key in ("kernelspec", "language_info"):
        if key in reference.metadata:
            notebook.metadata[key] = copy.deepcopy(reference.metadata[key])
    ids = [cell.get("id") for cell in notebook.cells]
    for index, cell in enumerate(notebook.cells):  # a restored cell may bring back an id in use
        if "id" in cell and ids.count(cell.id) > 1:
            cell.id = hashlib.sha256(f"restored:{index}:{cell.id}".encode()).hexdigest()[:12]
            ids[index] = cell.id
    nbformat.validate(notebook)  # what cannot be made valid is this submission's reason, not a crash later
    return nbformat.writes(notebook).encode("utf-8"), notes
