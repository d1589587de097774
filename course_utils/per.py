"""Prioritized experience replay (Schaul et al. 2016, proportional variant): segment trees,
a uniform and a prioritized replay buffer, the beta schedule, and a benchmark.

Shapes used throughout: ``N`` transitions stored, ``B`` transitions per sampled batch,
observations of ``obs_dim`` float32 features. Priorities are positive floats (typically
``|TD error| + eps``); the trees hold them raised to the power ``alpha``.

The sampling probability of transition ``i`` is ``P(i) = p_i**alpha / sum_k p_k**alpha`` and
its importance-sampling weight is ``w_i = (N * P(i))**-beta``, divided by the largest weight
any stored transition could get, so weights lie in (0, 1].
"""

from __future__ import annotations

import math
import operator
import time

import numpy as np


def _check_capacity(capacity) -> int:
    if isinstance(capacity, bool) or not isinstance(capacity, int | np.integer) or capacity < 1:
        raise ValueError(f"capacity must be a positive power of two (1, 2, 4, 8, ...), got {capacity!r}.")
    capacity = int(capacity)
    if capacity & (capacity - 1):
        raise ValueError(
            f"capacity must be a positive power of two (1, 2, 4, 8, ...), got {capacity}; "
            f"the next power of two is {_next_power_of_two(capacity)}."
        )
    return capacity


def _next_power_of_two(n: int) -> int:
    return 1 << (int(n) - 1).bit_length()


def _as_rng(rng) -> np.random.Generator:
    """``None`` (fresh entropy), an int seed, or a ``np.random.Generator`` -> a Generator."""
    if rng is None:
        return np.random.default_rng()
    if isinstance(rng, int | np.integer) and not isinstance(rng, bool):
        return np.random.default_rng(int(rng))
    if isinstance(rng, np.random.Generator):
        return rng
    raise ValueError(f"rng must be None, an int seed or a numpy.random.Generator, got {type(rng).__name__}.")


# --------------------------------------------------------------------------------------
# Segment trees (plain Python: the students' exercise)


class _SegmentTree:
    """A complete binary tree over ``capacity`` leaves stored in a list of ``2 * capacity``.

    Node 1 is the root; node ``k`` has children ``2k`` and ``2k + 1``; leaf ``i`` is node
    ``capacity + i`` (node 0 is unused). Every inner node holds ``operation`` of its two
    children, so a range query or a leaf update touches ``log2(capacity)`` nodes.
    """

    def __init__(self, capacity: int, operation, neutral: float):
        self.capacity = _check_capacity(capacity)
        self.operation = operation
        self.neutral = neutral
        self.tree = [neutral] * (2 * self.capacity)

    def _check_index(self, index) -> int:
        if isinstance(index, bool) or not isinstance(index, int | np.integer):
            raise IndexError(f"leaf index must be an integer, got {index!r}.")
        if not 0 <= index < self.capacity:
            raise IndexError(f"leaf index {index} is out of range: the tree has leaves 0 to {self.capacity - 1}.")
        return int(index)

    def __len__(self) -> int:
        return self.capacity

    def __setitem__(self, index: int, value: float) -> None:
        node = self._check_index(index) + self.capacity
        self.tree[node] = float(value)
        node //= 2
        while node >= 1:
            self.tree[node] = self.operation(self.tree[2 * node], self.tree[2 * node + 1])
            node //= 2

    def __getitem__(self, index: int) -> float:
        return self.tree[self._check_index(index) + self.capacity]

    def _reduce(self, start: int, end: int | None) -> float:
        """``operation`` over leaves ``start, ..., end - 1`` (half-open; ``end=None``: capacity)."""
        if end is None:
            end = self.capacity
        if not 0 <= start <= end <= self.capacity:
            raise ValueError(
                f"the leaf range [start, end) must satisfy 0 <= start <= end <= {self.capacity}, got [{start}, {end})."
            )
        if start == 0 and end == self.capacity:
            return self.tree[1]
        result = self.neutral
        low, high = start + self.capacity, end + self.capacity
        while low < high:
            if low % 2 == 1:  # low is a right child: take it alone, move past it
                result = self.operation(result, self.tree[low])
                low += 1
            if high % 2 == 1:  # high - 1 is a left child: take it alone
                high -= 1
                result = self.operation(result, self.tree[high])
            low //= 2
            high //= 2
        return result


