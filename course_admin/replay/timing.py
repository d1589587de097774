"""The course's vectorised segment trees and prioritized buffer timed against plain-Python ones,
measured in the same process: ``course bench per`` (``course_admin.replay.bench``) times them
against the exercises' reference solutions. (The notebook times the student's trees against a plain
list instead, ``course_utils.replay.timing``: the course's trees are not in the student's package.)
"""

from __future__ import annotations

import math
import time

import numpy as np
import torch

from course_admin.replay.trees import VectorMinTree, VectorSumTree
from course_admin.replay.vector_per import VectorPrioritizedReplayBuffer
from course_utils.replay.dqn import DQNConfig


def bench_per(
    capacities=(1024, 16384, 131072),
    batch: int = 64,
    repeats: int = 300,
    rounds: int = 5,
    seed: int = 0,
    buffers: bool = True,
    plain_tree=None,
    plain_buffer=None,
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
    ``plain_tree``: the plain sum-tree class to time (``SumSegmentTree(capacity)`` with a
    ``tree`` list, ``tree[i] = p`` and ``retrieve``); ``plain_buffer``: the plain prioritized
    buffer class (``PrioritizedReplayBuffer(obs_dim=, size=, batch_size=, alpha=)``), needed
    when ``buffers`` is True.
    Speedup = plain wall time / vectorised wall time. If ``cpprb`` is installed its
    ``PrioritizedReplayBuffer`` is timed too (``cpprb_*``); otherwise ``"cpprb": "absent"``.
    """
    if plain_tree is None or (buffers and plain_buffer is None):
        raise ValueError("bench_per times plain classes against the vectorised ones: give plain_tree "
                         "(and plain_buffer when buffers=True)")
    rng = np.random.default_rng(seed)
    figures: dict[str, list] = {}
    for capacity in capacities:
        priorities = rng.uniform(0.1, 2.0, capacity)
        vector, plain = VectorSumTree(capacity), plain_tree(capacity)
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
            config = DQNConfig(memory_size=capacity, batch_size=batch, alpha=0.6)
            fast = _full_buffer(VectorPrioritizedReplayBuffer(4, config), priorities)
            slow = _full_buffer(plain_buffer(obs_dim=4, size=capacity, batch_size=batch, alpha=0.6), priorities)
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
        return [_ratio(p, v) for p, v in zip(plain, vector, strict=True)]

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
            _ratio(v, c) for v, c in zip(figures["buffer_vector_sample_us"], figures["cpprb_sample_us"], strict=True)
        ]
        result["vector_over_cpprb_update"] = [
            _ratio(v, c) for v, c in zip(figures["buffer_vector_update_us"], figures["cpprb_update_us"], strict=True)
        ]
    result["numpy"] = np.__version__
    return result


def _full_buffer(buffer, priorities: np.ndarray):
    """``buffer`` (empty, obs_dim 4, alpha 0.6, one slot per priority) filled: every slot held,
    with priority ``priorities``; returns it."""
    capacity = priorities.size
    if hasattr(buffer, "memory"):  # a buffer on a memory of dict batches (the exercise's): one batch fills it
        buffer.memory.add({"state": torch.zeros((capacity, 4)), "action": torch.zeros(capacity, dtype=torch.int64),
                           "reward": torch.zeros(capacity), "next_state": torch.zeros((capacity, 4)),
                           "done": torch.zeros(capacity)})
    else:
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


def _plain_sample(tree, queries: list[list[float]]) -> None:
    for prefix_sums in queries:
        for prefix_sum in prefix_sums:
            tree.retrieve(prefix_sum)


def _vector_update(tree: VectorSumTree, updates: list[tuple[np.ndarray, np.ndarray]]) -> None:
    for indices, values in updates:
        tree.update(indices, values)


def _plain_update(tree, updates: list[list[tuple[int, float]]]) -> None:
    for pairs in updates:
        for index, value in pairs:
            tree[index] = value


def _buffer_sample(buffer, generators: list[np.random.Generator]) -> None:
    for generator in generators:
        buffer.sample_batch(0.4, rng=generator)


def _buffer_update(buffer, updates: list[tuple[np.ndarray, np.ndarray]]) -> None:
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


def _ratio(a: float, b: float) -> float:
    """``a / b`` to three significant digits: a ratio rounded to two decimals reads 0.0 when a
    pre-empted round makes ``b`` hundreds of times ``a`` (seen on a loaded machine)."""
    return float(f"{a / b:.3g}")


def _best_us_per_call(run, subject, work: list, rounds: int) -> tuple[float, float]:
    """Best over ``rounds`` of ``run(subject, work)``: (wall, CPU) microseconds per item of ``work``."""
    best_wall = best_cpu = math.inf
    for _ in range(max(rounds, 1)):
        wall, cpu = time.perf_counter(), time.process_time()
        run(subject, work)
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    return best_wall / len(work) * 1e6, best_cpu / len(work) * 1e6
