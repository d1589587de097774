"""A kernel zygote: one process per grading process that imports what every grading kernel loads
(ipykernel, NumPy, Matplotlib, torch: about 5 s of CPU) once, and forks each submission's kernel
from itself (``python kernel_zygote.py``; the grader's side is ``forked_kernels``).

Each forked child becomes exactly the kernel ``sandbox.py kernel`` would have started: a session
of its own, stdin, stdout and stderr on /dev/null and no other descriptor of the zygote, the
submission's clean environment, then ``sandbox.enter_sandbox`` (process tree, working folder,
rlimits, no capabilities, Landlock, seccomp) before ``ipykernel`` runs anything of the
submission. What the fork keeps from the zygote is only what the zygote itself did: imports.

Fork safety: the zygote runs no course code, no student code and no torch operation (torch's
thread pool starts with the first parallel operation, in the kernel, with ``OMP_NUM_THREADS=1``);
it forks only while it has a single thread, and refuses (the grader then starts the kernel the
usual way) otherwise. The random generators a fresh kernel seeds at import (``random``, NumPy's
global one) are seeded again in each child, so kernels do not share a stream.

Protocol, one JSON line each way on stdin and stdout:

- at start, after the imports: ``{"ready": true, "cpu_seconds": S}``, what they cost;
- ``{"spec": PATH, "argv": [...], "env": {...}}``: fork a kernel for the sandbox spec at PATH
  with ipykernel's arguments ``argv`` (``-f CONNECTION_FILE ...``) and environment ``env``;
  the reply ``{"pid": N}`` comes once the child is in its sandbox, or ``{"error": "..."}``;
- ``{"usage": true}``: reap the kernels forked so far (killed by then; each waited for up to
  2 s) and reply with the CPU seconds of every kernel reaped, ``{"cpu_seconds": S}``: the
  kernels are this process's children, not the grader's, whose figures count them through this.

It ends when its stdin closes. Standard library only until ``serve`` imports the libraries:
``sandbox`` and the modules it imports are loaded by their own names, as by the launcher.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import sys
import time

if __package__:
    from course_admin.grading.sandbox import enter_sandbox
else:  # run as a script: its folder is sys.path[0]
    from sandbox import enter_sandbox

INLINE_BACKEND = "module://matplotlib_inline.backend_inline"
"""What ipykernel sets ``MPLBACKEND`` to when a kernel starts; Matplotlib reads it at import."""


def _libraries() -> None:
    """Import what a grading kernel loads, without running any of it."""
    import importlib

    os.environ.update({"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "MPLBACKEND": INLINE_BACKEND})
    for name in ("ipykernel.kernelapp", "ipykernel.ipkernel", "ipykernel.zmqshell", "numpy", "numpy.random",
                 "matplotlib", "matplotlib.pyplot", "torch"):
        importlib.import_module(name)
    del os.environ["MPLBACKEND"]  # the kernel's environment is the submission's
    # what the imports made is never garbage: the kernels' collections skip it, and do not touch
    # (and so copy) the pages they share with the zygote
    import gc

    gc.freeze()


def _threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        import threading

        return threading.active_count()


def _become_kernel(request: dict, ready: int) -> None:
    """In the forked child: the sandboxed kernel of ``request``. Never returns."""
    code = 1
    try:
        os.setsid()
        for number in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
            signal.signal(number, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        os.closerange(3, ready)  # nothing of the zygote's: its pipes to the grader above all
        os.closerange(ready + 1, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
        os.environ.clear()
        os.environ.update(request["env"])
        argv = enter_sandbox(request["spec"], request["argv"])
        os.write(ready, b"1")
        os.close(ready)
        import random
        import tempfile

        import numpy

        tempfile.tempdir = None  # found again from this environment's TMPDIR
        random.seed()
        numpy.random.seed()
        # as ``python -m ipykernel_launcher ARGV`` from the working folder, which ipykernel's shell
        # puts back on sys.path itself (the launcher removes it first, as the zygote's folder here)
        import ipykernel_launcher

        del sys.path[0]
        sys.argv = [ipykernel_launcher.__file__, *argv]
        from ipykernel import kernelapp

        kernelapp.launch_new_instance()
        code = 0
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else 1
    except BaseException:  # noqa: BLE001 (the kernel is gone either way; the grader sees it die)
        code = 1
    finally:
        os._exit(code)


def _fork(request: dict) -> dict:
    if _threads() != 1:
        return {"error": f"the zygote has {_threads()} threads: forking it is not safe"}
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        _become_kernel(request, write_end)
    os.close(write_end)
    FORKED.add(pid)
    with os.fdopen(read_end, "rb") as pipe:
        entered = pipe.read(1)
    if not entered:
        return {"error": "the kernel died before it entered its sandbox"}
    return {"pid": pid}


FORKED: set[int] = set()
"""The kernels forked and not reaped yet."""
REAPED_CPU_SECONDS = 0.0
"""CPU seconds of the kernels reaped, with their children's."""


def _reap(pid: int = -1, wait: float = 0.0) -> None:
    """Reap finished children (``pid``: that one, waiting up to ``wait`` seconds for it)."""
    global REAPED_CPU_SECONDS
    deadline = time.monotonic() + wait
    while True:
        try:
            found, _, usage = os.wait4(pid, os.WNOHANG)
        except ChildProcessError:
            return
        if found:
            FORKED.discard(found)
            REAPED_CPU_SECONDS += usage.ru_utime + usage.ru_stime
            if pid == -1:
                continue
            return
        if pid == -1 or time.monotonic() > deadline:
            return
        time.sleep(0.01)


def serve() -> None:
    _libraries()
    signal.signal(signal.SIGCHLD, lambda *_: _reap())  # no zombie kernel waits for the next request
    out = sys.stdout.buffer
    started = resource.getrusage(resource.RUSAGE_SELF)
    out.write(json.dumps({"ready": True, "cpu_seconds": started.ru_utime + started.ru_stime}).encode() + b"\n")
    out.flush()
    for line in sys.stdin.buffer:
        try:
            request = json.loads(line)
            if "usage" in request:
                for pid in sorted(FORKED):
                    _reap(pid, wait=2.0)
                reply = {"cpu_seconds": REAPED_CPU_SECONDS}
            else:
                reply = _fork({"spec": str(request["spec"]), "argv": [str(a) for a in request["argv"]],
                               "env": {str(k): str(v) for k, v in request["env"].items()}})
        except (ValueError, KeyError, TypeError, AttributeError, OSError) as error:
            reply = {"error": f"{type(error).__name__}: {error}"}
        del line
        out.write(json.dumps(reply).encode() + b"\n")
        out.flush()


if __name__ == "__main__":
    if sys.argv[1:]:
        sys.exit("usage: python kernel_zygote.py (requests on stdin, one JSON line each)")
    serve()
