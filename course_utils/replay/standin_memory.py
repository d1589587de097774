"""The memory the prioritized buffer's hidden test builds the buffer on (``buffer.ReplayBuffer``'s
``memory``), so that the buffer is graded on its own, whatever the student's memory does.

It is no circular memory: it fills its slots in order and refuses a transition once they are all
held (the buffer's hidden cases never store more than ``size``), so it answers no exercise that
asks for a ring (tutorial 4's ``CircularMemory.add``, tutorial 2's replay memory). Only that hidden
test imports it; the memory exercises may not read it either (their ``twins`` in
``course_utils.exercises``)."""

from __future__ import annotations

from course_utils.replay.memory import CircularReplayMemory, ReplayMemoryError


class FillingMemory(CircularReplayMemory):
    """``CircularReplayMemory`` whose ``add`` writes a batch into the next free slots, and raises
    ``ReplayMemoryError`` when they do not hold it."""

    def add(self, batch: dict) -> FillingMemory:
        batch, n = self.prepare(batch)
        if self.size + n > self.capacity:
            raise ReplayMemoryError(f"the stand-in memory holds {self.capacity} transitions and does not overwrite: "
                                    f"{self.size} held, {n} more given.")
        for key, value in batch.items():
            self.memory[key][self.size : self.size + n] = value
        self.size += n
        self.pointer = self.size
        return self
