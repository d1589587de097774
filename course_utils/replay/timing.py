"""The student's sum tree timed against a plain list (``standin_trees.SlowSumTree``: every
operation walks the leaves), in the same process, at two capacities: the notebook's Section 2
shows how each one's cost grows with the number of leaves. (The course's vectorised trees are
timed by ``course bench per``, instructor side.)
"""

from __future__ import annotations

import time

import numpy as np

from course_utils.replay.standin_trees import SlowSumTree


def bench_trees(your_tree, capacities=(1024, 16384), batch: int = 64, repeats: int = 50, seed: int = 0,
                budget: float = 1.0) -> dict:
    """Microseconds per batch of ``batch`` samples (``retrieve`` of stratified prefix sums) and per
    batch of ``batch`` leaf updates (``tree[i] = p``), for ``your_tree`` (a sum-tree class:
    ``your_tree(capacity)``, ``tree[i] = p``, ``retrieve(prefix_sum)``) and for the list, at each
    capacity (trees full of random priorities). Each figure is the mean wall time over up to
    ``repeats`` batches, fewer when they take more than ``budget`` seconds (the list's at a large
    capacity). Returns ``{"capacities", "batch", "yours_sample_us", "list_sample_us",
    "yours_update_us", "list_update_us"}`` (one figure per capacity in each list)."""
    rng = np.random.default_rng(seed)
    figures: dict[str, list] = {f"{who}_{what}_us": [] for who in ("yours", "list") for what in ("sample", "update")}
    for capacity in capacities:
        priorities = rng.uniform(0.1, 2.0, capacity).tolist()
        total = float(sum(priorities))
        queries = [((np.arange(batch) + rng.random(batch)) * total / batch).clip(0.0, total).tolist() for _ in range(repeats)]
        updates = [list(zip(rng.integers(0, capacity, batch).tolist(), rng.uniform(0.1, 2.0, batch).tolist(), strict=True))
                   for _ in range(repeats)]
        for who, cls in (("yours", your_tree), ("list", SlowSumTree)):
            tree = cls(capacity)
            for i, p in enumerate(priorities):
                tree[i] = p
            figures[f"{who}_sample_us"].append(_us_per_batch(lambda qs, t=tree: [t.retrieve(q) for q in qs], queries, budget))
            figures[f"{who}_update_us"].append(_us_per_batch(lambda pairs, t=tree: _set(t, pairs), updates, budget))
    return {"capacities": [int(c) for c in capacities], "batch": batch, **figures}


def _set(tree, pairs) -> None:
    for index, value in pairs:
        tree[index] = value


def _us_per_batch(run, batches: list, budget: float) -> float:
    """Mean wall microseconds of ``run(b)`` over ``batches``, stopping once ``budget`` seconds have passed."""
    start = time.perf_counter()
    done = 0
    for work in batches:
        run(work)
        done += 1
        if time.perf_counter() - start > budget:
            break
    return (time.perf_counter() - start) / done * 1e6
