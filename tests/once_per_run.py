"""Work that several test files need, done once per test run however many pytest-xdist workers
ask for it: the first caller does it in a folder every worker can see, the others wait for it
(a file lock) and read what it returned. A session fixture would do it once per worker process.

The shared folder is the run's own temporary folder (a new one per run), so nothing is reused
from an earlier run, whatever changed in between."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path


def run_folder(tmp_path_factory) -> Path:
    """The temporary folder of this test run that every worker shares: under pytest-xdist each
    worker's base folder (``popen-gwN``) sits in it; without xdist it is the base folder itself."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def once_per_run(tmp_path_factory, name: str, make: Callable[[Path], dict]) -> dict:
    """``make(folder)`` called once in this test run, in a new folder named after ``name``;
    every caller, in any worker, gets what that call returned: a dict of JSON values and
    ``Path`` objects. A call that raised is not kept: the next caller tries again."""
    root = run_folder(tmp_path_factory)
    folder, result = root / f"once-{name}", root / f"once-{name}.json"
    with open(root / f"once-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also if make raises
        if not result.exists():
            shutil.rmtree(folder, ignore_errors=True)  # what a failed call left
            folder.mkdir()
            made = make(folder)
            paths = sorted(key for key, value in made.items() if isinstance(value, Path))
            values = {key: str(value) if key in paths else value for key, value in made.items()}
            result.write_text(json.dumps({"paths": paths, "values": values}))
    stored = json.loads(result.read_text())
    return {key: Path(value) if key in stored["paths"] else value for key, value in stored["values"].items()}