class SumSegmentTree(_SegmentTree):
    """Sums of leaves over any range, and prefix-sum search, each in O(log capacity).

    ``capacity`` must be a positive power of two. Leaves start at 0 and must be finite and
    non-negative (they are priorities). ``tree[i] = value`` sets leaf ``i``; ``tree[i]``
    reads it; ``sum(start, end)`` adds leaves ``start .. end - 1`` (half-open, so
    ``sum(0, n)`` includes leaf ``n - 1``: older reference code called ``sum(0, len - 1)``
    with an inclusive mind and left the newest transition out of the total).
    """

    def __init__(self, capacity: int):
        super().__init__(capacity, operator.add, 0.0)

    def __setitem__(self, index: int, value: float) -> None:
        value = float(value)
        if not (math.isfinite(value) and value >= 0.0):
            raise ValueError(f"sum-tree leaves must be finite and >= 0, got {value!r} for leaf {index!r}.")
        super().__setitem__(index, value)

    def sum(self, start: int = 0, end: int | None = None) -> float:
        """Sum of leaves ``start, ..., end - 1``; ``end=None`` means ``capacity``; empty range: 0."""
        return self._reduce(start, end)

    def retrieve(self, prefix_sum: float) -> int:
        """The smallest leaf index ``i`` with ``leaf[0] + ... + leaf[i] > prefix_sum``.

        ``prefix_sum`` must lie in [0, total]. Drawing it uniformly from [0, total) picks leaf
        ``i`` with probability ``leaf[i] / total``. The descent never enters a subtree whose
        sum is 0, so the answer is always a positive leaf: ``prefix_sum == total`` (or a
        rounding error just below it) gives the last positive leaf.
        """
        total = self.tree[1]
        if not 0.0 <= prefix_sum <= total:
            raise ValueError(f"prefix_sum must lie in [0, total] = [0, {total!r}], got {prefix_sum!r}.")
        if total <= 0.0:
            raise ValueError("the tree is empty (all leaves are 0): set some positive leaves before retrieve.")
        node = 1
        while node < self.capacity:
            left, right = 2 * node, 2 * node + 1
            if prefix_sum < self.tree[left] or self.tree[right] <= 0.0:
                node = left
            else:
                prefix_sum -= self.tree[left]
                node = right
        return node - self.capacity


class MinSegmentTree(_SegmentTree):
    """Minimum of leaves over any range in O(log capacity); leaves start at +inf.

    ``capacity`` must be a positive power of two. ``tree[i] = value`` sets leaf ``i``;
    ``min(start, end)`` is the smallest of leaves ``start .. end - 1`` (half-open).
    """

    def __init__(self, capacity: int):
        super().__init__(capacity, min, math.inf)

    def min(self, start: int = 0, end: int | None = None) -> float:
        """Smallest of leaves ``start, ..., end - 1``; ``end=None`` means ``capacity``; empty range: inf."""
        return self._reduce(start, end)


# --------------------------------------------------------------------------------------
# Replay buffers


