"""Grading kernels forked from this process's kernel zygote (``kernel_zygote``), which imported
ipykernel, NumPy, Matplotlib and torch once: a kernel then starts in about 0.1 s of CPU instead
of 1 s (ipykernel) to 5 s (a tutorial's imports).

``start(spec, argv, env)`` gives a ``ForkedKernel``, what jupyter_client's ``LocalProvisioner``
holds as its process, or None when the zygote cannot fork one (the grader then launches the
kernel through ``sandbox.py`` as before). The zygote is started on the first kernel this
process grades and lives as long as the process; one that died is started again.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from pathlib import Path

from course_admin.grading import kernel_zygote, processes, sandbox

ZYGOTE = Path(kernel_zygote.__file__).resolve()
ENABLED = os.environ.get("COURSE_FORK_KERNELS", "1") != "0"
"""False (``COURSE_FORK_KERNELS=0`` in the grader's environment) launches every kernel through
``sandbox.py``: for comparisons of both ways."""
START_SECONDS = 120.0
"""How long the zygote may take to import its libraries (5 s of CPU; minutes on a loaded machine)."""
REPLY_SECONDS = 60.0
CPU_SECONDS = 0.0
"""CPU seconds of the zygote's imports and of the forked kernels this process has collected
(``collect``): they are the zygote's children, not this process's, so the worker adds them to
a submission's figure."""
_ZYGOTE = processes.Helper("course-kernel-zygote-")
_SEEN = 0.0  # the CPU seconds the running zygote last reported
_READY = False  # whether the running zygote's "ready" line has been read


class ForkedKernel:
    """The part of ``subprocess.Popen`` jupyter_client uses, for a kernel that is not this
    process's child: alive while its pidfd is not readable; signals go to its process group
    (it leads a session of its own), as the provisioner sends them."""

    stdin = stdout = stderr = None

    def __init__(self, pid: int):
        self.pid, self.returncode = pid, None
        try:
            self._pidfd = os.pidfd_open(pid)
        except ProcessLookupError:  # it died, and the zygote reaped it, before it could be watched
            self._pidfd, self.returncode = None, -signal.SIGKILL

    def poll(self) -> int | None:
        if self.returncode is None and select.select([self._pidfd], [], [], 0)[0]:
            self.returncode = -signal.SIGKILL  # its exit status is the zygote's to read
            self._close()
        return self.returncode

    def _close(self) -> None:
        if getattr(self, "_pidfd", None) is not None:
            os.close(self._pidfd)
            self._pidfd = None

    __del__ = _close

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None and not select.select([self._pidfd], [], [], timeout)[0]:
            raise subprocess.TimeoutExpired(f"kernel {self.pid}", timeout)
        return self.poll()

    def send_signal(self, number: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, number)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)


def _launch() -> None:
    """Start a zygote; it imports its libraries on its own (``_zygote`` waits for them)."""
    _stop()  # not ready, and its kernels counted from 0
    _ZYGOTE.start(lambda home: subprocess.Popen(
        [sys.executable, str(ZYGOTE)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        env=sandbox.clean_environment(home, "kernel-zygote"), cwd=str(home)))


def start_early() -> None:
    """Start this process's zygote now, without waiting for it, where it is not running: its
    imports (4 s of CPU) then run while the grader prepares the submission, on the other core,
    rather than while the grader waits for the first kernel. Its CPU is counted as before, by the
    submission that first needs a kernel."""
    if ENABLED and hasattr(os, "pidfd_open") and _ZYGOTE.alive() is None:
        _launch()


def _zygote() -> subprocess.Popen | None:
    global _READY, CPU_SECONDS
    if _ZYGOTE.alive() is None:
        _launch()
    zygote = _ZYGOTE.alive()
    if zygote is None:  # died as it started
        _stop()
        return None
    if _READY:
        return zygote
    ready = _reply(zygote, START_SECONDS)
    if ready.get("ready"):
        CPU_SECONDS += float(ready.get("cpu_seconds", 0.0))  # the submission that needs the zygote pays its imports
        _READY = True
        return zygote
    _stop()
    return None


def _reply(process: subprocess.Popen, seconds: float) -> dict:
    try:
        if not select.select([process.stdout], [], [], seconds)[0]:
            return {}
        reply = json.loads(process.stdout.readline() or b"{}")
        return reply if isinstance(reply, dict) else {}
    except (OSError, ValueError):
        return {}


def _ask(request: dict) -> dict:
    """The zygote's reply to ``request``; {} (and the zygote stopped) when it gives none."""
    process = _zygote()
    if process is None:
        return {}
    try:
        process.stdin.write(json.dumps(request).encode() + b"\n")
        process.stdin.flush()
    except OSError:
        _stop()
        return {}
    reply = _reply(process, REPLY_SECONDS)
    if not reply:
        _stop()
    return reply


def _stop() -> None:
    global _SEEN, _READY
    _SEEN, _READY = 0.0, False  # a new zygote counts its kernels from 0
    _ZYGOTE.stop()


def start(spec: str, kernel_cmd: list[str], env: dict[str, str]) -> ForkedKernel | None:
    """A kernel for ``kernel_cmd`` (``python -m ipykernel_launcher ARGS``) forked in the sandbox
    of ``spec`` with environment ``env``, or None when it must be launched the usual way (another
    kernel command, no zygote, a fork refused)."""
    if not ENABLED or kernel_cmd[1:3] != ["-m", "ipykernel_launcher"] or not hasattr(os, "pidfd_open"):
        return None
    if os.path.realpath(kernel_cmd[0]) != os.path.realpath(sys.executable):
        return None
    # ipykernel reads JPY_PARENT_PID when it is imported, which was in the zygote: say it here
    argv = [*kernel_cmd[3:], f"--IPKernelApp.parent_handle={os.getpid()}"]
    pid = _ask({"spec": spec, "argv": argv, "env": {**env, "JPY_PARENT_PID": str(os.getpid())}}).get("pid")
    return ForkedKernel(int(pid)) if isinstance(pid, int) else None


def collect() -> None:
    """Add the CPU seconds of the kernels forked so far (killed by now) to ``CPU_SECONDS``."""
    global CPU_SECONDS, _SEEN
    if _ZYGOTE.process is None:
        return
    seconds = _ask({"usage": True}).get("cpu_seconds")
    if isinstance(seconds, (int, float)):
        CPU_SECONDS += max(0.0, float(seconds) - _SEEN)
        _SEEN = float(seconds)
