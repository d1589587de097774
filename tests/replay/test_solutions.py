"""Tutorial 4's harvested reference solutions (``course_admin.replay.solutions``, from the solution
notebook's cells: instructor side) against the course's vectorised trees and buffer (``trees``,
``per``), which the student package keeps: on the same seeded work they give the same answers."""

from types import SimpleNamespace

import numpy as np
import pytest

from course_admin.replay import solutions, trees, vector_per


@pytest.mark.parametrize("kind", ["sum", "min"])
def test_the_notebooks_trees_and_the_vectorised_trees_agree(kind):
    rng = np.random.default_rng(0)
    ours = (trees.VectorSumTree if kind == "sum" else trees.VectorMinTree)(64)
    notebook = (solutions.SumSegmentTree if kind == "sum" else solutions.MinSegmentTree)(64)
    for _ in range(500):
        i, value = int(rng.integers(64)), float(rng.uniform(0.01, 5))
        ours.update([i], [value])
        notebook[i] = value
        np.testing.assert_allclose(ours.tree[1:], notebook.tree[1:], rtol=1e-12)
        if kind == "sum":
            assert ours.total() == pytest.approx(notebook.sum(), rel=1e-12)
            prefix = float(rng.uniform(0, ours.total()))
            assert ours.retrieve(prefix) == notebook.retrieve(prefix)
        else:
            assert ours.min() == notebook.min()


def test_the_notebooks_buffer_and_the_vectorised_buffer_sample_the_same():
    kwargs = dict(obs_dim=3, size=50, batch_size=8, alpha=0.6)
    ours = vector_per.VectorPrioritizedReplayBuffer(3, SimpleNamespace(memory_size=50, batch_size=8, alpha=0.6))
    notebook = solutions.PrioritizedReplayBuffer(**kwargs)
    rng = np.random.default_rng(1)
    for step in range(120):
        obs, nxt = rng.normal(size=3), rng.normal(size=3)
        act, rew, done = int(rng.integers(2)), float(rng.normal()), bool(rng.random() < 0.1)
        assert ours.store(obs, act, rew, nxt, done) == notebook.store(obs, act, rew, nxt, done)
        if step >= 10:
            a, b = ours.sample_batch(0.4, rng=step), notebook.sample_batch(0.4, rng=step)
            assert a.keys() == b.keys()
            for key in a:
                np.testing.assert_allclose(a[key], b[key], rtol=1e-5, err_msg=key)
            priorities = rng.uniform(0.01, 3, size=8)
            ours.update_priorities(a["indices"], priorities)
            notebook.update_priorities(b["indices"], priorities)
            assert ours.max_priority == pytest.approx(notebook.max_priority)
