"""``course check``: is this install complete? Loads everything the notebooks load from the
package (every registered checkpoint, verified by its hashes; the saved histories and expected
values; the plotting style) and checks the notebook stack the games need.

Prints one line per item and returns the number of problems (0: ready).
"""

from __future__ import annotations

import importlib
import json
from importlib import metadata

from course_utils import checkpoints
from course_utils.paths import ASSETS


def _version(package: str) -> tuple[int, ...] | None:
    try:
        return tuple(int(p) for p in metadata.version(package).split(".")[:2] if p.isdigit())
    except metadata.PackageNotFoundError:
        return None


def problems() -> list[tuple[str, str | None]]:
    """(what was checked, the problem or None) for every item."""
    results: list[tuple[str, str | None]] = []
    for name in sorted(checkpoints.read_registry()):
        try:
            checkpoints.load_checkpoint(name)
            results.append((f"checkpoint {name}", None))
        except Exception as error:  # a CheckpointError says what to do
            results.append((f"checkpoint {name}", str(error)))
    for path in sorted(ASSETS.glob("*.json")):
        try:
            json.loads(path.read_text())
            results.append((f"asset {path.name}", None))
        except (OSError, ValueError) as error:
            results.append((f"asset {path.name}", f"unreadable ({error}): reinstall the course package."))
    try:
        from course_utils.plotting import use_course_style

        use_course_style()
        results.append(("plotting style", None))
    except OSError as error:
        results.append(("plotting style", f"{error}: reinstall the course package."))
    for module in ("torch", "gymnasium", "ipywidgets", "jupyter_ui_poll", "ipyevents", "jupyterlab"):
        try:
            importlib.import_module(module)
            results.append((f"import {module}", None))
        except ImportError as error:
            results.append((f"import {module}", f"{error}: pip install the course package again (it depends on {module})."))
    kernel = _version("ipykernel")
    if kernel is not None and kernel >= (7,):
        results.append(("ipykernel < 7", "ipykernel 7 ignores clicks while a game waits for them: pip install 'ipykernel<7'."))
    else:
        results.append(("ipykernel < 7", None))
    return results


def main() -> int:
    found = problems()
    for what, problem in found:
        print(f"{'❌' if problem else '✅'} {what}" + (f": {problem}" if problem else ""))
    bad = sum(problem is not None for _, problem in found)
    print("Ready: start the course with `course lab`." if not bad else f"{bad} problem(s): see above.")
    return bad
