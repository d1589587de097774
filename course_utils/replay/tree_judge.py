"""The judge's parts of the segment trees' check (``checks.TREES``) that the course's record of
its own answer does not hold: the layout of a tree's list of nodes (checked against the tree's own
leaves, ``judge_layout``) and the total of the speed part's sums (``speed_total``), whose steps the
grader draws afresh for every submission.

Apart from the drive: the grader judges in its own process, and its child that drives the
student's trees cannot read this module (``grading.drive_apart.JUDGE_ONLY``). The student's check
cell imports it to judge there.
"""

from __future__ import annotations

import numpy as np

from course_utils.check_helpers import numbers
from course_utils.checking import Problem, fmt, grader_oracle
from course_utils.records import Opaque
from course_utils.replay import expected


def speed_total(speed: dict, seed: int) -> float | None:
    """The total of the speed part's sums drawn from ``seed`` (``speed``: the case's speed part):
    stored for the public seed, computed by the oracle the grader hands in for the seed it draws;
    None where neither exists."""
    found = expected.stored("segment_trees").get(expected.case_key([speed, seed]))
    if found is not None:
        return found
    oracle = grader_oracle("test_segment_trees")
    return None if oracle is None else oracle(speed, seed)


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
