"""Tutorial 2's exercise checks (colour replay): discounted returns and the replay memory.

See ``checking`` for how a check reports to the student (``strict=False``) and to nbgrader
(``strict=True``).
"""

from __future__ import annotations

import numpy as np

from course_utils.checking import Problem, call_student, fmt, verdict
from course_utils.returns import discounted_returns as reference_returns

# --------------------------------------------------------------------------------------
# Tutorial 2, colour replay


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
            got = call_student("discounted_returns", discounted_returns, given, gamma)
            expected = reference_returns(np.asarray(rewards, dtype=np.float64), gamma=gamma)
            if not np.array_equal(given, np.array(rewards)):
                raise Problem("your function changed the rewards it was given; build a new array instead.")
            try:
                got = np.asarray(got, dtype=float).reshape(-1)
            except (TypeError, ValueError):
                raise Problem(f"for {description}, expected numbers, got {got!r}.") from None
            if got.shape != expected.shape:
                raise Problem(
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
                raise Problem(
                    f"for {description}: rewards {fmt(rewards)}, gamma {gamma}: "
                    f"expected {fmt(expected)}, got {fmt(got)}. {hint}"
                )

    return verdict("discounted_returns", check, strict)


def check_replay_memory(ReplayMemory, strict: bool = False) -> bool:
    """Check a ``ReplayMemory(capacity)`` class with ``write(x)``, ``read()`` and ``len``.

    The expected behaviour: ``write`` puts the experience in ``slots[write_pointer]`` and
    moves the pointer on, wrapping to 0 after the last slot (so the oldest is overwritten
    first); ``read`` returns ``slots[read_pointer]`` and moves that pointer on, wrapping
    after the last filled slot.
    """

    def new(capacity):
        return call_student(f"ReplayMemory({capacity})", ReplayMemory, capacity)

    def write(memory, item):
        call_student(f"write({item!r})", memory.write, item)

    def reads(memory, n):
        return [call_student("read()", memory.read) for _ in range(n)]

    def expect(what, got, expected, hint):
        if got != expected:
            raise Problem(f"{what}: expected {expected!r}, got {got!r}. Hint: {hint}")

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

    return verdict("ReplayMemory", check, strict)
