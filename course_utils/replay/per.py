"""Prioritized experience replay (Schaul et al. 2016, proportional variant): segment trees,
a uniform and a prioritized replay buffer, the beta schedule, and a benchmark.

Two versions of the trees: ``SumSegmentTree`` / ``MinSegmentTree`` are plain readable Python
(the tutorial's exercise, one leaf at a time); ``VectorSumTree`` / ``VectorMinTree`` do a
whole batch at once with numpy (for training), and ``VectorPrioritizedReplayBuffer`` is the
prioritized buffer built on them. ``bench_per`` (``course bench per``) times both.

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
# Numpy-vectorised segment trees and a prioritized buffer built on them (for training)

_WHOLE_LEVEL_WIDTH = 128
"""Near the root a level has fewer nodes than a batch has updates: a level this narrow (or
narrower) is recomputed whole with one ufunc call instead of gathering the changed nodes."""

_SEARCH_LEVEL = 10
"""``retrieve`` finds each query's node on this level (1024 nodes) with one cumulative sum
and one ``searchsorted`` (skipping the first 10 levels of the descent), then descends."""


class _VectorSegmentTree:
    """A segment tree over ``capacity`` leaves in one float64 array, updated for a batch of
    leaves at once. Same layout as ``SumSegmentTree``: node 1 is the root, node ``k`` has
    children ``2k`` and ``2k + 1``, leaf ``i`` is node ``capacity + i`` (node 0 unused).
    """

    _operation: np.ufunc
    _neutral: float

    def __init__(self, capacity: int):
        self.capacity = _check_capacity(capacity)
        self.depth = self.capacity.bit_length() - 1  # levels below the root
        self.tree = np.full(2 * self.capacity, self._neutral, dtype=np.float64)
        self._left = self.tree[0::2]  # _left[k] is node 2k: node k's left child (a view)
        self._right = self.tree[1::2]  # _right[k] is node 2k + 1: its right child

    def __len__(self) -> int:
        return self.capacity

    def __getitem__(self, index):
        """Leaf values: ``tree[i]`` for one leaf, ``tree[indices]`` for an int array."""
        return self.tree[np.asarray(index) + self.capacity]

    def update(self, indices, values) -> None:
        """Set leaves ``indices`` (int (K,)) to ``values`` ((K,) or a scalar).

        A repeated index keeps its last value. The parents of the changed leaves are then
        recomputed level by level from their two children (never by adding deltas, which
        would go wrong with repeated indices and let rounding errors pile up).
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
        if indices.min() < 0 or indices.max() >= self.capacity:
            out = indices[(indices < 0) | (indices >= self.capacity)]
            raise IndexError(f"leaf indices {_short(out)} are out of range: the tree has leaves 0 to {self.capacity - 1}.")
        self._check_values(values)
        self._write(indices + self.capacity, values)

    def _check_values(self, values: np.ndarray) -> None:
        pass

    def _write(self, nodes: np.ndarray, values: np.ndarray) -> None:
        """Write leaf nodes (int64 node numbers, changed in place) and recompute their ancestors."""
        tree, left, right, operation = self.tree, self._left, self._right, self._operation
        tree[nodes] = values  # numpy assigns in order: with a repeated index the last value wins
        for level in range(self.depth - 1, -1, -1):  # the parents' level, up to the root (level 0)
            width = 1 << level
            if width <= _WHOLE_LEVEL_WIDTH:
                operation(left[width : 2 * width], right[width : 2 * width], out=tree[width : 2 * width])
            else:
                nodes >>= 1  # siblings share a parent: it is written twice, with the same value
                tree[nodes] = operation(left[nodes], right[nodes])


