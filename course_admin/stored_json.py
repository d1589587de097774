"""The JSON files ``course release`` writes into ``assets/`` (the checks' expected values, the
course's records on the public cases, the notebooks' names), written one way and checked one way.

``write(path, data)`` writes ``data`` in the repository's JSON format (``text``: keys sorted, one
item per line, indented by one space, UTF-8 as is), so that a change shows in a diff as the lines
it touches. ``stale(path, fresh)`` says why the file does not hold ``fresh``: one line per
top-level section that differs, ``missing`` when there is no file, or that the file holds the same
values written another way (``course release`` would rewrite it). ``course release --check``
prints these lines.
"""

from __future__ import annotations

import json
from pathlib import Path


def text(data) -> str:
    """``data`` as the stored files hold it, ending with a newline."""
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def write(path: Path, data) -> Path:
    """Write ``data`` to ``path`` (``text``); returns ``path``."""
    path.write_text(text(data), encoding="utf-8")
    return path


def stale(path: Path, fresh: dict) -> list[str]:
    """Why ``path`` does not hold ``fresh`` as ``write`` would write it: a line per differing
    top-level key (compared as written: tuples are lists, NaN equals NaN), or ``[]`` when it does."""
    if not path.exists():
        return [f"{path.name}: missing"]
    stored_text, fresh_text = path.read_text(encoding="utf-8"), text(fresh)
    if stored_text == fresh_text:
        return []
    try:
        stored = json.loads(stored_text)
    except ValueError as error:
        return [f"{path.name}: not valid JSON ({error})"]
    if not isinstance(stored, dict):
        return [f"{path.name}: does not hold a JSON object"]
    fresh = json.loads(fresh_text)
    differing = [f"{path.name}: {key!r} differs" for key in sorted(stored.keys() | fresh.keys())
                 if key not in stored or key not in fresh or text(stored[key]) != text(fresh[key])]
    return differing or [f"{path.name}: the same values, written another way"]