class ReplayBuffer:
    """A uniform replay buffer of ``size`` transitions in preallocated numpy arrays.

    ``store`` writes at the pointer and moves it on, overwriting the oldest transition when
    full. ``sample_batch`` draws ``batch_size`` distinct stored transitions uniformly and
    returns a dict: ``obs`` and ``next_obs`` float32 (B, obs_dim), ``acts`` int64 (B,),
    ``rews`` float32 (B,), ``done`` float32 (B,) (1.0 where the episode ended).
    """

    def __init__(self, obs_dim: int, size: int, batch_size: int = 32):
        for name, value in (("obs_dim", obs_dim), ("size", size), ("batch_size", batch_size)):
            if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}.")
        if batch_size > size:
            raise ValueError(f"batch_size ({batch_size}) must not exceed size ({size}): a batch holds distinct transitions.")
        self.obs_dim, self.max_size, self.batch_size = int(obs_dim), int(size), int(batch_size)
        self.obs_buf = np.zeros((size, obs_dim), dtype=np.float32)
        self.next_obs_buf = np.zeros((size, obs_dim), dtype=np.float32)
        self.acts_buf = np.zeros(size, dtype=np.int64)
        self.rews_buf = np.zeros(size, dtype=np.float32)
        self.done_buf = np.zeros(size, dtype=np.float32)
        self.ptr = 0
        self.size = 0

    def __len__(self) -> int:
        return self.size

    def store(self, obs, act: int, rew: float, next_obs, done: bool) -> int:
        """Store one transition; returns the slot index it was written to."""
        obs = np.asarray(obs, dtype=np.float32).reshape(-1)
        next_obs = np.asarray(next_obs, dtype=np.float32).reshape(-1)
        if obs.shape != (self.obs_dim,) or next_obs.shape != (self.obs_dim,):
            raise ValueError(f"obs and next_obs must have {self.obs_dim} features, got shapes {obs.shape} and {next_obs.shape}.")
        index = self.ptr
        self.obs_buf[index] = obs
        self.next_obs_buf[index] = next_obs
        self.acts_buf[index] = act
        self.rews_buf[index] = rew
        self.done_buf[index] = float(done)
        self.ptr = (self.ptr + 1) % self.max_size
        self.size = min(self.size + 1, self.max_size)
        return index

    def _check_can_sample(self) -> None:
        if len(self) < self.batch_size:
            raise ValueError(
                f"cannot sample a batch of {self.batch_size}: the buffer holds only {len(self)} transitions. "
                f"Store at least batch_size transitions first."
            )

    def _batch(self, indices: np.ndarray) -> dict[str, np.ndarray]:
        return {
            "obs": self.obs_buf[indices],
            "next_obs": self.next_obs_buf[indices],
            "acts": self.acts_buf[indices],
            "rews": self.rews_buf[indices],
            "done": self.done_buf[indices],
        }

    def sample_batch(self, rng=None) -> dict[str, np.ndarray]:
        """``batch_size`` distinct transitions drawn uniformly; ``rng``: None, a seed or a Generator."""
        self._check_can_sample()
        indices = _as_rng(rng).choice(len(self), size=self.batch_size, replace=False)
        return self._batch(indices)


