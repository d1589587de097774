"""A notebook cell read as its JSON gives it, whatever a submission put there: ``cell_source``
(the source as one string) and ``nbgrader_meta`` (nbgrader's metadata as a dict); and
``solution_code``, a solution cell's code without nbgrader's markers.

nbformat stores a source as a string or a list of lines, and a submission's metadata can be
anything JSON allows; nbgrader's own ``utils.is_grade``... expect a valid ``NotebookNode``.
"""

from __future__ import annotations

__all__ = ["SOLUTION_MARKERS", "cell_source", "nbgrader_meta", "solution_code"]

SOLUTION_MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")
"""The lines nbgrader's ``ClearSolutions`` replaces, with what is between them, by a stub."""


def cell_source(cell: dict) -> str:
    """The cell's source as one string (a list of lines joined; "" when it has none)."""
    source = cell.get("source", "")
    return "".join(map(str, source)) if isinstance(source, list) else str(source)


def nbgrader_meta(cell) -> dict:
    """The cell's nbgrader metadata (``grade_id``, ``grade``, ``solution``, ``locked``,
    ``points``...); ``{}`` when it has none, or when the cell or its metadata is not a dict."""
    metadata = cell.get("metadata") if isinstance(cell, dict) else None
    info = metadata.get("nbgrader") if isinstance(metadata, dict) else None
    return info if isinstance(info, dict) else {}


def solution_code(source: str) -> str:
    """A solution cell's source as the solution runs: without its ``SOLUTION_MARKERS`` lines
    (what is between them kept) and the blank lines at either end."""
    return "\n".join(line for line in source.splitlines() if line.strip() not in SOLUTION_MARKERS).strip("\n")
