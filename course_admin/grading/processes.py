"""Processes through ``/proc`` and libc, for ``process_tree``: the process table, start times,
``no_new_privs``, the ``COURSE_SANDBOX`` environment marker (``kill_marked``), SIGKILL, and
whether this process is a child subreaper; and ``Helper``, a long-lived helper process of this
process's with a folder of its own (the kernel zygote, the drive runner server).

Standard library only: the kernel launcher (``sandbox.py``, run as a script) imports it.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

PR_SET_NO_NEW_PRIVS = 38
PR_SET_CHILD_SUBREAPER, PR_GET_CHILD_SUBREAPER = 36, 37


def kill_marked(token: str, pids: list[int] = ()) -> int:
    """SIGKILL the given process groups and every process whose environment carries
    ``COURSE_SANDBOX=token``. Returns how many processes were signalled.

    The last resort, not the way to stop a submission: ``ProcessTree.kill`` finds every process
    of a submission (cgroups) and calls this as a final sweep, for a kernel whose launcher could
    not join its tree. On its own it misses a child that leaves the kernel's process group and
    clears or rewrites its environment (``Popen(..., start_new_session=True, env={})``)."""
    killed = 0
    for pid in pids:
        try:
            os.killpg(pid, signal.SIGKILL)
            killed += 1
        except (ProcessLookupError, PermissionError, OSError):
            pass
    marker = f"COURSE_SANDBOX={token}".encode()
    me = os.getpid()
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else []:
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            if marker in (entry / "environ").read_bytes().split(b"\0"):
                os.kill(int(entry.name), signal.SIGKILL)
                killed += 1
        except (OSError, ProcessLookupError):
            continue
    return killed


def libc_call(name: str, *args) -> int:
    """A libc function through ctypes; -1 where it does not exist (not Linux)."""
    try:
        return int(getattr(ctypes.CDLL(None, use_errno=True), name)(*args))
    except (OSError, AttributeError):
        return -1


def is_child_subreaper() -> bool:
    """Whether this process collects its descendants' orphans (``PR_SET_CHILD_SUBREAPER``)."""
    value = ctypes.c_int(0)
    return libc_call("prctl", PR_GET_CHILD_SUBREAPER, ctypes.byref(value), 0, 0, 0) == 0 and value.value == 1


def proc_table() -> dict[int, tuple[str, int, int, int, int]] | None:
    """{pid: (state, ppid, pgid, sid, start time)} of every process, from /proc; None without /proc."""
    if not os.path.isdir("/proc/self"):
        return None
    table = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as stat:
                data = stat.read()
            fields = data[data.rindex(b")") + 2 :].split()
            table[int(entry.name)] = (fields[0].decode(), int(fields[1]), int(fields[2]), int(fields[3]), int(fields[19]))
        except (OSError, ValueError, IndexError):
            continue
    return table


def start_time(pid: int) -> int:
    try:
        data = Path(f"/proc/{pid}/stat").read_bytes()
        return int(data[data.rindex(b")") + 2 :].split()[19])
    except (OSError, ValueError, IndexError):
        return 0


def no_new_privs(pid: int | str) -> bool:
    try:
        return "\nNoNewPrivs:\t1" in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


def has_marker(pid: int, marker: bytes) -> bool:
    try:
        return marker in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return False


def sigkill(pids, killed: set[int]) -> None:
    """SIGKILL each of ``pids`` (gone or not ours: skipped) and add those signalled to ``killed``."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
            killed.add(pid)
        except OSError:
            pass


class Helper:
    """A helper process this process starts and keeps for as long as it is useful (the kernel
    zygote, the drive runner server), in a folder of its own. ``stop`` kills it, waits for it and
    removes its folder; it also runs at exit, or every grading process would leave the folder (and
    the process, when the grader is killed) behind."""

    def __init__(self, prefix: str):
        self.prefix = prefix
        self.process: subprocess.Popen | None = None
        self.home: Path | None = None
        self._stopped_at_exit_of: int | None = None  # the process whose exit stops this helper
        atexit.register(self.stop)

    def alive(self) -> subprocess.Popen | None:
        """The running helper process, or None (never started, stopped, or dead)."""
        return self.process if self.process is not None and self.process.poll() is None else None

    def start(self, launch: Callable[[Path], subprocess.Popen]) -> subprocess.Popen:
        """Stop the helper that runs, make a new folder and start ``launch(folder)`` in it. The
        folder's name holds this process's id: folders of this prefix whose grading process is gone
        (killed, so its exit handler never ran) are removed first."""
        self.stop()
        self._remove_orphans()
        self._stop_at_exit()
        self.home = Path(tempfile.mkdtemp(prefix=f"{self.prefix}{os.getpid()}-"))
        self.process = launch(self.home)
        return self.process

    def _stop_at_exit(self) -> None:
        """Stop the helper when this process ends, also where ``atexit`` never runs: a process
        that multiprocessing forked (a Dask worker forked from a forkserver) ends with
        ``os._exit``, after multiprocessing's own exit finalizers, which this registers with."""
        if self._stopped_at_exit_of != os.getpid():
            from multiprocessing import util

            util.Finalize(None, self.stop, exitpriority=10)
            self._stopped_at_exit_of = os.getpid()

    def _remove_orphans(self) -> None:
        for folder in Path(tempfile.gettempdir()).glob(f"{self.prefix}*-*"):
            owner = folder.name.removeprefix(self.prefix).split("-", 1)[0]
            if not owner.isdigit() or int(owner) == os.getpid():
                continue
            try:
                os.kill(int(owner), 0)
            except ProcessLookupError:
                shutil.rmtree(folder, ignore_errors=True)
            except PermissionError:  # alive, another user's
                pass

    def stop(self) -> None:
        process, home = self.process, self.home
        self.process = self.home = None
        if process is not None:
            process.kill()
            process.wait()
        if home is not None:
            shutil.rmtree(home, ignore_errors=True)
