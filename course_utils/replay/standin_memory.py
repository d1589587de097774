"""The memory the prioritized buffer's hidden test builds the buffer on (``buffer.ReplayBuffer``'s
``memory``), so that the buffer is graded on its own, whatever the student's memory does.

It serves what ``ReplayBuffer`` reads of a memory and nothing more: ``add`` of one transition,
``pointer`` (the slot the next transition takes, which ``store`` returns), ``len`` and indexing by
slots. The buffer's spec needs the held slots to be ``0 .. len - 1`` and a transition to stay in its
slot until it is overwritten; once full, this memory overwrites in the order ``overwrite_slot``
gives (from the next-to-last slot down, not from slot 0), so ``len(buffer) - 1`` is not the slot a
new transition takes.

It is no ring and holds nothing a ring's ``add`` could be made of (tutorial 4's
``CircularMemory.add``, tutorial 2's replay memory): it keeps every transition ever added in an
append-only log, has no slot tensors (``memory``), no ``size`` and no pointer it advances, and
works out which transition each slot holds from the log's length alone (``held_transitions``, in
its own overwrite order) each time it is read. The hidden test's buffers store at most 9
transitions, so reading them back from the log each time costs nothing there; it is not meant
for a training run. Only that hidden test imports it; the memory exercises may not read it
either (their twins in ``course_utils.twins``)."""

from __future__ import annotations

import torch

from course_utils.replay.memory import FIELDS, ReplayMemoryError
from course_utils.runtime import positive_int


def overwrite_slot(written: int, capacity: int) -> int:
    """The slot transition number ``written`` (from 0) takes: ``written`` while the slots fill,
    then ``capacity - 2``, ``capacity - 3``, ..., ``0``, ``capacity - 1``, and round again."""
    if written < capacity:
        return written
    return (capacity - 2 - (written - capacity)) % capacity


def held_transitions(written: int, capacity: int) -> torch.Tensor:
    """Which transition (its number from 0) each held slot holds after ``written`` transitions:
    int64 of shape (min(written, capacity),), slot by slot.

    Slot ``s`` keeps transition ``s`` until an overwrite reaches it; overwrite ``k`` (transition
    ``capacity + k``) reaches slot ``(capacity - 2 - k) % capacity``, so slot ``s`` was last
    overwritten by the largest ``k < written - capacity`` with ``k % capacity == (capacity - 2 - s)
    % capacity``, if there is one."""
    slots = torch.arange(min(written, capacity))
    overwrites = max(written - capacity, 0)
    first = (capacity - 2 - slots) % capacity  # the first overwrite that reaches each slot
    last = first + capacity * torch.div(overwrites - 1 - first, capacity, rounding_mode="floor")
    return torch.where(first < overwrites, capacity + last, slots)


class FillingMemory:
    """A memory of ``capacity`` slots for ``ReplayBuffer``: ``FillingMemory(capacity, batch_size,
    warmup)`` (the last two are the buffer's and unused here). ``add`` takes a batch of one transition
    (a dict of tensors of first dimension 1) and refuses more (``ReplayMemoryError``)."""

    def __init__(self, capacity: int, batch_size: int = 1, warmup: int = 1):
        self.capacity = positive_int("capacity", capacity)
        self._log: dict[str, list[torch.Tensor]] = {}  # field -> every transition's entry, oldest first

    def _written(self) -> int:
        return len(next(iter(self._log.values()), []))

    def __len__(self) -> int:
        return min(self._written(), self.capacity)

    @property
    def pointer(self) -> int:
        """The slot the next transition takes (``overwrite_slot``'s order)."""
        return overwrite_slot(self._written(), self.capacity)

    def add(self, batch: dict) -> FillingMemory:
        """Append one transition to the log; returns self."""
        if not isinstance(batch, dict) or not batch or set(batch) - set(FIELDS):
            raise TypeError(f"a batch must be a non-empty dict with fields among {list(FIELDS)}.")
        entries = {key: torch.as_tensor(value) for key, value in batch.items()}
        if any(value.ndim == 0 or value.shape[0] != 1 for value in entries.values()):
            raise ReplayMemoryError("the stand-in memory takes one transition at a time (first dimension 1 in every field).")
        if self._log and set(entries) != set(self._log):
            raise KeyError(f"this memory holds fields {sorted(self._log)}, the batch has {sorted(entries)}.")
        for key, value in entries.items():
            self._log.setdefault(key, []).append(value[0])
        return self

    def __getitem__(self, index) -> dict[str, torch.Tensor]:
        """The transitions in slots ``index`` (a slice, an int or a tensor of slots) as a dict of
        tensors, first dimension the number of slots."""
        if not self._log:
            raise ReplayMemoryError("the memory is empty: add a transition first.")
        if isinstance(index, int):
            index = slice(index, index + 1) if index != -1 else slice(-1, None)
        numbers = held_transitions(self._written(), self.capacity)[index]
        return {key: torch.stack(entries)[numbers] for key, entries in self._log.items()}