class VectorSumTree(_VectorSegmentTree):
    """A sum tree updated and searched for a whole batch at once with numpy.

    ``tree`` is a float64 array of ``2 * capacity`` with the same layout and the same sums
    as ``SumSegmentTree``. ``capacity`` must be a positive power of two; leaves start at 0
    and must be finite and non-negative.
    """

    _operation = np.add
    _neutral = 0.0

    def total(self) -> float:
        """Sum of all leaves."""
        return float(self.tree[1])

    def _check_values(self, values: np.ndarray) -> None:
        if not (values.min() >= 0.0 and values.max() < math.inf):  # also False for NaN
            bad = values[~(np.isfinite(values) & (values >= 0))]
            raise ValueError(f"sum-tree leaves must be finite and >= 0, got {_short(bad)}.")

    def retrieve(self, prefix_sums) -> np.ndarray:
        """For each prefix sum, the smallest leaf ``i`` with ``leaf[0] + ... + leaf[i] > prefix_sum``.

        ``prefix_sums``: any shape, each in [0, total]; returns int64 leaf indices of the
        same shape, never a leaf whose value is 0. All queries go down together: one
        ``searchsorted`` over the cumulative sums of level ``min(depth, 10)`` finds each
        query's node there, then one level per step (about six numpy calls per level).
        Where rounding differs (the cumulative sums of that level are added left to right,
        the tree's sums in pairs) a prefix sum within a rounding error of a boundary may get
        the neighbouring leaf.
        """
        queries = np.asarray(prefix_sums, dtype=np.float64)
        flat = queries.reshape(-1)
        tree, total = self.tree, self.tree[1]
        if flat.size == 0:
            return np.zeros(queries.shape, dtype=np.int64)
        if not (flat.min() >= 0.0 and flat.max() <= total):
            outside = flat[~((flat >= 0.0) & (flat <= total))]
            raise ValueError(f"prefix sums must lie in [0, total] = [0, {total!r}], got {_short(outside)}.")
        if total <= 0.0:
            raise ValueError("the tree is empty (all leaves are 0): update some leaves to positive values before retrieve.")
        top = min(self.depth, _SEARCH_LEVEL)
        width = 1 << top
        level = tree[width : 2 * width]  # the nodes of level `top`, left to right
        ends = np.cumsum(level)  # ends[j]: sum of the leaves under nodes 0..j of that level
        nodes = np.searchsorted(ends, flat, side="right")  # first node whose end exceeds the query
        np.minimum(nodes, width - 1, out=nodes)  # a query at the very total (or rounded above it)
        remaining = flat - ends[nodes]
        remaining += level[nodes]  # what is left to find inside that node's subtree
        nodes += width  # node numbers in the tree
        for _ in range(self.depth - top):
            nodes += nodes  # the left child
            left_sums = tree[nodes]
            go_right = remaining >= left_sums
            left_sums *= go_right
            remaining -= left_sums
            nodes += go_right
        if tree[nodes].min() <= 0.0:  # rare: rounding led into an empty subtree; redo those carefully
            empty = tree[nodes] <= 0.0
            nodes[empty] = self._descend_guarded(flat[empty])
        return (nodes - self.capacity).reshape(queries.shape)

    def _descend_guarded(self, queries: np.ndarray) -> np.ndarray:
        """Node numbers of the leaves for ``queries``, from the root, never entering a subtree of sum 0."""
        remaining = queries.copy()
        nodes = np.ones(remaining.shape, dtype=np.int64)
        for _ in range(self.depth):
            left_sums, right_sums = self._left[nodes], self._right[nodes]
            go_right = (remaining >= left_sums) & (right_sums > 0.0)
            remaining -= left_sums * go_right
            nodes = 2 * nodes + go_right
        return nodes


class VectorMinTree(_VectorSegmentTree):
    """A min tree updated for a batch of leaves at once; leaves start at +inf.

    Same layout as ``MinSegmentTree``; ``min()`` is the smallest leaf (the root).
    """

    _operation = np.minimum
    _neutral = math.inf

    def _check_values(self, values: np.ndarray) -> None:
        if np.isnan(values.min()):
            raise ValueError("min-tree leaves must be numbers, got NaN.")

    def min(self) -> float:
        """The smallest leaf (inf while every leaf is unset)."""
        return float(self.tree[1])


