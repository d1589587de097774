"""The slow stand-in trees the prioritized buffer's hidden test builds the buffer on, so that the
buffer is graded on its own, whatever the student's trees do; the notebook's timing (``timing``)
also times the student's tree against them, as the plain list they are.

They are no answer to the segment trees' exercise: they keep no tree (a list of leaves, no
``self.tree`` of nodes) and every sum and search walks the leaves, O(capacity), so that exercise's
check fails them on its layout and on its speed part (``tests/replay/test_trees.py``). Its graded
child may not read them either (they are one of its twins in ``course_utils.twins``).
"""

from __future__ import annotations

import math


class SlowSumTree:
    """The sum tree's interface, one leaf at a time: ``tree[i] = v``, ``tree[i]``, ``sum(start,
    end)``, ``retrieve(prefix_sum)``, each O(capacity).

    The prioritized buffer's hidden test builds the buffer on these, so that the buffer is graded
    on its own, whatever the student's trees do, and no solution has to enter the student's
    kernel."""

    neutral = 0.0

    def __init__(self, capacity: int):
        self.capacity = capacity
        self.leaves = [self.neutral] * capacity

    def __getitem__(self, index: int) -> float:
        return self.leaves[index]

    def __setitem__(self, index: int, value: float) -> None:
        if not 0 <= index < self.capacity:
            raise IndexError(f"leaf index {index} is out of range 0..{self.capacity - 1}.")
        self.leaves[index] = value

    def _range(self, start: int, end: int | None):
        end = self.capacity if end is None else end
        for i in range(start, end):
            yield self.leaves[i]

    def sum(self, start: int = 0, end: int | None = None) -> float:
        total = 0.0
        for value in self._range(start, end):
            total += value
        return total

    def retrieve(self, prefix_sum: float) -> int:
        """The smallest i with leaf[0] + ... + leaf[i] > prefix_sum (the last positive leaf at the total)."""
        running, last_positive = 0.0, 0
        for i, value in enumerate(self.leaves):
            if value > 0:
                last_positive = i
            running += value
            if running > prefix_sum:
                return i
        return last_positive


class SlowMinTree(SlowSumTree):
    """``SlowSumTree``'s companion: ``min(start, end)`` (inf for an empty range)."""

    neutral = math.inf

    def min(self, start: int = 0, end: int | None = None) -> float:
        smallest = math.inf
        for value in self._range(start, end):
            smallest = value if value < smallest else smallest
        return smallest
