"""The cgroup filesystem, for ``process_tree``: which hierarchies this process sees (v2, v1
pids), making, limiting and removing a cgroup, reading its members.

Standard library only: the kernel launcher (``sandbox.py``, run as a script) imports it.
"""

from __future__ import annotations

import os
import time
from pathlib import Path


def write_file(path: Path, text: str) -> None:
    """Write to a cgroup or state file without O_CREAT/O_TRUNC (cgroupfs and Landlock care)."""
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def read_pids(path: Path) -> set[int]:
    try:
        return {int(line) for line in path.read_text().split()}
    except (OSError, ValueError):
        return set()


def _unescape(field: str) -> str:
    """mountinfo writes space, tab, newline and backslash as ``\\ooo``."""
    out, i = [], 0
    while i < len(field):
        if field[i] == "\\" and field[i + 1 : i + 4].isdigit():
            out.append(chr(int(field[i + 1 : i + 4], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def cgroup_hierarchies() -> dict[str, tuple[Path, str, str | None]]:
    """The cgroup hierarchies this process sees, from /proc/self/mountinfo and /proc/self/cgroup:
    ``{"cgroup2": ..., "pids": ...}`` (the v1 pids hierarchy), each as (mount point, root of
    the hierarchy shown at that mount point, this process's own cgroup in that hierarchy).
    Missing keys: not mounted (or not Linux)."""
    found: dict[str, tuple[Path, str, str | None]] = {}
    try:
        mountinfo = Path("/proc/self/mountinfo").read_text()
        own_lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return found
    own: dict[str, str] = {}
    for line in own_lines:
        number, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if number == "0" and not controllers:
            own["cgroup2"] = path
        for controller in controllers.split(","):
            own.setdefault(controller, path)
    for line in mountinfo.splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3:
            continue
        if tail[0] == "cgroup2":
            kind = "cgroup2"
        elif tail[0] == "cgroup" and "pids" in tail[2].split(","):
            kind = "pids"
        else:
            continue
        found.setdefault(kind, (Path(_unescape(fields[4])), _unescape(fields[3]), own.get(kind)))
    return found


def _parent_candidates(mount: tuple[Path, str, str | None]) -> list[Path]:
    """Where a tree's cgroup may go, best first: under this process's own cgroup (so whatever
    limits the grader's service has apply to the kernel too), else at the hierarchy's root."""
    point, root, own = mount
    candidates = []
    if own is not None and not own.endswith(" (deleted)"):
        base = root.rstrip("/")
        if own == root or own.startswith(base + "/"):
            candidates.append(point / own[len(base) :].lstrip("/"))
    if point not in candidates:
        candidates.append(point)
    return candidates


def make_cgroup(mount: tuple[Path, str, str | None] | None, name: str) -> tuple[Path | None, str]:
    """Make the cgroup ``name`` in the first candidate parent where this process may create it
    and later move a process into it. (path, "") or (None, why not)."""
    if mount is None:
        return None, "not mounted"
    reasons = []
    for parent in _parent_candidates(mount):
        path = parent / name
        try:
            path.mkdir()
        except OSError as error:
            reasons.append(f"{parent}: {error.strerror or error}")
            continue
        # Moving a process needs write access to cgroup.procs of the source's and the target's
        # common ancestor (the parent here) and of the target.
        if os.access(parent / "cgroup.procs", os.W_OK) and os.access(path / "cgroup.procs", os.W_OK):
            return path, ""
        reasons.append(f"{parent}: cgroup.procs not writable")
        remove_cgroup(path, wait=0)
    return None, "; ".join(reasons)


def remove_cgroup(path: Path, wait: float = 1.0) -> bool:
    """rmdir a cgroup, retrying for ``wait`` seconds while its last processes finish exiting."""
    deadline = time.monotonic() + wait
    while True:
        try:
            path.rmdir()
            return True
        except FileNotFoundError:
            return True
        except OSError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)


def limit_pids(path: Path, max_pids: int | None, parent_may_enable: bool = False) -> bool:
    """Set ``pids.max`` of the cgroup ``path``; for cgroup v2 first enable the pids controller
    for the parent's children when the parent has it but does not pass it on (possible in a
    cgroup without processes of its own, and always at the root). True when set."""
    if max_pids is None:
        return False
    if parent_may_enable and not (path / "pids.max").exists():
        parent = path.parent
        try:
            if "pids" in (parent / "cgroup.controllers").read_text().split():
                if "pids" not in (parent / "cgroup.subtree_control").read_text().split():
                    write_file(parent / "cgroup.subtree_control", "+pids")
        except OSError:
            return False
    try:
        write_file(path / "pids.max", str(int(max_pids)))
        return True
    except OSError:
        return False
