"""The exercise-check framework: run student code on cases, judge it, say what is wrong.

Each tutorial's ``check_*`` functions (``harlow.checks``, ``colour.checks``,
``lunar.checks``, ``replay.checks``) run the student's code through ``call`` and raise
``Problem`` at the first thing that is wrong; ``verdict`` turns that into the student's
feedback or the hidden test's failure. With ``strict=False`` (the student's check cell) a
check prints a verdict (what was expected, what came back, a hint) and returns True or
False. With ``strict=True`` (the hidden test cell nbgrader runs) a failure raises
``AssertionError`` with the same message. One function per exercise is the single source of
truth for both.

Student code runs under a time limit (``TIME_LIMIT`` seconds per call), so an infinite
loop becomes a clear message instead of a notebook that hangs.
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import signal
import threading
import traceback

import numpy as np

TIME_LIMIT = 10.0
"""Seconds a single call into student code may take before the check gives up."""


class Problem(Exception):
    """Raised inside a check to stop at the first thing that is wrong."""


class Timeout(BaseException):
    """Raised inside student code when it runs too long (BaseException: hard to swallow)."""


def _alarm_available() -> bool:
    """SIGALRM timers exist (not on Windows) and this is the main thread (where signals arrive)."""
    return hasattr(signal, "SIGALRM") and hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def time_limit(seconds: float):
    """Raise ``Timeout`` in the code run inside this block once it has run ``seconds`` seconds.

    Where SIGALRM exists (Linux, macOS; main thread) an interval timer raises it; elsewhere
    (Windows, other threads) a watchdog thread raises it asynchronously in the calling thread.
    Either way it arrives between two Python bytecodes: a loop in Python is stopped, a single
    long call into C finishes first.
    """
    if _alarm_available():
        with _alarm(seconds):
            yield
    else:
        with _watchdog(seconds):
            yield


@contextlib.contextmanager
def _alarm(seconds: float):
    def expire(signum, frame):
        raise Timeout()

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def _watchdog(seconds: float):
    target = ctypes.c_ulong(threading.get_ident())
    finished, fired = threading.Event(), threading.Event()

    def watch():
        if not finished.wait(seconds):
            fired.set()
            ctypes.pythonapi.PyThreadState_SetAsyncExc(target, ctypes.py_object(Timeout))

    watcher = threading.Thread(target=watch, name="check time limit", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        finished.set()
        watcher.join()
        if fired.is_set():  # a Timeout raised too late to stop the code must not go off later
            ctypes.pythonapi.PyThreadState_SetAsyncExc(target, None)


def call_student(what: str, fn, *args, **kwargs):
    """Call student code, turning every way it can fail into a ``Problem`` with a hint."""
    try:
        with time_limit(TIME_LIMIT):
            return fn(*args, **kwargs)
    except NotImplementedError:
        raise Problem(
            f"{what} is not implemented yet. Replace the `raise NotImplementedError()` line "
            "with your code, run that cell, then run this check again."
        ) from None
    except Timeout:
        raise Problem(
            f"{what} did not finish within {TIME_LIMIT:g} s. Look for a loop that never ends "
            "(a `while` whose condition never becomes false, or an index that never moves)."
        ) from None
    except Exception as error:
        frames = traceback.extract_tb(error.__traceback__)[1:]
        where = f" (line {frames[-1].lineno}: `{frames[-1].line}`)" if frames and frames[-1].line else ""
        raise Problem(f"{what} raised {type(error).__name__}: {error}{where}.") from None


def verdict(exercise: str, check, strict: bool) -> bool:
    """Run ``check``; report ``Problem``s (and anything else the answer made the check trip over,
    e.g. a class without the method the check calls) as the exercise's verdict, never a traceback."""
    try:
        try:
            check()
        except Problem:
            raise
        except Exception as error:  # the answer lacks something the check uses (a method, an attribute...)
            raise Problem(
                f"checking your answer stopped at {type(error).__name__}: {error}. "
                "Compare your code with the names and return values the exercise asks for."
            ) from None
    except Problem as problem:
        message = f"{exercise}: not yet. {problem}"
        if strict:
            raise AssertionError(message) from None
        print(f"❌ {message}")
        return False
    print(f"✅ {exercise}: all checks passed. Well done!")
    return True


def passes(check, *answers) -> bool:
    """Whether the student's ``answers`` pass ``check`` (run quietly), for notebook sections that
    build on an exercise: they use the student's code when it passes, and otherwise say so in one
    line and show the course's stored result instead, rather than failing deep in course code.

    >>> passes(lambda f: f(2) == 4, lambda x: x * x)
    True
    """
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            return bool(check(*answers))
        except AssertionError:
            return False


def fmt(values) -> str:
    array = np.asarray(values, dtype=float)
    return np.array2string(array, precision=4, separator=", ", threshold=8, edgeitems=3)
