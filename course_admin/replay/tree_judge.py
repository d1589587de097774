"""The grader's oracle for the segment trees' speed part (``course_utils.replay.checks.TREES``):
the total of the sums the steps drawn from a seed ask for. The grader draws the seed afresh for
every submission, so the total cannot be stored; the judge (``course_utils.replay.tree_judge``)
gets ``speed_total`` from the grader (``hidden_cases.ORACLES``) where it runs, and reads the public seed's total from
``assets/replay_expected.json`` (``course_admin.replay.reference``)."""

from __future__ import annotations

import numpy as np

from course_utils.replay.checks import _speed_works


def _work_total(work: dict) -> float:
    """The total of one tree's sums (``work``: ``checks._speed_work``'s): each sum is the leaves'
    changes so far that fall in its range (every leaf starts at 0; whole numbers, so every sum is
    exact)."""
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


def speed_total(speed: dict, seed: int) -> float:
    """The total of the speed part's sums (small tree's and big tree's) for the steps of ``seed``."""
    return sum(_work_total(work) for work in _speed_works(speed, seed))
