"""Exercise checks: friendly feedback for students, and the nbgrader hidden tests.

Each ``check_*`` function runs the student's code on a set of cases. With
``strict=False`` (the student's check cell) it prints a verdict — what was expected, what
came back, a hint — and returns True or False. With ``strict=True`` (the hidden test cell
nbgrader runs) a failure raises ``AssertionError`` with the same message. One function per
exercise is the single source of truth for both.

Student code runs under a time limit (``TIME_LIMIT`` seconds per call), so an infinite
loop becomes a clear message instead of a notebook that hangs.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import traceback

import numpy as np

TIME_LIMIT = 10.0
"""Seconds a single call into student code may take before the check gives up."""


class _Problem(Exception):
    """Raised inside a check to stop at the first thing that is wrong."""


class _Timeout(BaseException):
    """Raised inside student code when it runs too long (BaseException: hard to swallow)."""


@contextlib.contextmanager
def _time_limit(seconds: float):
    if threading.current_thread() is not threading.main_thread():
        yield  # signals only work in the main thread; run without a limit
        return

    def expire(signum, frame):
        raise _Timeout()

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _call(what: str, fn, *args, **kwargs):
    """Call student code, turning every way it can fail into a ``_Problem`` with a hint."""
    try:
        with _time_limit(TIME_LIMIT):
            return fn(*args, **kwargs)
    except NotImplementedError:
        raise _Problem(
            f"{what} is not implemented yet. Replace the `raise NotImplementedError()` line "
            "with your code, run that cell, then run this check again."
        ) from None
    except _Timeout:
        raise _Problem(
            f"{what} did not finish within {TIME_LIMIT:g} s. Look for a loop that never ends "
            "(a `while` whose condition never becomes false, or an index that never moves)."
        ) from None
    except Exception as error:
        frames = traceback.extract_tb(error.__traceback__)[1:]
        where = f" (line {frames[-1].lineno}: `{frames[-1].line}`)" if frames and frames[-1].line else ""
        raise _Problem(f"{what} raised {type(error).__name__}: {error}{where}.") from None


def _verdict(exercise: str, check, strict: bool) -> bool:
    try:
        check()
    except _Problem as problem:
        message = f"{exercise}: not yet. {problem}"
        if strict:
            raise AssertionError(message) from None
        print(f"❌ {message}")
        return False
    print(f"✅ {exercise}: all checks passed. Well done!")
    return True


def _fmt(values) -> str:
    array = np.asarray(values, dtype=float)
    return np.array2string(array, precision=4, separator=", ", threshold=8, edgeitems=3)


# --------------------------------------------------------------------------------------
# Tutorial 2, colour replay


def reference_returns(rewards, gamma: float) -> np.ndarray:
    """Discounted returns Q_t = r_t + gamma * Q_{t+1}, with Q_T = 0; (T,) float64."""
    returns = np.zeros(len(rewards))
    running = 0.0
    for t in range(len(rewards) - 1, -1, -1):
        running = float(rewards[t]) + gamma * running
        returns[t] = running
    return returns


_RETURNS_CASES = [
    ([1.0, 1.0, 1.0], 0.5, "three rewards of 1 with gamma 0.5"),
    ([0.0, 0.0, 1.0], 0.9, "a single reward at the end"),
    ([2.0], 0.91, "a single trial"),
    ([0.25, 0.5, 0.75, 1.0], 0.0, "gamma 0: each return is its own reward"),
    ([0.25, 0.5, 0.75, 1.0], 1.0, "gamma 1: each return is the sum of what is left"),
]


def check_discounted_returns(discounted_returns, strict: bool = False) -> bool:
    """Check ``discounted_returns(rewards, gamma)`` -> returns of shape (T,)."""

    def check():
        rng = np.random.default_rng(2)
        cases = list(_RETURNS_CASES) + [(list(rng.integers(1, 5, 100) / 4), 0.91, "100 trials like the agent's, gamma 0.91")]
        for rewards, gamma, description in cases:
            given = np.array(rewards)
            got = _call("discounted_returns", discounted_returns, given, gamma)
            expected = reference_returns(rewards, gamma)
            if not np.array_equal(given, np.array(rewards)):
                raise _Problem("your function changed the rewards it was given; build a new array instead.")
            try:
                got = np.asarray(got, dtype=float).reshape(-1)
            except (TypeError, ValueError):
                raise _Problem(f"for {description}, expected numbers, got {got!r}.") from None
            if got.shape != expected.shape:
                raise _Problem(
                    f"for {description} (T = {len(rewards)}), expected {len(expected)} returns, got {got.size}. "
                    "Hint: there is one return per trial."
                )
            if not np.allclose(got, expected, rtol=1e-5, atol=1e-6):
                reversed_order = np.allclose(got[::-1], expected, rtol=1e-5, atol=1e-6)
                hint = (
                    "Hint: your returns are in reverse order."
                    if reversed_order
                    else "Hint: work backwards from the last trial, Q_t = r_t + gamma * Q_(t+1)."
                )
                raise _Problem(
                    f"for {description}: rewards {_fmt(rewards)}, gamma {gamma}: "
                    f"expected {_fmt(expected)}, got {_fmt(got)}. {hint}"
                )

    return _verdict("discounted_returns", check, strict)


def check_replay_memory(ReplayMemory, strict: bool = False) -> bool:
    """Check a ``ReplayMemory(capacity)`` class with ``write(x)``, ``read()`` and ``len``.

    The expected behaviour: ``write`` puts the experience in ``slots[write_pointer]`` and
    moves the pointer on, wrapping to 0 after the last slot (so the oldest is overwritten
    first); ``read`` returns ``slots[read_pointer]`` and moves that pointer on, wrapping
    after the last filled slot.
    """

    def new(capacity):
        return _call(f"ReplayMemory({capacity})", ReplayMemory, capacity)

    def write(memory, item):
        _call(f"write({item!r})", memory.write, item)

    def reads(memory, n):
        return [_call("read()", memory.read) for _ in range(n)]

    def expect(what, got, expected, hint):
        if got != expected:
            raise _Problem(f"{what}: expected {expected!r}, got {got!r}. Hint: {hint}")

    def check():
        memory = new(3)
        write(memory, "a")
        expect(
            "after writing 'a' into an empty memory of capacity 3, slots",
            list(memory.slots),
            ["a", None, None],
            "write into slots[write_pointer].",
        )
        expect("then write_pointer", memory.write_pointer, 1, "move the write pointer one slot on after writing.")
        expect("then len(memory)", len(memory), 1, "count every write in n_written.")
        expect(
            "reading twice from a memory that holds only 'a'",
            reads(memory, 2),
            ["a", "a"],
            "read slots[read_pointer], then move the read pointer on, wrapping after the last filled slot: % len(self).",
        )
        write(memory, "b")
        write(memory, "c")
        expect("after writing 'a', 'b', 'c', slots", list(memory.slots), ["a", "b", "c"], "write into slots[write_pointer].")
        expect(
            "then write_pointer", memory.write_pointer, 0, "after the last slot the write pointer wraps to 0: % self.capacity."
        )
        write(memory, "d")
        expect(
            "writing 'd' into a full memory of capacity 3, slots",
            list(memory.slots),
            ["d", "b", "c"],
            "when full, the oldest experience (in slot 0) is overwritten first.",
        )
        expect("then len(memory)", len(memory), 3, "the memory never holds more than its capacity.")
        memory = new(3)
        for item in "abcd":
            write(memory, item)
        expect(
            "reading 5 times after writing 'a' to 'd' into capacity 3",
            reads(memory, 5),
            ["d", "b", "c", "d", "b"],
            "reads go round the slots in order, starting at slot 0.",
        )
        memory = new(250)
        for item in range(1000):
            write(memory, item)
        expect("after 1000 writes into capacity 250, len(memory)", len(memory), 250, "len is min(n_written, capacity).")
        expect("and the first 3 slots", list(memory.slots[:3]), [750, 751, 752], "the newest 250 experiences are kept.")
        expect("and 251 reads end with", reads(memory, 251)[-2:], [999, 750], "the read pointer wraps back to slot 0.")

    return _verdict("ReplayMemory", check, strict)
