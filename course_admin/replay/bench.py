"""``course bench per``: the course's vectorised trees and prioritized buffer against the plain
ones of the exercises' reference solutions (and cpprb when it is installed), measured by
``timing.bench_per``."""

from __future__ import annotations

from course_admin.replay import solutions
from course_admin.replay.timing import bench_per as _bench_per


def bench_per(**kwargs) -> dict:
    """``timing.bench_per`` with the reference ``SumSegmentTree`` and ``PrioritizedReplayBuffer``
    as the plain baseline (keyword arguments are passed on)."""
    return _bench_per(plain_tree=solutions.SumSegmentTree, plain_buffer=solutions.PrioritizedReplayBuffer, **kwargs)
