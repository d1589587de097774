"""The autograded notebook, the file formgrader and the gradebook keep, held under a size cap
whatever a submission put in it: ``cap_notebook(content, cap_bytes)``.

``LimitedExecute`` caps outputs (``Limits.output_mb``), but everything else a submission
carries reaches the autograded notebook and its feedback page as written: notebook and cell
metadata, attachments, sources, any number of cells. A notebook over the cap (or with more than
``MAX_CELLS`` cells) is shrunk step by step, each step only while it is still over, in an order
that keeps what grading needs longest:

1. notebook metadata other than ``kernelspec`` and ``language_info``; execution counts that are
   not small integers;
2. cell metadata other than ``nbgrader``;
3. attachments, largest first: replaced by a blank image under the same name (a reference to a
   missing attachment stops nbconvert), with a note in the cell;
4. cells nbgrader does not grade (no ``nbgrader`` metadata), beyond the first ``MAX_CELLS``:
   each run of them collapsed into one markdown note;
5. sources of cells nbgrader does not grade, then of graded cells (already run and scored),
   longest first: cut to ``SOURCE_KEPT`` characters with a note;
6. every cell nbgrader does not grade, each run collapsed into one note.

Outputs are not touched: they are within ``Limits.output_mb``, below the cap. A notebook under
the cap comes back as the same bytes. Deterministic: the same notebook gives the same bytes.
"""

from __future__ import annotations

import json
from typing import Any

from nbformat import from_dict
from nbformat.v4.nbjson import writes

from course_admin.grading.cells import cell_source
from course_admin.grading.escaping import plain_text
from course_admin.grading.markdown_cleaning import BLANK_PNG

__all__ = ["MAX_CELLS", "cap_notebook"]

KEPT_NOTEBOOK_METADATA = ("kernelspec", "language_info")
"""Notebook metadata nbconvert and nbgrader read (the kernel, the language for highlighting)."""
KEPT_CELL_METADATA = ("nbgrader",)
"""Cell metadata nbgrader reads (grade id, points, locks); the rest is the front-end's."""
MAX_CELLS = 2000
"""Most cells kept: the tutorials have under 200; each cell costs about 1 KB of feedback HTML
and time in nbconvert, so 50 000 empty cells make a page of tens of MB."""
SOURCE_KEPT = 20_000
"""Characters kept of an over-long source (the tutorials' longest cell has about 4 000)."""
LARGEST_COUNT = 10**9
"""Execution counts above this are not a kernel's (a patched kernel can send any integer)."""


def _mb(size: int) -> str:
    """A size for the report: MB, or KB or bytes when small."""
    if size >= 2**20 // 10:
        return f"{size / 2**20:.3g} MB"
    return f"{size / 2**10:.3g} KB" if size >= 2**10 else f"{size} bytes"


def _size(value: Any) -> int:
    """Bytes ``value`` takes in the notebook's JSON, near enough to choose what to cut."""
    return len(json.dumps(value, ensure_ascii=False, default=str).encode("utf-8", "surrogatepass"))


def _serialise(nb: dict) -> bytes:
    """As nbformat (and so nbgrader) writes a notebook, without validating 50 000 cells again."""
    return (writes(from_dict(nb)) + "\n").encode("utf-8", "surrogatepass")


def _graded(cell: dict) -> bool:
    metadata = cell.get("metadata")
    return isinstance(metadata, dict) and isinstance(metadata.get("nbgrader"), dict)


def _note_cell(text: str, taken: set[str]) -> dict:
    """A markdown cell saying what the grader removed, with an id no other cell has."""
    ident = f"grader-note-{len(taken)}"
    while ident in taken:
        ident += "x"
    taken.add(ident)
    return {"cell_type": "markdown", "id": ident, "metadata": {}, "source": f"*[{text}]*"}


def _cells_label(indices: list[int]) -> str:
    shown = ", ".join(str(i + 1) for i in indices[:5])
    return f"cell {shown}" + (f" and {len(indices) - 5} more" if len(indices) > 5 else "")


