"""The course's segment trees for prioritized replay, and the one check of priorities
(``validate_priorities``).

``VectorSumTree`` / ``VectorMinTree`` update and search a whole batch of leaves at once with
numpy (for the course's trainer, ``vector_per``). They compute what the tutorial's Exercise 2 asks
(sum and min trees), so they are instructor code, never in the student's package. The plain
one-leaf-at-a-time trees are that exercise: their reference is harvested into
``course_admin.replay.solutions``. The trees keep a complete binary
tree in one array of ``2 * capacity``: node 1 is the root, node ``k`` has children ``2k`` and
``2k + 1``, leaf ``i`` is node ``capacity + i`` (node 0 is unused).

A sum tree's leaves are priorities to the power ``alpha`` (0 for an empty slot); the buffers
in ``vector_per`` and the sum trees here check priorities with ``validate_priorities``.
"""

from __future__ import annotations

import math

import numpy as np


def validate_priorities(priorities, length: int | None = None, *, allow_zero: bool = False, name: str = "priorities"):
    """Check priorities, before anything is written; return them as a float or a flat float64 array.

    A Python ``float`` (or ``int``) is checked as one value and returned as a float (a fast path
    for one value); anything else becomes a flat float64 array of shape (K,). Every value
    must be finite and > 0 (>= 0 with ``allow_zero``, for tree leaves, where 0 marks an empty
    slot). ``length``: the number of indices the priorities go with (K must equal it).
    ``name`` is what the message calls the values. Raises ``ValueError`` saying what is wrong
    and what to do.
    """
    if isinstance(priorities, float) or (isinstance(priorities, int) and not isinstance(priorities, bool)):
        value = float(priorities)
        if not (math.isfinite(value) and (value >= 0.0 if allow_zero else value > 0.0)):
            raise ValueError(_priority_message(name, allow_zero, repr(value)))
        return value
    values = np.asarray(priorities, dtype=np.float64).reshape(-1)
    if length is not None and values.size != length:
        raise ValueError(f"indices and {name} must have the same length (one value per index), got {length} and {values.size}.")
    if values.size == 0:
        return values
    low, high = values.min(), values.max()  # NaN makes both NaN, and every comparison below False
    if not ((low >= 0.0 if allow_zero else low > 0.0) and high < math.inf):
        good = np.isfinite(values) & ((values >= 0.0) if allow_zero else (values > 0.0))
        raise ValueError(_priority_message(name, allow_zero, short_repr(values[~good])))
    return values


def _priority_message(name: str, allow_zero: bool, shown: str) -> str:
    if allow_zero:
        return f"{name} must be finite and >= 0 (a priority to the power alpha, or 0 for an empty slot), got {shown}."
    return f"{name} must be finite and > 0 (use |TD error| + a small eps such as 1e-6), got {shown}."


def short_repr(values) -> str:
    """At most six of ``values`` (the first and last three), for error messages."""
    return np.array2string(np.asarray(values), threshold=6, edgeitems=3, separator=", ")


def _check_capacity(capacity) -> int:
    if isinstance(capacity, bool) or not isinstance(capacity, int | np.integer) or capacity < 1:
        raise ValueError(f"capacity must be a positive power of two (1, 2, 4, 8, ...), got {capacity!r}.")
    capacity = int(capacity)
    if capacity & (capacity - 1):
        raise ValueError(
            f"capacity must be a positive power of two (1, 2, 4, 8, ...), got {capacity}; "
            f"the next power of two is {next_power_of_two(capacity)}."
        )
    return capacity


def next_power_of_two(n: int) -> int:
    return 1 << (int(n) - 1).bit_length()


# --------------------------------------------------------------------------------------
# Numpy-vectorised segment trees (for training)

_WHOLE_LEVEL_WIDTH = 128
"""Near the root a level has fewer nodes than a batch has updates: a level this narrow (or
narrower) is recomputed whole with one ufunc call instead of gathering the changed nodes."""

_SEARCH_LEVEL = 10
"""``retrieve`` finds each query's node on this level (1024 nodes) with one cumulative sum
and one ``searchsorted`` (skipping the first 10 levels of the descent), then descends."""


class _VectorSegmentTree:
    """A segment tree over ``capacity`` leaves in one float64 array, updated for a batch of
    leaves at once. Node 1 is the root, node ``k`` has
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
            raise IndexError(f"leaf indices {short_repr(out)} are out of range: the tree has leaves 0 to {self.capacity - 1}.")
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

    ``tree`` is a float64 array of ``2 * capacity`` (the layout above), each inner node the sum
    of its two children. ``capacity`` must be a positive power of two; leaves start at 0
    and must be finite and non-negative.
    """

    _operation = np.add
    _neutral = 0.0

    def total(self) -> float:
        """Sum of all leaves."""
        return float(self.tree[1])

    def _check_values(self, values: np.ndarray) -> None:
        validate_priorities(values, allow_zero=True, name="sum-tree leaves")

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
            raise ValueError(f"prefix sums must lie in [0, total] = [0, {total!r}], got {short_repr(outside)}.")
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

    Each inner node is the smaller of its two children; ``min()`` is the smallest leaf (the root).
    """

    _operation = np.minimum
    _neutral = math.inf

    def _check_values(self, values: np.ndarray) -> None:
        if np.isnan(values.min()):
            raise ValueError("min-tree leaves must be numbers, got NaN.")

    def min(self) -> float:
        """The smallest leaf (inf while every leaf is unset)."""
        return float(self.tree[1])