class PrioritizedReplayBuffer(ReplayBuffer):
    """Proportional prioritized replay: transition ``i`` is drawn with probability
    ``P(i) = p_i**alpha / sum_k p_k**alpha``.

    ``alpha`` >= 0 sets how much priorities matter (0: uniform). A new transition gets the
    largest priority seen so far (1.0 at the start), so it is replayed at least once soon.
    ``size`` need not be a power of two: the trees are rounded up to the next one, and
    their extra leaves stay at 0 (sum tree) and inf (min tree), so they are never drawn.
    """

    def __init__(self, obs_dim: int, size: int, batch_size: int = 32, alpha: float = 0.6):
        super().__init__(obs_dim, size, batch_size)
        if not (math.isfinite(alpha) and alpha >= 0.0):
            raise ValueError(f"alpha must be a finite number >= 0 (0 gives uniform sampling), got {alpha!r}.")
        self.alpha = float(alpha)
        self.max_priority = 1.0
        tree_capacity = _next_power_of_two(size)
        self.sum_tree = SumSegmentTree(tree_capacity)
        self.min_tree = MinSegmentTree(tree_capacity)

    def store(self, obs, act: int, rew: float, next_obs, done: bool) -> int:
        """Store one transition with the current max priority; returns its slot index."""
        index = super().store(obs, act, rew, next_obs, done)
        self.sum_tree[index] = self.max_priority**self.alpha
        self.min_tree[index] = self.max_priority**self.alpha
        return index

    def sample_batch(self, beta: float, rng=None) -> dict[str, np.ndarray]:
        """A batch drawn in proportion to priority, with importance-sampling weights.

        Stratified: the total priority is cut into ``batch_size`` equal segments and one
        prefix sum is drawn uniformly in each (so a batch covers the whole range; a
        transition can still appear twice if its priority spans two segments). Returns the
        arrays of ``ReplayBuffer.sample_batch`` plus ``weights`` float32 (B,) =
        ``(N * P(i))**-beta / max_weight`` with ``max_weight = (N * p_min / total)**-beta``,
        in (0, 1], and ``indices`` int64 (B,) for ``update_priorities``. ``beta`` >= 0
        (see ``beta_schedule``).
        """
        if not (math.isfinite(beta) and beta >= 0.0):
            raise ValueError(f"beta must be a finite number >= 0 (usually annealed from 0.4 to 1), got {beta!r}.")
        self._check_can_sample()
        rng = _as_rng(rng)
        total = self.sum_tree.sum()  # the root: leaves from len(self) on are 0
        segment = total / self.batch_size
        draws = (np.arange(self.batch_size) + rng.random(self.batch_size)) * segment
        indices = np.array([self.sum_tree.retrieve(min(float(x), total)) for x in draws], dtype=np.int64)

        n = len(self)
        leaf_priorities = np.array([self.sum_tree[i] for i in indices], dtype=np.float64)
        max_weight = (n * self.min_tree.min(0, n) / total) ** -beta
        weights = (n * leaf_priorities / total) ** -beta / max_weight
        batch = self._batch(indices)
        batch["weights"] = weights.astype(np.float32)
        batch["indices"] = indices
        return batch

    def update_priorities(self, indices, priorities) -> None:
        """Set the priorities (e.g. ``|TD error| + eps``, before ``alpha``) of stored transitions.

        ``indices`` int (K,) must be in [0, len); ``priorities`` (K,) must be finite and > 0.
        Everything is checked before anything is written. A repeated index keeps its last
        priority. The max priority (given to new transitions) only ever grows.
        """
        indices = np.asarray(indices).reshape(-1)
        priorities = np.asarray(priorities, dtype=np.float64).reshape(-1)
        if indices.shape != priorities.shape:
            raise ValueError(f"indices and priorities must have the same length, got {indices.size} and {priorities.size}.")
        if indices.size and not np.issubdtype(indices.dtype, np.integer):
            raise IndexError(f"indices must be integers, got dtype {indices.dtype}.")
        if not np.all(np.isfinite(priorities) & (priorities > 0)):
            bad = priorities[~(np.isfinite(priorities) & (priorities > 0))]
            raise ValueError(f"priorities must be finite and > 0 (add a small eps to |TD error|), got {_short(bad)}.")
        out = (indices < 0) | (indices >= len(self))
        if np.any(out):
            raise IndexError(f"indices must refer to stored transitions, 0 to {len(self) - 1}, got {_short(indices[out])}.")
        for index, priority in zip(indices.tolist(), priorities.tolist(), strict=True):
            self.sum_tree[index] = priority**self.alpha
            self.min_tree[index] = priority**self.alpha
        if priorities.size:
            self.max_priority = max(self.max_priority, float(priorities.max()))


def _short(values: np.ndarray) -> str:
    return np.array2string(np.asarray(values), threshold=6, edgeitems=3, separator=", ")


def beta_schedule(step: int, total_steps: int, beta0: float = 0.4) -> float:
    """Importance-sampling exponent annealed linearly from ``beta0`` at step 0 to 1.0 at
    ``total_steps``, and 1.0 after: ``min(1, beta0 + (1 - beta0) * step / total_steps)``.

    A known pitfall: updating in place every step with ``beta = beta + f * (1 - beta)``,
    ``f = step / total_steps``, compounds. The gap ``1 - beta`` is multiplied by ``1 - f``
    at every step, so it shrinks like ``exp(-step**2 / (2 * total_steps))``: beta is within
    0.01 of 1 after about ``3 * sqrt(total_steps)`` steps (1% of a 100 000-step run)
    instead of at the end.
    """
    if isinstance(total_steps, bool) or not isinstance(total_steps, int | np.integer) or total_steps < 1:
        raise ValueError(f"total_steps must be a positive integer, got {total_steps!r}.")
    if step < 0:
        raise ValueError(f"step must be >= 0, got {step!r}.")
    if not 0.0 <= beta0 <= 1.0:
        raise ValueError(f"beta0 must lie in [0, 1], got {beta0!r}.")
    return min(1.0, beta0 + (1.0 - beta0) * step / total_steps)