class VectorPrioritizedReplayBuffer(PrioritizedReplayBuffer):
    """``PrioritizedReplayBuffer`` with the trees updated and searched in batches (numpy).

    Same interface and same sampling rule (stratified, proportional to ``p**alpha``), same
    weights, same checks; made for training loops. ``sample_batch`` does the whole batch's
    tree descent in one go and ``update_priorities`` updates both trees level by level.
    """

    def __init__(self, obs_dim: int, size: int, batch_size: int = 32, alpha: float = 0.6):
        super().__init__(obs_dim, size, batch_size, alpha)
        tree_capacity = _next_power_of_two(size)
        self.sum_tree = VectorSumTree(tree_capacity)
        self.min_tree = VectorMinTree(tree_capacity)
        self._strata = np.arange(self.batch_size, dtype=np.float64)
        self._one_node = np.zeros(1, dtype=np.int64)
        self._one_value = np.zeros(1, dtype=np.float64)

    def store(self, obs, act: int, rew: float, next_obs, done: bool) -> int:
        """Store one transition with the current max priority; returns its slot index."""
        index = ReplayBuffer.store(self, obs, act, rew, next_obs, done)
        self._one_value[0] = self.max_priority**self.alpha
        for tree in (self.sum_tree, self.min_tree):
            self._one_node[0] = index + tree.capacity
            tree._write(self._one_node, self._one_value)
        return index

    def sample_batch(self, beta: float, rng=None) -> dict[str, np.ndarray]:
        """Like ``PrioritizedReplayBuffer.sample_batch``: arrays of (B, ...), ``weights`` float32
        (B,) in (0, 1] and ``indices`` int64 (B,)."""
        if not (math.isfinite(beta) and beta >= 0.0):
            raise ValueError(f"beta must be a finite number >= 0 (usually annealed from 0.4 to 1), got {beta!r}.")
        self._check_can_sample()
        rng = _as_rng(rng)
        total = self.sum_tree.total()
        draws = self._strata + rng.random(self.batch_size)
        draws *= total / self.batch_size
        np.minimum(draws, total, out=draws)
        indices = self.sum_tree.retrieve(draws)
        # w_i / max_w = (p_i / p_min) ** -beta: the totals and N cancel out
        weights = (self.sum_tree.tree[indices + self.sum_tree.capacity] / self.min_tree.min()) ** -beta
        batch = self._batch(indices)
        batch["weights"] = weights.astype(np.float32)
        batch["indices"] = indices
        return batch

    def update_priorities(self, indices, priorities) -> None:
        """Like ``PrioritizedReplayBuffer.update_priorities``: checks everything, then writes."""
        indices = np.asarray(indices).reshape(-1)
        priorities = np.asarray(priorities, dtype=np.float64).reshape(-1)
        if indices.shape != priorities.shape:
            raise ValueError(f"indices and priorities must have the same length, got {indices.size} and {priorities.size}.")
        if indices.size == 0:
            return
        if not np.issubdtype(indices.dtype, np.integer):
            raise IndexError(f"indices must be integers, got dtype {indices.dtype}.")
        if not (priorities.min() > 0.0 and priorities.max() < math.inf):  # also False for NaN
            bad = priorities[~(np.isfinite(priorities) & (priorities > 0))]
            raise ValueError(f"priorities must be finite and > 0 (add a small eps to |TD error|), got {_short(bad)}.")
        if indices.min() < 0 or indices.max() >= len(self):
            out = indices[(indices < 0) | (indices >= len(self))]
            raise IndexError(f"indices must refer to stored transitions, 0 to {len(self) - 1}, got {_short(out)}.")
        scaled = priorities**self.alpha
        self.sum_tree._write(indices + self.sum_tree.capacity, scaled)
        self.min_tree._write(indices + self.min_tree.capacity, scaled)
        self.max_priority = max(self.max_priority, float(priorities.max()))


# --------------------------------------------------------------------------------------
# Benchmark


