"""Checks for tutorial 4's exercises: the circular memory's batch insert, the segment trees
and the prioritized replay buffer. Same contract as every check (``course_utils.checking``): ``strict=False``
prints a verdict with a hint and returns True/False; ``strict=True`` raises AssertionError.
"""

from __future__ import annotations

import math
import time

import numpy as np
import torch

from course_utils.checking import Problem, call_student, fmt, verdict

# --------------------------------------------------------------------------------------
# Exercise 1: the circular memory's batch insert


def _numbered_batch(first: int, n: int) -> dict[str, torch.Tensor]:
    """n transitions numbered first .. first + n - 1 (the number is in every field)."""
    ids = torch.arange(first, first + n)
    return {
        "state": ids.float().unsqueeze(1).repeat(1, 4),
        "action": ids % 2,
        "reward": ids.float(),
        "next_state": ids.float().unsqueeze(1).repeat(1, 4) + 0.5,
        "done": (ids % 7 == 6).float(),
        "step": ids,
        "episode_id": ids // 7,
    }


def _expected_slots(capacity: int, added: list[int]) -> tuple[list[int], int]:
    """What a circular memory holds after transitions numbered ``added`` (in order): slots, pointer."""
    slots = [-1] * capacity
    pointer = 0
    for number in added:
        slots[pointer] = number
        pointer = (pointer + 1) % capacity
    return slots, pointer


def check_memory_add(memory_class, strict: bool = False) -> bool:
    """Check the ``add`` method of a ``CircularReplayMemory`` subclass.

    Replays: capacity 20, batches of 5 added one by one (filling the memory, then
    overwriting the oldest), then a 10-entry batch that wraps round the end; then
    capacity 7 with batches of 3 (a split in the middle of a batch). After every step it
    compares the ``step`` numbers in each slot, the other fields, ``len`` and ``pointer``.
    """

    def replay(capacity: int, sizes: list[int]):
        memory = call_student(f"{memory_class.__name__}({capacity}, batch_size=4, warmup=1)", memory_class, capacity, 4, 1)
        added: list[int] = []
        for size in sizes:
            first = added[-1] + 1 if added else 0
            batch = _numbered_batch(first, size)
            before = f"after adding {len(added)} transitions" if added else "into an empty memory"
            try:
                result = call_student(f"add (a batch of {size}, {before}, capacity {capacity})", memory.add, batch)
            except Problem as problem:
                raise Problem(
                    f"{problem} Hint: when the batch runs past the last slot, write the first part up to the end "
                    "and the rest from slot 0."
                ) from None
            added += list(range(first, first + size))
            slots, pointer = _expected_slots(capacity, added)
            what = f"capacity {capacity}, after adding batches of sizes {_sizes_so_far(sizes, len(added))}"
            if memory.memory is None:
                raise Problem(f"{what}: memory.memory is still None. Call `self.prepare(batch)` first: it allocates it.")
            got = memory.memory["step"].tolist()
            held = [s if s >= 0 else 0 for s in slots]  # unfilled slots hold zeros
            if got != held:
                raise Problem(f"{what}: the slots hold steps {got}, expected {held}. {_add_hint(got, held, capacity)}")
            for key in ("state", "reward", "episode_id"):
                expected = _numbered_batch(0, max(added) + 1)[key][torch.tensor(held)]
                expected[torch.tensor(slots) < 0] = 0
                if not torch.equal(memory.memory[key], expected):
                    raise Problem(
                        f"{what}: the field {key!r} does not match 'step' slot by slot. "
                        "Hint: write every field of the batch (loop over `batch.items()`), into the same slots."
                    )
            if len(memory) != min(len(added), capacity):
                raise Problem(
                    f"{what}: len(memory) is {len(memory)}, expected {min(len(added), capacity)}. "
                    "Hint: self.size grows by n but never beyond the capacity: min(self.size + n, self.capacity)."
                )
            if memory.pointer != pointer:
                raise Problem(
                    f"{what}: memory.pointer is {memory.pointer}, expected {pointer} (the slot the next transition goes to). "
                    "Hint: move it on by n and wrap it with % self.capacity."
                )
            if result is not None and result is not memory:
                raise Problem("add should return the memory itself (`return self`) or nothing.")

    def check():
        replay(20, [5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 10])
        replay(7, [3, 3, 3, 3, 1, 7])

    return verdict("CircularReplayMemory.add", check, strict)


