"""The grader's side and the answer's side of a speed part timed from outside the answer's process
(``checking.Timed``): ``drive_runner`` forks a child that runs only the speed part and talks to it
through two pipes, one JSON line per message.

The child (``Steps``, installed as ``checking.TIMED_APART``) builds what is timed, says it is ready,
then answers each step it reads; the runner (``measure``) draws the steps from a fresh seed after the
fork (the child's copy of the runner's memory holds none), hands each over only once the previous one
is answered, and reads the child's CPU time from the kernel (its CPU-time clock) around every block
of steps (``checking.Timed.measure``, from the check module the runner imports to draw the steps).
Standard library only, like ``drive_runner``.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import sys
import time


class Steps:
    """In the timing child (``checking.TIMED_APART``): the runner hands out one step at a time and
    reads one message per step (``ready`` first, then an answer, or a failure), one JSON line each."""

    def __init__(self, read_fd: int, out):
        self._in, self._out = os.fdopen(read_fd, "rb"), out

    def _send(self, message: dict) -> None:
        self._out.write((json.dumps(message) + "\n").encode())
        self._out.flush()

    def ready(self) -> None:
        self._send({"ready": True})

    def next(self):
        line = self._in.readline()
        return json.loads(line) if line else None

    def answer(self, value) -> None:
        self._send({"answer": value if type(value) is float else None})

    def failed(self, message: str) -> None:
        self._send({"failed": str(message)[:500]})


def cpu_seconds(pid: int) -> float:
    """A process's CPU time so far (user + system, every thread's, ended threads' included), as the
    kernel counts it, to the nanosecond: the process's CPU-time clock, whose id Linux makes from its
    pid as glibc's ``clock_getcpuclockid`` does. ``/proc/PID/stat`` counts in ticks of 10 ms, too
    coarse for blocks of steps that take a few milliseconds; it is the fallback where the clock is refused."""
    try:
        return time.clock_gettime(((~pid) << 3) | 2)  # CPUCLOCK_SCHED of the whole process
    except OSError:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rpartition(b")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class _Stopped(Exception):
    """The timing child failed a step or ended: why, for the judge."""


def measure(pid: int, read_end: int, steps_fd: int, timed, cases, timeout: float) -> dict:
    """In the parent of a timing child ``pid`` (which reads steps from ``steps_fd`` and writes its
    messages to ``read_end``): wait for the child to be ready, then hand out the steps drawn from a
    fresh seed one at a time and read the child's CPU time from the kernel around every block of
    them (``timed.measure``). Returns ``{"seed", "done", "counts", "cpu_seconds", "answers"}`` or ``{"seed",
    "error"}``; the child is killed and reaped, both pipe ends closed."""
    import secrets

    seed = secrets.randbits(62)
    measured = {"seed": seed}
    lines = Lines(read_end, time.monotonic() + timeout)
    try:
        message = lines.next()
        if not (type(message) is dict and message.get("ready") is True):
            why = message.get("failed") if type(message) is dict else None
            measured["error"] = why if type(why) is str else "the run ended before its first timed step"
            return measured
        with os.fdopen(steps_fd, "wb", closefd=False) as steps:

            def ask(step):
                steps.write((json.dumps(step) + "\n").encode())
                steps.flush()
                message = lines.next()
                if type(message) is not dict or "answer" not in message:
                    why = message.get("failed") if type(message) is dict else None
                    raise _Stopped(why if type(why) is str else "the run ended during the timed steps")
                return message["answer"]  # a float, else None (JSON has no NaN)

            measured.update(timed.measure(cases, seed, ask, lambda: cpu_seconds(pid)))
        return measured
    except _Stopped as stopped:
        measured["error"] = str(stopped)
        return measured
    except (OSError, ValueError, TimeoutError) as error:
        measured["error"] = f"the grader could not time the speed part ({type(error).__name__})"
        return measured
    finally:
        os.close(steps_fd)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(read_end)


class Lines:
    """JSON lines read from a pipe, each by a deadline (``TimeoutError`` past it)."""

    def __init__(self, fd: int, deadline: float):
        self.fd, self.deadline, self.buffer = fd, deadline, b""

    def next(self):
        while b"\n" not in self.buffer:
            left = self.deadline - time.monotonic()
            if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                raise TimeoutError
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                return None
            self.buffer += chunk
            if len(self.buffer) > 1 << 20:
                raise ValueError("a line too long")
        line, _, self.buffer = self.buffer.partition(b"\n")
        return json.loads(line)


def unload(names: set[str]) -> None:
    """Forget the course modules this process imported to draw a speed part's steps: the children
    of the exercises after it would otherwise find them loaded without their Landlock list."""
    for name in names:
        module = sys.modules.pop(name, None)
        parent, _, child = name.rpartition(".")
        if module is not None and getattr(sys.modules.get(parent), child, None) is module:
            delattr(sys.modules[parent], child)