# --------------------------------------------------------------------------------------
# A numpy-vectorised sum tree


class VectorSumTree:
    """A sum tree updated and searched for a whole batch at once with numpy.

    ``tree`` is a float64 array of ``2 * capacity`` (node 1 the root, node ``k``'s children
    ``2k`` and ``2k + 1``, leaf ``i`` at ``capacity + i``), the same layout and the same
    sums as ``SumSegmentTree``. ``capacity`` must be a positive power of two; leaves start
    at 0 and must be finite and non-negative.
    """

    def __init__(self, capacity: int):
        self.capacity = _check_capacity(capacity)
        self.depth = self.capacity.bit_length() - 1  # levels below the root
        self.tree = np.zeros(2 * self.capacity, dtype=np.float64)

    def __len__(self) -> int:
        return self.capacity

    def total(self) -> float:
        """Sum of all leaves."""
        return float(self.tree[1])

    def update(self, indices, values) -> None:
        """Set leaves ``indices`` (int (K,)) to ``values`` ((K,) or a scalar).

        A repeated index keeps its last value. Then the parents of the changed leaves are
        recomputed level by level as the sum of their two children (never by adding deltas,
        which would go wrong with repeated indices and let rounding errors pile up).
        """
        indices = np.asarray(indices).reshape(-1)
        values = np.asarray(values, dtype=np.float64)
        values = np.full(indices.shape, float(values)) if values.ndim == 0 else values.reshape(-1)
        if indices.shape != values.shape:
            raise ValueError(f"indices and values must have the same length, got {indices.size} and {values.size}.")
        if indices.size == 0:
            return
        if not np.issubdtype(indices.dtype, np.integer):
            raise IndexError(f"leaf indices must be integers, got dtype {indices.dtype}.")
        out = (indices < 0) | (indices >= self.capacity)
        if np.any(out):
            raise IndexError(
                f"leaf indices {_short(indices[out])} are out of range: the tree has leaves 0 to {self.capacity - 1}."
            )
        if not np.all(np.isfinite(values) & (values >= 0)):
            raise ValueError(
                f"sum-tree leaves must be finite and >= 0, got {_short(values[~(np.isfinite(values) & (values >= 0))])}."
            )
        # Last write wins: the first occurrence in the reversed arrays is the last one.
        leaves, first_in_reversed = np.unique(indices[::-1], return_index=True)
        self.tree[leaves + self.capacity] = values[::-1][first_in_reversed]
        nodes = leaves + self.capacity
        for _ in range(self.depth):  # one level up per step, up to the root
            nodes //= 2  # siblings share a parent: it is written twice, with the same sum
            self.tree[nodes] = self.tree[2 * nodes] + self.tree[2 * nodes + 1]

    def retrieve(self, prefix_sums) -> np.ndarray:
        """For each prefix sum, the smallest leaf ``i`` with ``leaf[0] + ... + leaf[i] > prefix_sum``.

        ``prefix_sums``: any shape, each in [0, total]; returns int64 leaf indices of the
        same shape. All queries descend together, one tree level per step; like
        ``SumSegmentTree.retrieve`` they never enter a subtree whose sum is 0.
        """
        queries = np.asarray(prefix_sums, dtype=np.float64)
        total = self.tree[1]
        outside = ~((queries >= 0.0) & (queries <= total))
        if np.any(outside):
            raise ValueError(f"prefix sums must lie in [0, total] = [0, {total!r}], got {_short(queries[outside])}.")
        if total <= 0.0:
            raise ValueError("the tree is empty (all leaves are 0): update some leaves to positive values before retrieve.")
        remaining = queries.reshape(-1).copy()
        children = self.tree.reshape(-1, 2)  # row k holds nodes 2k and 2k + 1: node k's children
        nodes = np.ones(remaining.shape, dtype=np.int64)
        for _ in range(self.depth):
            pair = children[nodes]
            left_sums = pair[:, 0]
            go_right = (remaining >= left_sums) & (pair[:, 1] > 0.0)
            remaining -= left_sums * go_right
            nodes *= 2
            nodes += go_right
        return (nodes - self.capacity).reshape(queries.shape)