class _Shrinker:
    def __init__(self, nb: dict, cap: int):
        self.nb, self.cap = nb, cap
        self.size = len(_serialise(nb))
        self.reasons: list[str] = []

    @property
    def over(self) -> bool:
        return self.size > self.cap

    def measure(self) -> None:
        self.size = len(_serialise(self.nb))

    def notebook_metadata(self) -> None:
        metadata = self.nb.get("metadata") if isinstance(self.nb.get("metadata"), dict) else {}
        dropped = sorted(key for key in metadata if key not in KEPT_NOTEBOOK_METADATA)
        if dropped:
            size = sum(_size(metadata[key]) for key in dropped)
            self.nb["metadata"] = {key: metadata[key] for key in KEPT_NOTEBOOK_METADATA if key in metadata}
            names = ", ".join(repr(plain_text(str(key))[:40]) for key in dropped[:5])
            more = f" and {len(dropped) - 5} more" if len(dropped) > 5 else ""
            self.reasons.append(f"notebook metadata dropped ({_mb(size)}: {names}{more})")
        counts = []
        for index, cell in enumerate(self.nb["cells"]):
            for holder in [cell, *(cell.get("outputs") or [])]:
                count = holder.get("execution_count") if isinstance(holder, dict) else None
                if isinstance(count, int) and not 0 <= count <= LARGEST_COUNT:
                    holder["execution_count"] = None
                    counts.append(index)
        if counts:
            self.reasons.append(f"execution counts that no kernel gives cleared ({_cells_label(sorted(set(counts)))})")
        self.measure()

    def cell_metadata(self) -> None:
        changed, size = [], 0
        for index, cell in enumerate(self.nb["cells"]):
            metadata = cell.get("metadata")
            if isinstance(metadata, dict) and set(metadata) - set(KEPT_CELL_METADATA):
                size += sum(_size(v) for k, v in metadata.items() if k not in KEPT_CELL_METADATA)
                cell["metadata"] = {key: metadata[key] for key in KEPT_CELL_METADATA if key in metadata}
                changed.append(index)
        if changed:
            self.reasons.append(f"cell metadata other than nbgrader's dropped ({_mb(size)}, {_cells_label(changed)})")
            self.measure()

    def attachments(self) -> None:
        found = []
        for index, cell in enumerate(self.nb["cells"]):
            attachments = cell.get("attachments")
            if isinstance(attachments, dict):
                found += [(-_size(bundle), index, str(name)) for name, bundle in attachments.items()]
        replaced: dict[int, int] = {}
        for negative, index, name in sorted(found):
            if not self.over:
                break
            blank = {"image/png": BLANK_PNG}
            self.nb["cells"][index]["attachments"][name] = blank
            self.size -= -negative - _size(blank)
            replaced[index] = replaced.get(index, 0) - negative
        for index, size in sorted(replaced.items()):
            cell = self.nb["cells"][index]
            note = f"\n\n*[attachments of this cell ({_mb(size)}) replaced by blank images by the grader]*"
            if cell.get("cell_type") == "markdown" and not _graded(cell):
                cell["source"] = cell_source(cell) + note
            self.reasons.append(f"cell {index + 1}: attachments ({_mb(size)}) replaced by blank images")
        if replaced:
            self.measure()

    def collapse(self, keep: int, why: str) -> None:
        """Keep the graded cells and the first ``keep`` others; each run of the others after
        them becomes one note."""
        cells, kept, run, collapsed = [], 0, [], 0
        taken = {str(cell.get("id")) for cell in self.nb["cells"]}

        def close_run() -> None:
            nonlocal run, collapsed
            if run:
                cells.append(_note_cell(f"{len(run)} cells removed by the grader ({why})", taken))
                collapsed += len(run)
                run = []

        for cell in self.nb["cells"]:
            if _graded(cell) or kept < keep:
                close_run()
                cells.append(cell)
                kept += not _graded(cell)
            else:
                run.append(cell)
        close_run()
        if collapsed:
            self.nb["cells"] = cells
            self.reasons.append(f"{collapsed} cells nbgrader does not grade collapsed into notes ({why})")
            self.measure()

    def sources(self, graded: bool) -> None:
        long = [(-len(cell_source(cell)), index) for index, cell in enumerate(self.nb["cells"])
                if _graded(cell) == graded and len(cell_source(cell)) > SOURCE_KEPT]
        cut = []
        for _, index in sorted(long):
            if not self.over:
                break
            cell = self.nb["cells"][index]
            text = cell_source(cell)
            note = f"[{len(text) - SOURCE_KEPT} more characters removed by the grader: the notebook was over its size cap]"
            cell["source"] = text[:SOURCE_KEPT] + "\n" + (f"# {note}" if cell.get("cell_type") == "code" else note)
            self.size -= _size(text) - _size(cell["source"])
            cut.append(index)
        if cut:
            which = "graded cells' sources" if graded else "sources"
            self.reasons.append(f"{which} cut to {SOURCE_KEPT} characters ({_cells_label(sorted(cut))})")
            self.measure()


def cap_notebook(content: bytes, cap_bytes: int, max_cells: int = MAX_CELLS) -> tuple[bytes, list[str]]:
    """``content`` (an autograded notebook's JSON) at most ``cap_bytes`` long and with at most
    ``max_cells`` cells (module docstring); returns the bytes and the problems to report (empty,
    and ``content`` itself, when it was within both)."""
    nb = json.loads(content)
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if len(content) <= cap_bytes and (not isinstance(cells, list) or len(cells) <= max_cells):
        return content, []
    if not isinstance(cells, list) or not all(isinstance(cell, dict) for cell in cells):
        return content, [f"the autograded notebook is {_mb(len(content))}, over the {_mb(cap_bytes)} cap, and unreadable"]
    before, count = len(content), len(cells)
    shrinker = _Shrinker(nb, cap_bytes)
    if count > max_cells:
        shrinker.collapse(max_cells, f"over {max_cells} cells")
    steps = (shrinker.notebook_metadata, shrinker.cell_metadata, shrinker.attachments,
             lambda: shrinker.sources(graded=False), lambda: shrinker.sources(graded=True),
             lambda: shrinker.collapse(0, f"the notebook was over its {_mb(cap_bytes)} cap"))
    for step in steps:
        if not shrinker.over:
            break
        step()
    out = _serialise(nb)
    why = [f"over the {_mb(cap_bytes)} cap"] if before > cap_bytes else []
    why += [f"{count} cells, over {max_cells}"] if count > max_cells else []
    problem = (f"the autograded notebook was {_mb(before)} ({', '.join(why)}): shrunk to {_mb(len(out))}"
               f" ({'; '.join(shrinker.reasons)})")
    if len(out) > cap_bytes:
        problem += "; still over the cap (its outputs)"
    return out, [problem]