def _sizes_so_far(sizes: list[int], total: int) -> list[int]:
    out, count = [], 0
    for size in sizes:
        if count >= total:
            break
        out.append(size)
        count += size
    return out


def _add_hint(got: list[int], expected: list[int], capacity: int) -> str:
    if sorted(got) == sorted(expected):
        return "The right transitions are held but in the wrong slots: the part that does not fit goes to slots 0, 1, ..."
    return (
        "Hint: write the batch from slot self.pointer on; the part that runs past the last slot goes to the start "
        "(slots 0, 1, ...)."
    )


# --------------------------------------------------------------------------------------
# Exercise 2: segment trees


def _cumsum_retrieve(values: np.ndarray, prefix_sum: float) -> int:
    """Smallest i with values[0] + ... + values[i] > prefix_sum (the last positive leaf at the total)."""
    index = int(np.searchsorted(np.cumsum(values), prefix_sum, side="right"))
    if index >= len(values):
        index = int(np.flatnonzero(values > 0)[-1])
    return index


def check_segment_trees(sum_tree_class, min_tree_class, strict: bool = False) -> bool:
    """Check ``SumSegmentTree`` (``tree[i] = v``, ``tree[i]``, ``sum(start, end)``,
    ``retrieve(prefix_sum)``) and ``MinSegmentTree`` (``min(start, end)``): ranges are
    half-open, [start, end); ``end=None`` means the capacity."""

    def build(cls, values):
        tree = call_student(f"{cls.__name__}({len(values)})", cls, len(values))
        for i, v in enumerate(values):
            call_student(f"{cls.__name__}: tree[{i}] = {v:g}", tree.__setitem__, i, float(v))
        return tree

    def check():
        values = np.array([1.0, 0.0, 2.0, 3.0, 0.0, 1.0, 0.0, 0.0])
        sums, mins = build(sum_tree_class, values), build(min_tree_class, values)
        got = [call_student("tree[i]", sums.__getitem__, i) for i in range(8)]
        if got != values.tolist():
            raise Problem(
                f"after setting leaves {fmt(values)}, reading them back gave {fmt(got)}. Hint: leaf i is node capacity + i."
            )
        total = call_student("sum()", sums.sum)
        if total != 7.0:
            raise Problem(
                f"leaves {fmt(values)}: sum() gave {total}, expected 7. "
                "Hint: after setting a leaf, update every ancestor up to the root (node 1)."
            )
        for start, end in [(0, 8), (0, 4), (0, 3), (3, 4), (2, 6), (5, 5), (1, 7), (7, 8), (0, 1)]:
            got, expected = call_student(f"sum({start}, {end})", sums.sum, start, end), float(values[start:end].sum())
            if got != expected:
                hint = (
                    "Hint: ranges are half-open: sum(start, end) adds leaves start .. end - 1; sum(0, n) includes leaf n - 1."
                    if got == float(values[start : end - 1].sum()) or got == float(values[start : end + 1].sum())
                    else "Hint: walk up from both ends of the range, taking a node alone when it sticks out of the range."
                )
                raise Problem(f"leaves {fmt(values)}: sum({start}, {end}) gave {got}, expected {expected}. {hint}")
        for start, end in [(0, 8), (0, 1), (1, 4), (2, 4), (5, 8), (3, 3)]:
            expected = float(values[start:end].min()) if end > start else math.inf
            got = call_student(f"min({start}, {end})", mins.min, start, end)
            if got != expected:
                raise Problem(
                    f"leaves {fmt(values)}: min({start}, {end}) gave {got}, expected {expected} (min of an empty range: inf)."
                )
        for prefix_sum in [0.0, 0.5, 1.0, 2.9, 3.0, 5.99, 6.0, 6.5, 7.0]:
            got = call_student(f"retrieve({prefix_sum})", sums.retrieve, prefix_sum)
            expected = _cumsum_retrieve(values, prefix_sum)
            if got != expected:
                hint = (
                    "Hint: never step into a subtree whose sum is 0 (at prefix_sum == total, go left when the right child is 0)."
                    if prefix_sum == 7.0
                    else "Hint: go left if prefix_sum < the left child's sum; otherwise subtract that sum and go right."
                )
                raise Problem(
                    f"leaves {fmt(values)}: retrieve({prefix_sum}) gave {got}, expected {expected} "
                    f"(the smallest i with leaf[0] + ... + leaf[i] > {prefix_sum}). {hint}"
                )
        sums[3] = 10.0  # overwrite a leaf
        mins[3] = -1.0
        if call_student("sum()", sums.sum) != 14.0 or call_student("min()", mins.min) != -1.0:
            raise Problem(
                "after overwriting leaf 3, the totals are wrong. Hint: recompute the parents from both children, do not add."
            )
        rng = np.random.default_rng(7)
        big = rng.uniform(0.0, 2.0, 1024)
        sums, mins = build(sum_tree_class, big), build(min_tree_class, big)
        for _ in range(100):
            start, end = sorted(int(x) for x in rng.integers(0, 1025, 2))
            got = call_student(f"sum({start}, {end})", sums.sum, start, end)
            if not math.isclose(got, big[start:end].sum(), rel_tol=1e-9, abs_tol=1e-9):
                raise Problem(f"1024 random leaves: sum({start}, {end}) gave {got}, expected {big[start:end].sum()}.")
            got = call_student(f"min({start}, {end})", mins.min, start, end)
            if got != (big[start:end].min() if end > start else math.inf):
                raise Problem(f"1024 random leaves: min({start}, {end}) gave {got}, expected {big[start:end].min()}.")
        queries = rng.uniform(0.0, float(big.sum()), 300)
        got = [call_student("retrieve", sums.retrieve, float(q)) for q in queries]
        expected = np.searchsorted(np.cumsum(big), queries, side="right").tolist()
        mismatches = [(q, g, e) for q, g, e in zip(queries.tolist(), got, expected, strict=True) if g != e]
        if len(mismatches) > 1:  # allow one rounding coincidence at a boundary
            q, g, e = mismatches[0]
            raise Problem(f"1024 random leaves: retrieve({q:.6g}) gave {g}, expected {e}.")

        def many_range_queries() -> int | None:
            """How many of 2000 wide range sums fit in 1.5 s before giving up (None: all of them)."""
            tree = sum_tree_class(1 << 16)
            tree[(1 << 16) - 1] = 1.0
            start = time.perf_counter()
            for done in range(1, 2001):
                tree.sum(1, (1 << 16) - 1)
                if time.perf_counter() - start > 1.5:
                    return done
            return None

        stopped = call_student("2000 sums over a range of a 65 536-leaf tree", many_range_queries)
        if stopped is not None:
            raise Problem(
                f"only {stopped} of 2000 sums over a range of a 65 536-leaf tree were done in 1.5 s (with about "
                "log2(capacity) steps each they take a few milliseconds in all): a loop over all the leaves in the "
                "range is too slow. Hint: walk up from both ends of the range, as described above."
            )

    return verdict("SumSegmentTree / MinSegmentTree", check, strict)