# --------------------------------------------------------------------------------------
# Benchmark


def bench_per(capacities=(1024, 16384, 131072), batch: int = 64, repeats: int = 300, rounds: int = 5, seed: int = 0) -> dict:
    """Microseconds per batched sample (``batch`` prefix sums) and per batched update
    (``batch`` priorities) of ``VectorSumTree`` and of ``SumSegmentTree`` (a Python loop over
    the batch), at each capacity, measured in the same process with ``time.perf_counter``.

    Each figure is the best of ``rounds`` rounds of ``repeats`` calls (best-of is the
    least noisy estimate of the cost itself). Trees are filled with random priorities
    first; sample queries are stratified like ``PrioritizedReplayBuffer.sample_batch``.
    Speedup = plain time / vector time.
    """
    rng = np.random.default_rng(seed)
    figures = {key: [] for key in ("vector_sample_us", "plain_sample_us", "vector_update_us", "plain_update_us")}
    for capacity in capacities:
        priorities = rng.uniform(0.1, 2.0, capacity)
        vector, plain = VectorSumTree(capacity), SumSegmentTree(capacity)
        vector.update(np.arange(capacity), priorities)
        for i, p in enumerate(priorities.tolist()):
            plain[i] = p
        total = vector.total()
        strata = np.arange(batch)
        queries = [np.minimum((strata + rng.random(batch)) * total / batch, total) for _ in range(repeats)]
        query_lists = [q.tolist() for q in queries]
        update_indices = [rng.integers(0, capacity, batch) for _ in range(repeats)]
        update_values = [rng.uniform(0.1, 2.0, batch) for _ in range(repeats)]
        updates = list(zip(update_indices, update_values, strict=True))
        update_lists = [list(zip(i.tolist(), v.tolist(), strict=True)) for i, v in updates]
        for key, run, tree, work in (
            ("vector_sample_us", _vector_sample, vector, queries),
            ("plain_sample_us", _plain_sample, plain, query_lists),
            ("vector_update_us", _vector_update, vector, updates),
            ("plain_update_us", _plain_update, plain, update_lists),
        ):
            figures[key].append(_best_us_per_call(run, tree, work, rounds))
    return {
        "benchmark": "per",
        "capacities": [int(c) for c in capacities],
        "batch": batch,
        "repeats": repeats,
        "rounds": rounds,
        **{key: [round(t, 2) for t in times] for key, times in figures.items()},
        "sample_speedup": [round(p / v, 1) for p, v in zip(figures["plain_sample_us"], figures["vector_sample_us"], strict=True)],
        "update_speedup": [round(p / v, 1) for p, v in zip(figures["plain_update_us"], figures["vector_update_us"], strict=True)],
        "numpy": np.__version__,
    }


def _vector_sample(tree: VectorSumTree, queries: list[np.ndarray]) -> None:
    for prefix_sums in queries:
        tree.retrieve(prefix_sums)


def _plain_sample(tree: SumSegmentTree, queries: list[list[float]]) -> None:
    for prefix_sums in queries:
        for prefix_sum in prefix_sums:
            tree.retrieve(prefix_sum)


def _vector_update(tree: VectorSumTree, updates: list[tuple[np.ndarray, np.ndarray]]) -> None:
    for indices, values in updates:
        tree.update(indices, values)


def _plain_update(tree: SumSegmentTree, updates: list[list[tuple[int, float]]]) -> None:
    for pairs in updates:
        for index, value in pairs:
            tree[index] = value


def _best_us_per_call(run, tree, work: list, rounds: int) -> float:
    """Best over ``rounds`` of ``run(tree, work)``, in microseconds per item of ``work``."""
    best = math.inf
    for _ in range(max(rounds, 1)):
        start = time.perf_counter()
        run(tree, work)
        best = min(best, time.perf_counter() - start)
    return best / len(work) * 1e6
