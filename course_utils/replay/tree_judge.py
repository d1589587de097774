"""The judge's oracles for the segment trees (``checks.TREES``): the leaf ``retrieve`` finds, the
total of the speed part's sums, and the layout of a tree's list of nodes.

Apart from the drive because they compute what the exercise asks: the grader judges in its own
process, and its child that drives the student's trees cannot read this module
(``grading.drive_apart.JUDGE_ONLY``). The student's check cell imports it to judge there.
"""

from __future__ import annotations

import numpy as np

from course_utils.check_helpers import numbers
from course_utils.checking import Problem, fmt
from course_utils.records import Opaque


def cumsum_retrieve(values: np.ndarray, prefix_sum: float) -> int:
    """Smallest i with values[0] + ... + values[i] > prefix_sum (the last positive leaf at the total)."""
    index = int(np.searchsorted(np.cumsum(values), prefix_sum, side="right"))
    if index >= len(values):
        index = int(np.flatnonzero(values > 0)[-1])
    return index


def speed_total(work: dict, capacity: int) -> float:
    """The total of the speed part's sums (``work``: ``checks._speed_work``'s), for the judge: each
    sum is the leaves' changes so far that fall in its range (every leaf starts at 0; whole numbers,
    so every sum is exact)."""
    leaves = np.array(work["leaves"])
    current: dict[int, float] = {}
    deltas = np.zeros(len(leaves))
    for k, (leaf, value) in enumerate(zip(work["leaves"], work["values"], strict=True)):
        deltas[k] = value - current.get(leaf, 0.0)
        current[leaf] = float(value)
    total = 0.0
    for k, (start, end) in enumerate(zip(work["starts"], work["ends"], strict=True)):
        inside = (leaves[: k + 1] >= start) & (leaves[: k + 1] < end)
        total += float(deltas[: k + 1][inside].sum())
    return total


def judge_layout(nodes, values: np.ndarray, name: str) -> None:
    """A tree built on leaves ``values`` keeps its nodes in ``self.tree``, a list of 2 * capacity
    numbers: leaf i is node capacity + i, and every inner node k (1 .. capacity - 1) combines its
    children 2k and 2k + 1 (their sum, or their minimum for ``MinSegmentTree``)."""
    capacity, combine = len(values), (min if name.startswith("Min") else (lambda a, b: a + b))
    word = "minimum" if name.startswith("Min") else "sum"
    layout = (f"Hint: keep the nodes in `self.tree`, the list of 2 * capacity numbers `SegmentTree.__init__` makes: "
              f"leaf i is node capacity + i, and every inner node holds the {word} of its two children.")
    if nodes is None or isinstance(nodes, Opaque) or type(nodes).__name__ not in ("list", "ndarray"):
        raise Problem(f"{name}({capacity}): its nodes are not in a list `self.tree` (found {nodes!r}). {layout}")
    tree = numbers(nodes, f"{name}({capacity}): `self.tree`").ravel()
    if len(tree) != 2 * capacity:
        raise Problem(f"{name}({capacity}): `self.tree` holds {len(tree)} numbers, expected 2 * capacity = "
                      f"{2 * capacity}. {layout}")
    if tree[capacity:].tolist() != values.tolist():
        raise Problem(f"{name}({capacity}): after setting leaves {fmt(values)}, nodes {capacity} .. {2 * capacity - 1} of "
                      f"`self.tree` hold {fmt(tree[capacity:])}. {layout}")
    for node in range(capacity - 1, 0, -1):
        want = combine(tree[2 * node], tree[2 * node + 1])
        if tree[node] != want:
            raise Problem(f"{name}({capacity}): node {node} of `self.tree` holds {tree[node]:g}, the {word} of its children "
                          f"(nodes {2 * node} and {2 * node + 1}) is {want:g}. Hint: after setting a leaf, recompute each "
                          "ancestor up to the root (node 1) from its two children.")
