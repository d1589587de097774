"""How long a student waits: every tutorial's solution notebook run top to bottom, timed per cell
(``course bench notebooks``).

Each notebook runs in a fresh kernel in a scratch folder (nbclient, the way JupyterLab's "Run all"
does), with the games playing themselves (``COURSE_HEADLESS=1``), an empty cache of its own
(``COURSE_CACHE``: nothing trained before is reloaded) and at full size unless ``fast``. Per
notebook: the wall seconds of the whole run and of its longest cells (from the kernel's own
``execute_input`` and ``execute_reply`` timestamps), and the kernel's CPU seconds (read by a
last cell the bench appends: the kernel and everything it started).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from datetime import datetime
from pathlib import Path

CPU_CELL = (
    "import json as _json, resource as _resource\n"
    "_s, _c = _resource.getrusage(_resource.RUSAGE_SELF), _resource.getrusage(_resource.RUSAGE_CHILDREN)\n"
    "print('COURSE_CPU', _json.dumps(_s.ru_utime + _s.ru_stime + _c.ru_utime + _c.ru_stime))"
)


def _seconds(cell) -> float | None:
    timing = cell.get("metadata", {}).get("execution", {})
    start, end = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
    if not (start and end):
        return None
    parse = lambda stamp: datetime.fromisoformat(stamp.replace("Z", "+00:00"))  # noqa: E731
    return (parse(end) - parse(start)).total_seconds()


def time_notebook(path: Path, fast: bool = False, timeout_s: int = 3600, longest: int = 3) -> dict:
    """Run the notebook at ``path`` in a scratch folder; its wall and kernel CPU seconds, its
    ``longest`` cells (index, first line, seconds), and whether every cell ran without an error."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(CPU_CELL))
    saved = dict(os.environ)
    os.environ.update({"COURSE_FAST": "1" if fast else "0", "COURSE_HEADLESS": "1", "MPLBACKEND": "Agg"})
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # as `make lab` runs it: compiled modules cached
    folder = Path(tempfile.mkdtemp(prefix="course-bench-notebook-"))
    # an empty cache, as on a student's first run: the experiments train instead of reloading
    # runs of the same code that an earlier run (or another clone on the machine) cached
    os.environ["COURSE_CACHE"] = str(folder / "cache")
    error = None
    start = time.perf_counter()
    try:
        client = NotebookClient(nb, timeout=timeout_s, kernel_name="python3", record_timing=True,
                                resources={"metadata": {"path": str(folder)}})
        try:
            client.execute()
        except Exception as exc:  # a cell's error: the figures say where it stopped
            error = f"{type(exc).__name__}: {str(exc)[-300:]}"
    finally:
        os.environ.clear()
        os.environ.update(saved)
        shutil.rmtree(folder, ignore_errors=True)
    wall = time.perf_counter() - start
    cells = [(i, c) for i, c in enumerate(nb.cells[:-1]) if c.cell_type == "code" and _seconds(c) is not None]
    ranked = sorted(cells, key=lambda item: -_seconds(item[1]))[:longest]
    cpu = None
    for output in nb.cells[-1].get("outputs", []):
        text = output.get("text", "")
        if "COURSE_CPU" in text:
            cpu = round(float(text.split("COURSE_CPU", 1)[1]), 1)
    return {
        "wall_s": round(wall, 1),
        "kernel_cpu_s": cpu,
        "cells_s": round(sum(_seconds(c) for _, c in cells), 1),
        "longest": [{"cell": i, "first_line": c.source.splitlines()[0][:80] if c.source else "",
                     "s": round(_seconds(c), 1)} for i, c in ranked],
        "error": error,
    }


def bench_notebooks(fast: bool = False) -> dict:
    """Every tutorial's solution notebook at full size (``fast``: the test size), one after the
    other: per tutorial ``time_notebook``'s figures, and the longest cell of all."""
    from course_admin.exercises import TUTORIALS
    from course_utils.paths import SOLUTIONS

    figures: dict = {"benchmark": "notebooks", "size": "fast" if fast else "full", "cores": os.cpu_count(),
                     "load_average_before": round(os.getloadavg()[0], 2)}
    for tutorial, name in TUTORIALS.items():
        figures[tutorial] = time_notebook(SOLUTIONS / f"{name}.ipynb", fast=fast)
    figures["longest_cell_s"] = max(cell["s"] for t in TUTORIALS for cell in figures[t]["longest"] or [{"s": 0}])
    figures["load_average_after"] = round(os.getloadavg()[0], 2)
    return figures


if __name__ == "__main__":  # pragma: no cover - `course bench notebooks` is the way in
    print(json.dumps(bench_notebooks()))