def bench_per(
    capacities=(1024, 16384, 131072), batch: int = 64, repeats: int = 300, rounds: int = 5, seed: int = 0, buffers: bool = True
) -> dict:
    """Microseconds per batched sample and per batched priority update, the course's
    vectorised code against the plain-Python segment trees of the exercise, measured in the
    same process at each capacity (trees full of random priorities).

    Two levels are timed:

    * trees: ``VectorSumTree.retrieve`` / ``.update`` of ``batch`` items against a Python
      loop of ``batch`` calls to ``SumSegmentTree.retrieve`` / ``tree[i] = p``;
    * buffers: ``sample_batch(beta)`` and ``update_priorities`` of ``batch`` transitions,
      ``VectorPrioritizedReplayBuffer`` against ``PrioritizedReplayBuffer`` (plain trees;
      both update a sum and a min tree and compute importance weights); skipped when
      ``buffers`` is False.

    Each figure is the best of ``rounds`` rounds of ``repeats`` calls, as wall time
    (``time.perf_counter``, ``*_us``) and as this process's CPU time (``time.process_time``,
    ``*_cpu_us``; coarser, but blind to other processes on a shared machine).
    Speedup = plain wall time / vectorised wall time. If ``cpprb`` is installed its
    ``PrioritizedReplayBuffer`` is timed too (``cpprb_*``); otherwise ``"cpprb": "absent"``.
    """
    rng = np.random.default_rng(seed)
    figures: dict[str, list] = {}
    for capacity in capacities:
        priorities = rng.uniform(0.1, 2.0, capacity)
        vector, plain = VectorSumTree(capacity), SumSegmentTree(capacity)
        vector.update(np.arange(capacity), priorities)
        plain.tree = vector.tree.tolist()  # the same layout: the same tree, as a Python list
        total = vector.total()
        strata = np.arange(batch)
        queries = [np.minimum((strata + rng.random(batch)) * total / batch, total) for _ in range(repeats)]
        update_indices = [rng.integers(0, capacity, batch) for _ in range(repeats)]
        update_values = [rng.uniform(0.1, 2.0, batch) for _ in range(repeats)]
        updates = list(zip(update_indices, update_values, strict=True))
        cases = {
            "tree_vector_sample": (_vector_sample, vector, queries),
            "tree_plain_sample": (_plain_sample, plain, [q.tolist() for q in queries]),
            "tree_vector_update": (_vector_update, vector, updates),
            "tree_plain_update": (_plain_update, plain, [list(zip(i.tolist(), v.tolist(), strict=True)) for i, v in updates]),
        }
        if buffers:
            fast = _full_buffer(VectorPrioritizedReplayBuffer, capacity, batch, priorities)
            slow = _full_buffer(PrioritizedReplayBuffer, capacity, batch, priorities)
            draws = [np.random.default_rng(seed)] * repeats  # one generator, made before the clock starts
            cases["buffer_vector_sample"] = (_buffer_sample, fast, draws)
            cases["buffer_plain_sample"] = (_buffer_sample, slow, list(draws))
            cases["buffer_vector_update"] = (_buffer_update, fast, updates)
            cases["buffer_plain_update"] = (_buffer_update, slow, updates)
        for name, (run, subject, work) in cases.items():
            wall, cpu = _best_us_per_call(run, subject, work, rounds)
            figures.setdefault(f"{name}_us", []).append(round(wall, 2))
            figures.setdefault(f"{name}_cpu_us", []).append(round(cpu, 2))
        cpprb = _time_cpprb(capacity, batch, priorities, updates, rounds)
        if cpprb is not None:
            for name, (wall, cpu) in cpprb.items():
                figures.setdefault(f"cpprb_{name}_us", []).append(round(wall, 2))
                figures.setdefault(f"cpprb_{name}_cpu_us", []).append(round(cpu, 2))

    def speedups(level: str, what: str) -> list[float]:
        plain, vector = figures[f"{level}_plain_{what}_us"], figures[f"{level}_vector_{what}_us"]
        return [round(p / v, 2) for p, v in zip(plain, vector, strict=True)]

    result = {
        "benchmark": "per",
        "capacities": [int(c) for c in capacities],
        "batch": batch,
        "repeats": repeats,
        "rounds": rounds,
    }
    result.update(figures)
    for level in ("tree", "buffer") if buffers else ("tree",):
        for what in ("sample", "update"):
            result[f"{level}_{what}_speedup"] = speedups(level, what)
    if "cpprb_sample_us" not in figures or not buffers:
        result["cpprb"] = "absent"
    else:
        result["vector_over_cpprb_sample"] = [
            round(v / c, 2) for v, c in zip(figures["buffer_vector_sample_us"], figures["cpprb_sample_us"], strict=True)
        ]
        result["vector_over_cpprb_update"] = [
            round(v / c, 2) for v, c in zip(figures["buffer_vector_update_us"], figures["cpprb_update_us"], strict=True)
        ]
    result["numpy"] = np.__version__
    return result


