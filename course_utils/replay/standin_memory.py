"""The memory the prioritized buffer's hidden test builds the buffer on (``buffer.ReplayBuffer``'s
``memory``), so that the buffer is graded on its own, whatever the student's memory does.

It is no circular memory: it takes one transition per ``add``, fills its slots in order (the
buffer's spec needs the held slots to be ``0 .. len - 1``), and once they are all held it
overwrites them in the order ``overwrite_slot`` gives (from the next-to-last slot down, not from
slot 0), so it answers no exercise that asks for a ring (tutorial 4's ``CircularMemory.add``,
tutorial 2's replay memory) and, once full, ``len(buffer) - 1`` is not the slot a new transition
takes. Only that hidden test imports it; the memory exercises may not read it either (their
``twins`` in ``course_utils.exercises``)."""

from __future__ import annotations

from course_utils.replay.memory import CircularReplayMemory, ReplayMemoryError


def overwrite_slot(written: int, capacity: int) -> int:
    """The slot transition number ``written`` (from 0) takes: ``written`` while the slots fill,
    then ``capacity - 2``, ``capacity - 3``, ..., ``0``, ``capacity - 1``, and round again."""
    if written < capacity:
        return written
    return (capacity - 2 - (written - capacity)) % capacity


class FillingMemory(CircularReplayMemory):
    """``CircularReplayMemory`` whose ``add`` writes one transition into the slot ``pointer``
    (``overwrite_slot``'s order) and refuses a batch of several (``ReplayMemoryError``)."""

    def add(self, batch: dict) -> FillingMemory:
        batch, n = self.prepare(batch)
        if n != 1:
            raise ReplayMemoryError(f"the stand-in memory takes one transition at a time, {n} given.")
        for key, value in batch.items():
            self.memory[key][self.pointer] = value[0]
        self.written = getattr(self, "written", 0) + 1
        self.size = min(self.written, self.capacity)
        self.pointer = overwrite_slot(self.written, self.capacity)
        return self