# --------------------------------------------------------------------------------------
# Exercise 3: the prioritized replay buffer


class SlowSumTree:
    """The sum tree's interface, one leaf at a time: ``tree[i] = v``, ``tree[i]``, ``sum(start,
    end)``, ``retrieve(prefix_sum)``, each O(capacity).

    The prioritized buffer's hidden test builds the buffer on these, so that the buffer is graded
    on its own, whatever the student's trees do, and no solution has to enter the student's
    kernel. They are no answer to Exercise 2: its check times range sums, and a Python loop over
    the leaves is far too slow there."""

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


def _fill(buffer, n: int, start: int = 0) -> None:
    for t in range(start, start + n):
        call_student(f"store (transition {t})", buffer.store, [t, -t], t % 2, float(t), [t + 1, -t - 1], t % 5 == 4)


def check_prioritized_buffer(buffer_class, strict: bool = False) -> bool:
    """Check a ``PrioritizedReplayBuffer(obs_dim, size, batch_size, alpha)`` with ``store``,
    ``sample_batch(beta, rng)`` and ``update_priorities(indices, priorities)``."""

    def new(size, batch_size, alpha):
        return call_student(
            f"PrioritizedReplayBuffer(obs_dim=2, size={size}, batch_size={batch_size}, alpha={alpha})",
            buffer_class,
            2,
            size,
            batch_size,
            alpha,
        )

    def sample(buffer, beta, rng):
        batch = call_student(f"sample_batch(beta={beta})", buffer.sample_batch, beta, rng)
        for key in ("obs", "next_obs", "acts", "rews", "done", "weights", "indices"):
            if key not in batch:
                raise Problem(
                    f"sample_batch returned no {key!r}. It should return the arrays of ReplayBuffer plus 'weights' and 'indices'."
                )
        indices = np.asarray(batch["indices"])
        if indices.shape != (buffer.batch_size,):
            raise Problem(f"sample_batch gave {indices.size} indices, expected batch_size = {buffer.batch_size}.")
        if not np.array_equal(np.asarray(batch["rews"]), buffer.rews_buf[indices]):
            raise Problem("the rewards returned do not belong to the indices returned. Hint: use self._batch(indices).")
        return batch, indices

    def check():
        # new transitions get the max priority
        buffer = new(8, 2, 0.5)
        _fill(buffer, 3)
        leaves = [buffer.sum_tree[i] for i in range(3)]
        if leaves != [1.0, 1.0, 1.0]:
            raise Problem(
                f"after storing 3 transitions into a new buffer, the sum tree's leaves 0-2 are {leaves}, expected 1.0 each "
                "(max_priority 1.0 to the power alpha). Hint: set both trees in store."
            )
        call_student("update_priorities([1], [9.0])", buffer.update_priorities, [1], [9.0])
        call_student("update_priorities([0], [0.25])", buffer.update_priorities, [0], [0.25])
        if buffer.max_priority != 9.0:
            raise Problem(
                f"after priorities 9.0 then 0.25, max_priority is {buffer.max_priority}, expected 9.0 (it never shrinks)."
            )
        if not math.isclose(buffer.sum_tree[0], 0.5) or not math.isclose(buffer.min_tree[0], 0.5):
            raise Problem(
                f"priority 0.25 with alpha 0.5: leaf 0 should be 0.25 ** 0.5 = 0.5 in both trees, got "
                f"{buffer.sum_tree[0]} and {buffer.min_tree[0]}."
            )
        _fill(buffer, 1, start=3)
        if not math.isclose(buffer.sum_tree[3], 3.0) or not math.isclose(buffer.min_tree[3], 3.0):
            raise Problem(
                f"a transition stored after max_priority reached 9 should get 9 ** 0.5 = 3 in both trees, got "
                f"{buffer.sum_tree[3]} and {buffer.min_tree[3]}."
            )
        # refusals
        for bad in (0.0, -1.0, float("nan")):
            try:
                buffer.update_priorities([0], [bad])
            except ValueError:
                pass
            except Exception as error:
                raise Problem(
                    f"update_priorities([0], [{bad}]) raised {type(error).__name__}; it should raise ValueError."
                ) from None
            else:
                raise Problem(f"update_priorities([0], [{bad}]) was accepted; priorities must be > 0: raise ValueError.")
        for bad in (4, 7, 8, -1):
            try:
                buffer.update_priorities([bad], [1.0])
            except IndexError:
                pass
            except Exception as error:
                raise Problem(
                    f"update_priorities([{bad}], [1.0]) with 4 transitions stored raised {type(error).__name__}; "
                    "it should raise IndexError."
                ) from None
            else:
                raise Problem(
                    f"update_priorities([{bad}], [1.0]) was accepted with 4 transitions stored; indices must be "
                    "in [0, len(self)): raise IndexError."
                )
        if not math.isclose(buffer.sum_tree[0], 0.5):
            raise Problem("a refused update_priorities call changed the tree: check everything before writing.")
        # the newest transition counts
        buffer = new(8, 4, 1.0)
        _fill(buffer, 5)
        call_student("update_priorities", buffer.update_priorities, [0, 1, 2, 3, 4], [1.0, 1.0, 1.0, 1.0, 96.0])
        batch, indices = sample(buffer, 0.4, np.random.default_rng(0))
        if np.sum(indices == 4) < 3:
            raise Problem(
                f"5 transitions, the newest (index 4) with 96% of the priority: it came {int(np.sum(indices == 4))} times "
                "in a batch of 4. Hint: the total is sum_tree.sum(0, len(self)) (half-open: it includes the newest) "
                "or simply sum_tree.sum()."
            )
        # stratified: with alpha 0 a batch of 4 from 4 takes each once
        buffer = new(4, 4, 0.0)
        _fill(buffer, 4)
        call_student("update_priorities", buffer.update_priorities, [0, 1, 2, 3], [0.01, 1.0, 10.0, 100.0])
        for seed in range(5):
            batch, indices = sample(buffer, 1.0, np.random.default_rng(seed))
            if sorted(indices.tolist()) != [0, 1, 2, 3]:
                raise Problem(
                    f"alpha 0, 4 transitions, batch of 4: got indices {indices.tolist()}, expected each once. "
                    "Hint: stratify: cut the total into batch_size equal segments and draw one prefix sum in each."
                )
            if not np.allclose(batch["weights"], 1.0):
                raise Problem(f"alpha 0 (uniform): every weight should be 1, got {fmt(batch['weights'])}.")
        # frequencies and weights
        alpha, beta = 0.6, 0.5
        buffer = new(6, 4, alpha)
        _fill(buffer, 6)
        priorities = np.array([0.1, 1.0, 2.0, 4.0, 0.5, 8.0])
        call_student("update_priorities", buffer.update_priorities, np.arange(6), priorities)
        scaled = priorities**alpha
        p = scaled / scaled.sum()
        max_weight = (6 * p.min()) ** -beta
        rng = np.random.default_rng(4)
        counts = np.zeros(6)
        for _ in range(1000):
            batch, indices = sample(buffer, beta, rng)
            if indices.min() < 0 or indices.max() >= 6:
                raise Problem(f"sample_batch gave index {indices.max()} but only 0-5 hold transitions.")
            np.add.at(counts, indices, 1)
            weights = np.asarray(batch["weights"], dtype=float)
            expected = (6 * p[indices]) ** -beta / max_weight
            if not np.allclose(weights, expected, rtol=1e-4):
                raise Problem(
                    f"priorities {fmt(priorities)}, alpha {alpha}, beta {beta}: for indices {indices.tolist()} the weights "
                    f"were {fmt(weights)}, expected {fmt(expected)}. Hint: w_i = (N * P(i)) ** -beta divided by the "
                    "largest possible weight, (N * p_min / total) ** -beta, with p_min from the min tree."
                )
        frequencies = counts / counts.sum()
        if not np.allclose(frequencies, p, atol=0.02):
            raise Problem(
                f"priorities {fmt(priorities)} with alpha {alpha}: sampled frequencies {fmt(frequencies)}, expected "
                f"P(i) = p_i^alpha / sum_k p_k^alpha = {fmt(p)}."
            )

    return verdict("PrioritizedReplayBuffer", check, strict)