def _full_buffer(buffer_class, capacity: int, batch: int, priorities: np.ndarray):
    """A buffer of ``capacity`` transitions (obs_dim 4) whose priorities are ``priorities``."""
    buffer = buffer_class(obs_dim=4, size=capacity, batch_size=batch, alpha=0.6)
    buffer.size, buffer.ptr = capacity, 0
    vector_sum, vector_min = VectorSumTree(capacity), VectorMinTree(capacity)
    vector_sum.update(np.arange(capacity), priorities**0.6)
    vector_min.update(np.arange(capacity), priorities**0.6)
    if isinstance(buffer.sum_tree, VectorSumTree):
        buffer.sum_tree.tree[:], buffer.min_tree.tree[:] = vector_sum.tree, vector_min.tree
    else:
        buffer.sum_tree.tree, buffer.min_tree.tree = vector_sum.tree.tolist(), vector_min.tree.tolist()
    buffer.max_priority = float(priorities.max())
    return buffer


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


def _buffer_sample(buffer: PrioritizedReplayBuffer, generators: list[np.random.Generator]) -> None:
    for generator in generators:
        buffer.sample_batch(0.4, rng=generator)


def _buffer_update(buffer: PrioritizedReplayBuffer, updates: list[tuple[np.ndarray, np.ndarray]]) -> None:
    for indices, priorities in updates:
        buffer.update_priorities(indices, priorities)


def _time_cpprb(capacity: int, batch: int, priorities: np.ndarray, updates, rounds: int):
    """cpprb's PrioritizedReplayBuffer (C++), if installed: {"sample": (wall, cpu), "update": ...}."""
    try:
        import cpprb
    except ImportError:
        return None
    buffer = cpprb.PrioritizedReplayBuffer(
        capacity, {"obs": {"shape": 4}, "act": {}, "rew": {}, "next_obs": {"shape": 4}, "done": {}}
    )
    buffer.add(
        obs=np.zeros((capacity, 4)),
        act=np.zeros(capacity),
        rew=np.zeros(capacity),
        next_obs=np.zeros((capacity, 4)),
        done=np.zeros(capacity),
        priorities=priorities,
    )

    def sample(buf, work):
        for _ in work:
            buf.sample(batch, beta=0.4)

    def update(buf, work):
        for indices, values in work:
            buf.update_priorities(indices, values)

    return {
        "sample": _best_us_per_call(sample, buffer, updates, rounds),
        "update": _best_us_per_call(update, buffer, updates, rounds),
    }


def _best_us_per_call(run, subject, work: list, rounds: int) -> tuple[float, float]:
    """Best over ``rounds`` of ``run(subject, work)``: (wall, CPU) microseconds per item of ``work``."""
    best_wall = best_cpu = math.inf
    for _ in range(max(rounds, 1)):
        wall, cpu = time.perf_counter(), time.process_time()
        run(subject, work)
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    return best_wall / len(work) * 1e6, best_cpu / len(work) * 1e6
