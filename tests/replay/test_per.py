import math

import numpy as np
import pytest

from course_utils.replay.checks import check_prioritized_buffer, check_segment_trees
from course_utils.replay.per import (
    MinSegmentTree,
    PrioritizedReplayBuffer,
    ReplayBuffer,
    SumSegmentTree,
    VectorMinTree,
    VectorPrioritizedReplayBuffer,
    VectorSumTree,
    bench_per,
    beta_schedule,
)

# --------------------------------------------------------------------------------------
# Segment trees


@pytest.mark.parametrize("tree_class", [SumSegmentTree, MinSegmentTree, VectorSumTree])
@pytest.mark.parametrize("capacity", [0, -4, 3, 6, 100, 2.0, True, "8"])
def test_capacity_must_be_a_positive_power_of_two(tree_class, capacity):
    with pytest.raises(ValueError, match="power of two"):
        tree_class(capacity)


@pytest.mark.parametrize("capacity", [1, 2, 8, 64])
def test_sum_and_min_over_random_ranges_match_numpy(capacity):
    rng = np.random.default_rng(capacity)
    values = rng.uniform(0.0, 10.0, capacity)
    sums, mins = SumSegmentTree(capacity), MinSegmentTree(capacity)
    for i, v in enumerate(values):
        sums[i] = v
        mins[i] = v
    assert [sums[i] for i in range(capacity)] == values.tolist()
    assert [mins[i] for i in range(capacity)] == values.tolist()
    assert sums.sum() == pytest.approx(values.sum())
    assert mins.min() == values.min()
    for _ in range(200):
        start, end = sorted(rng.integers(0, capacity + 1, 2))
        assert sums.sum(start, end) == pytest.approx(values[start:end].sum(), abs=1e-9)
        assert mins.min(start, end) == (values[start:end].min() if end > start else math.inf)


def test_overwriting_leaves_keeps_every_range_correct():
    rng = np.random.default_rng(1)
    values = np.zeros(32)
    sums, mins = SumSegmentTree(32), MinSegmentTree(32)
    mins_values = np.full(32, np.inf)
    for _ in range(500):
        i, v = int(rng.integers(32)), float(rng.uniform(0, 5))
        sums[i], values[i] = v, v
        mins[i], mins_values[i] = v, v
        start, end = sorted(rng.integers(0, 33, 2))
        assert sums.sum(start, end) == pytest.approx(values[start:end].sum(), abs=1e-9)
        assert mins.min(start, end) == (mins_values[start:end].min() if end > start else math.inf)


def test_sum_is_half_open_so_the_newest_leaf_counts():
    tree = SumSegmentTree(8)
    for i in range(5):  # leaves 0..4 filled, 4 is the newest
        tree[i] = 1.0
    tree[4] = 100.0
    assert tree.sum(0, 5) == 104.0  # sum(0, n) includes leaf n - 1
    assert tree.sum(0, 4) == 4.0  # the old bug: sum(0, len - 1) missed the newest leaf
    assert tree.sum(4, 5) == 100.0
    assert tree.sum(2, 2) == 0.0
    assert tree.sum() == 104.0


def test_tree_index_and_range_errors():
    tree, mins = SumSegmentTree(4), MinSegmentTree(4)
    for bad in (4, -1, 10):
        with pytest.raises(IndexError, match="out of range"):
            tree[bad] = 1.0
        with pytest.raises(IndexError, match="out of range"):
            tree[bad]
        with pytest.raises(IndexError, match="out of range"):
            mins[bad] = 1.0
    with pytest.raises(ValueError, match="0 <= start <= end <= 4"):
        tree.sum(0, 5)
    with pytest.raises(ValueError, match="0 <= start <= end <= 4"):
        mins.min(3, 2)
    with pytest.raises(ValueError, match=">= 0"):
        tree[0] = -1.0
    with pytest.raises(ValueError, match=">= 0"):
        tree[0] = float("nan")


def _reference_retrieve(values: np.ndarray, prefix_sums: np.ndarray) -> np.ndarray:
    """Smallest i with cumsum[i] > prefix_sum."""
    return np.searchsorted(np.cumsum(values), prefix_sums, side="right")


def test_retrieve_matches_cumsum_searchsorted_on_random_queries():
    rng = np.random.default_rng(2)
    values = rng.uniform(0.0, 3.0, 128)
    values[rng.choice(128, 20, replace=False)] = 0.0  # zero leaves must never be returned
    tree = SumSegmentTree(128)
    for i, v in enumerate(values):
        tree[i] = v
    queries = rng.uniform(0.0, tree.sum(), 2000)
    got = np.array([tree.retrieve(q) for q in queries])
    np.testing.assert_array_equal(got, _reference_retrieve(values, queries))
    assert np.all(values[got] > 0)


def test_retrieve_at_exact_boundaries_uses_exceeds():
    values = np.array([1.0, 0.0, 2.0, 3.0, 0.0, 1.0, 0.0, 0.0])  # integers: sums are exact
    tree = SumSegmentTree(8)
    for i, v in enumerate(values):
        tree[i] = v
    boundaries = np.array([0.0, 1.0, 2.5, 3.0, 6.0, 6.5])
    got = [tree.retrieve(q) for q in boundaries]
    assert got == [0, 2, 2, 3, 5, 5]
    np.testing.assert_array_equal(got, _reference_retrieve(values, boundaries))
    vector = VectorSumTree(8)
    vector.update(np.arange(8), values)
    np.testing.assert_array_equal(vector.retrieve(boundaries), got)
    assert tree.retrieve(7.0) == 5  # prefix_sum == total: the last positive leaf
    assert vector.retrieve(7.0) == 5
    with pytest.raises(ValueError, match=r"\[0, total\]"):
        tree.retrieve(7.5)
    with pytest.raises(ValueError, match=r"\[0, total\]"):
        tree.retrieve(-0.1)
    with pytest.raises(ValueError, match="empty"):
        SumSegmentTree(4).retrieve(0.0)


def test_vector_tree_agrees_with_plain_tree_on_random_updates_with_duplicates():
    rng = np.random.default_rng(3)
    capacity = 64
    plain, vector = SumSegmentTree(capacity), VectorSumTree(capacity)
    for _ in range(100):
        indices = rng.integers(0, capacity, 16)
        indices[:4] = indices[4]  # force duplicates: the last write must win
        values = rng.uniform(0.0, 5.0, 16)
        vector.update(indices, values)
        for i, v in zip(indices.tolist(), values.tolist(), strict=True):
            plain[i] = v
        np.testing.assert_array_equal(vector.tree[1:], plain.tree[1:])  # same leaves and same inner sums
    assert vector.total() == plain.sum()
    queries = rng.uniform(0.0, vector.total(), 500)
    queries[-1] = vector.total()
    np.testing.assert_array_equal(vector.retrieve(queries), [plain.retrieve(q) for q in queries])
    grid = vector.retrieve(queries[:6].reshape(2, 3))
    assert grid.shape == (2, 3) and grid.dtype == np.int64


def test_vector_tree_duplicate_index_keeps_last_value_and_recomputes_parents():
    tree = VectorSumTree(4)
    tree.update([0, 1, 2, 3], [1.0, 1.0, 1.0, 1.0])
    tree.update([2, 2, 2], [5.0, 7.0, 3.0])  # adding deltas would give 1 + 4 + 6 + 2
    assert tree.tree[4 + 2] == 3.0
    assert tree.total() == 6.0
    tree.update([1], 0.5)  # a scalar value
    assert tree.total() == 5.5
    with pytest.raises(IndexError, match="out of range"):
        tree.update([4], [1.0])
    with pytest.raises(ValueError, match=">= 0"):
        tree.update([0], [-1.0])
    with pytest.raises(ValueError, match=r"\[0, total\]"):
        tree.retrieve([0.0, 6.0])


def test_vector_tree_of_capacity_one():
    tree = VectorSumTree(1)
    tree.update([0, 0], [2.0, 3.0])
    assert tree.total() == 3.0
    np.testing.assert_array_equal(tree.retrieve([0.0, 1.5, 3.0]), [0, 0, 0])


# --------------------------------------------------------------------------------------
# Replay buffers


def _fill(buffer, n: int, start: int = 0) -> None:
    for t in range(start, start + n):
        buffer.store([t, -t], t % 3, float(t), [t + 1, -t - 1], t % 5 == 4)


def test_uniform_buffer_stores_samples_and_wraps():
    buffer = ReplayBuffer(obs_dim=2, size=5, batch_size=3)
    _fill(buffer, 4)
    assert len(buffer) == 4
    batch = buffer.sample_batch(rng=0)
    assert batch["obs"].shape == (3, 2) and batch["obs"].dtype == np.float32
    assert batch["next_obs"].shape == (3, 2) and batch["next_obs"].dtype == np.float32
    assert batch["acts"].shape == (3,) and batch["acts"].dtype == np.int64
    assert batch["rews"].dtype == np.float32 and batch["done"].dtype == np.float32
    np.testing.assert_array_equal(batch["next_obs"][:, 0], batch["obs"][:, 0] + 1)  # rows stay together
    np.testing.assert_array_equal(batch["rews"], batch["obs"][:, 0])
    assert len(set(batch["rews"].tolist())) == 3  # distinct transitions
    _fill(buffer, 3, start=4)  # 7 stored into 5 slots: 0 and 1 overwritten by 5 and 6
    assert len(buffer) == 5
    assert buffer.rews_buf.tolist() == [5.0, 6.0, 2.0, 3.0, 4.0]
    assert buffer.done_buf.tolist() == [0.0, 0.0, 0.0, 0.0, 1.0]
    np.testing.assert_array_equal(buffer.sample_batch(rng=1)["rews"], buffer.sample_batch(rng=1)["rews"])


def test_uniform_buffer_refuses_small_batches_and_bad_shapes():
    buffer = ReplayBuffer(obs_dim=2, size=8, batch_size=4)
    _fill(buffer, 3)
    with pytest.raises(ValueError, match="holds only 3 transitions"):
        buffer.sample_batch(rng=0)
    with pytest.raises(ValueError, match="2 features"):
        buffer.store([1.0, 2.0, 3.0], 0, 0.0, [1.0, 2.0], False)
    with pytest.raises(ValueError, match="must not exceed size"):
        ReplayBuffer(obs_dim=2, size=4, batch_size=8)


def test_new_transitions_get_the_max_priority():
    buffer = PrioritizedReplayBuffer(obs_dim=2, size=8, batch_size=2, alpha=0.5)
    _fill(buffer, 3)
    assert [buffer.sum_tree[i] for i in range(3)] == [1.0, 1.0, 1.0]
    buffer.update_priorities([1], [9.0])
    buffer.update_priorities([0], [0.25])  # lower priorities never lower the max
    assert buffer.max_priority == 9.0
    assert buffer.sum_tree[0] == pytest.approx(0.5) and buffer.min_tree[0] == pytest.approx(0.5)
    _fill(buffer, 1, start=3)
    assert buffer.sum_tree[3] == pytest.approx(3.0)  # 9 ** 0.5
    assert buffer.min_tree[3] == pytest.approx(3.0)


def test_sampling_frequencies_follow_priorities_to_the_alpha():
    alpha = 0.6
    buffer = PrioritizedReplayBuffer(obs_dim=2, size=6, batch_size=4, alpha=alpha)  # trees rounded up to 8
    _fill(buffer, 6)
    priorities = np.array([0.1, 1.0, 2.0, 4.0, 0.5, 8.0])
    buffer.update_priorities(np.arange(6), priorities)
    rng = np.random.default_rng(4)
    counts = np.zeros(8)
    for _ in range(5000):
        batch = buffer.sample_batch(beta=0.4, rng=rng)
        np.add.at(counts, batch["indices"], 1)
        np.testing.assert_array_equal(batch["rews"], batch["indices"].astype(np.float32))
    expected = priorities**alpha / np.sum(priorities**alpha)
    assert counts[6:].sum() == 0  # padding leaves are never drawn
    np.testing.assert_allclose(counts[:6] / counts.sum(), expected, atol=0.01)


def test_uniform_sampling_when_alpha_is_zero():
    buffer = PrioritizedReplayBuffer(obs_dim=2, size=4, batch_size=4, alpha=0.0)
    _fill(buffer, 4)
    buffer.update_priorities([0, 1, 2, 3], [0.01, 1.0, 10.0, 100.0])
    batch = buffer.sample_batch(beta=1.0, rng=5)
    assert sorted(batch["indices"].tolist()) == [0, 1, 2, 3]  # one per equal segment
    np.testing.assert_array_equal(batch["weights"], np.ones(4, dtype=np.float32))


def test_weights_match_the_formula_and_reach_one_for_the_min_priority():
    alpha, beta = 0.7, 0.5
    buffer = PrioritizedReplayBuffer(obs_dim=2, size=16, batch_size=8, alpha=alpha)
    _fill(buffer, 20)  # wrapped: all 16 slots hold transitions
    rng = np.random.default_rng(6)
    priorities = rng.uniform(0.05, 3.0, 16)
    priorities[15] = 0.01  # the min priority on the last slot: a range that misses it gives weights > 1
    buffer.update_priorities(np.arange(16), priorities)
    scaled = priorities**alpha
    p = scaled / scaled.sum()
    max_weight = (16 * p.min()) ** -beta
    seen_min = False
    for _ in range(300):
        batch = buffer.sample_batch(beta, rng=rng)
        weights, indices = batch["weights"], batch["indices"]
        assert weights.dtype == np.float32 and indices.dtype == np.int64 and weights.shape == indices.shape == (8,)
        np.testing.assert_allclose(weights, (16 * p[indices]) ** -beta / max_weight, rtol=1e-6)
        assert np.all((weights > 0) & (weights <= 1.0))
        if np.argmin(priorities) in indices:
            seen_min = True
            assert weights.max() == pytest.approx(1.0)
    assert seen_min


@pytest.mark.parametrize("Buffer", [PrioritizedReplayBuffer, VectorPrioritizedReplayBuffer])
def test_update_priorities_errors_and_sampling_refused_before_batch_size(Buffer):
    """The plain buffer and the vectorised one refuse the same bad input with the same messages."""
    buffer = Buffer(obs_dim=2, size=8, batch_size=4)
    _fill(buffer, 3)
    with pytest.raises(ValueError, match="holds only 3 transitions"):
        buffer.sample_batch(beta=0.4, rng=0)
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="finite and > 0"):
            buffer.update_priorities([0], [bad])
    for bad in (3, 7, 8, -1):  # 3 and 7 fit the buffer's size but hold no transition yet
        with pytest.raises(IndexError, match="0 to 2"):
            buffer.update_priorities([bad], [1.0])
    with pytest.raises(IndexError, match="0 to 2"):
        buffer.update_priorities([0, 5], [2.0, 2.0])
    assert buffer.sum_tree[0] == 1.0 and buffer.max_priority == 1.0  # nothing written by a refused call
    with pytest.raises(ValueError, match="same length"):
        buffer.update_priorities([0, 1], [1.0])
    with pytest.raises(ValueError, match="alpha"):
        Buffer(obs_dim=2, size=8, batch_size=4, alpha=-0.1)
    _fill(buffer, 1, start=3)
    buffer.sample_batch(beta=0.4, rng=0)
    with pytest.raises(ValueError, match="beta"):
        buffer.sample_batch(beta=-1.0, rng=0)


# --------------------------------------------------------------------------------------
# Beta schedule


def test_beta_schedule_is_linear_and_clamped():
    assert beta_schedule(0, 1000) == pytest.approx(0.4)
    assert beta_schedule(500, 1000) == pytest.approx(0.7)
    assert beta_schedule(250, 1000, beta0=0.2) == pytest.approx(0.4)
    assert beta_schedule(1000, 1000) == 1.0
    assert beta_schedule(5000, 1000) == 1.0
    betas = np.array([beta_schedule(t, 1000) for t in range(1001)])
    np.testing.assert_allclose(np.diff(betas), 0.6 / 1000)
    for bad in ((-1, 10), (0, 0)):
        with pytest.raises(ValueError):
            beta_schedule(*bad)
    with pytest.raises(ValueError, match="beta0"):
        beta_schedule(0, 10, beta0=1.5)


def test_compounding_beta_update_reaches_one_almost_at_once():
    total, beta = 100_000, 0.4
    for step in range(1, 1001):  # the pitfall: 1% of the run
        beta = beta + (step / total) * (1.0 - beta)
    assert beta > 0.99
    assert beta_schedule(1000, total) == pytest.approx(0.406)


# --------------------------------------------------------------------------------------
# Benchmark


def test_bench_per_reports_positive_figures_on_tiny_settings():
    figures = bench_per(capacities=(16, 64), batch=8, repeats=3, rounds=1)
    assert figures["benchmark"] == "per" and figures["capacities"] == [16, 64]
    for key in (
        "tree_vector_sample_us",
        "tree_plain_sample_cpu_us",
        "buffer_vector_update_us",
        "tree_sample_speedup",
        "buffer_update_speedup",
    ):
        assert len(figures[key]) == 2
        assert all(value > 0 for value in figures[key])
    assert figures["cpprb"] == "absent"  # not installed here; timed when it is


# --------------------------------------------------------------------------------------
# Vectorised min tree and prioritized buffer


def test_vector_min_tree_matches_plain_min_tree():
    rng = np.random.default_rng(8)
    plain, vector = MinSegmentTree(256), VectorMinTree(256)
    assert vector.min() == math.inf
    for _ in range(50):
        indices, values = rng.integers(0, 256, 64), rng.uniform(0.0, 5.0, 64)
        vector.update(indices, values)
        for i, v in zip(indices.tolist(), values.tolist(), strict=True):
            plain[i] = v
        np.testing.assert_array_equal(vector.tree[1:], plain.tree[1:])
    assert vector.min() == plain.min()
    with pytest.raises(ValueError, match="NaN"):
        vector.update([0], [float("nan")])


@pytest.mark.parametrize("capacity", [1024, 1 << 13, 1 << 15])
def test_vector_retrieve_with_the_search_level_matches_the_plain_descent(capacity):
    """Deep trees use a searchsorted on level 10, then descend; trailing empty leaves stay unreachable."""
    rng = np.random.default_rng(capacity)
    values = rng.uniform(0.0, 2.0, capacity)
    values[capacity - capacity // 3 :] = 0.0  # a partly filled buffer: zeros at the end
    values[rng.choice(capacity, capacity // 10, replace=False)] = 0.0
    plain, vector = SumSegmentTree(capacity), VectorSumTree(capacity)
    vector.update(np.arange(capacity), values)
    plain.tree = vector.tree.tolist()
    queries = np.concatenate([rng.uniform(0.0, vector.total(), 3000), [0.0, vector.total()]])
    got = vector.retrieve(queries)
    expected = np.array([plain.retrieve(float(q)) for q in queries])
    assert np.mean(got == expected) > 0.999  # boundaries may differ by a rounding error
    assert np.all(values[got] > 0)
    assert got[-1] == expected[-1] == np.flatnonzero(values)[-1]


def test_vector_buffer_samples_like_the_plain_buffer():
    alpha, beta = 0.6, 0.5
    plain = PrioritizedReplayBuffer(obs_dim=2, size=12, batch_size=6, alpha=alpha)
    fast = VectorPrioritizedReplayBuffer(obs_dim=2, size=12, batch_size=6, alpha=alpha)
    _fill(plain, 15)
    _fill(fast, 15)
    priorities = np.random.default_rng(9).uniform(0.1, 4.0, 12)
    for buffer in (plain, fast):
        buffer.update_priorities(np.arange(12), priorities)
        buffer.update_priorities([3, 3], [0.5, 7.0])  # a repeated index keeps its last priority
    np.testing.assert_allclose(fast.sum_tree.tree[1:], plain.sum_tree.tree[1:])
    np.testing.assert_allclose(fast.min_tree.tree[1:], plain.min_tree.tree[1:])
    assert fast.max_priority == plain.max_priority == 7.0
    for seed in range(20):
        a, b = plain.sample_batch(beta, rng=seed), fast.sample_batch(beta, rng=seed)
        np.testing.assert_array_equal(a["indices"], b["indices"])
        np.testing.assert_allclose(a["weights"], b["weights"], rtol=1e-5)
        np.testing.assert_array_equal(a["obs"], b["obs"])
    fast.store([0, 0], 0, 0.0, [0, 0], False)
    assert fast.sum_tree[fast.ptr - 1] == pytest.approx(7.0**alpha)


# --------------------------------------------------------------------------------------
# The exercises' checks


class _HalfOpenBug(SumSegmentTree):
    """sum(start, end) including leaf end (an inclusive range)."""

    def sum(self, start=0, end=None):
        end = self.capacity if end is None else min(end + 1, self.capacity)
        return super().sum(start, end)


class _NoZeroGuard(SumSegmentTree):
    def retrieve(self, prefix_sum):
        node = 1
        while node < self.capacity:
            if prefix_sum < self.tree[2 * node]:
                node = 2 * node
            else:
                prefix_sum -= self.tree[2 * node]
                node = 2 * node + 1
        return node - self.capacity


class _LinearSum(SumSegmentTree):
    def sum(self, start=0, end=None):
        end = self.capacity if end is None else end
        return sum(self.tree[self.capacity + i] for i in range(start, end))


def test_tree_check_accepts_the_course_trees_and_flags_mistakes(capsys):
    assert check_segment_trees(SumSegmentTree, MinSegmentTree, strict=True)
    with pytest.raises(AssertionError, match="half-open"):
        check_segment_trees(_HalfOpenBug, MinSegmentTree, strict=True)
    with pytest.raises(AssertionError, match="never step into a subtree whose sum is 0"):
        check_segment_trees(_NoZeroGuard, MinSegmentTree, strict=True)
    with pytest.raises(AssertionError, match="too slow"):
        check_segment_trees(_LinearSum, MinSegmentTree, strict=True)
    assert check_segment_trees(_HalfOpenBug, MinSegmentTree) is False
    assert "❌" in capsys.readouterr().out


class _NewestLeftOut(PrioritizedReplayBuffer):
    """The reference's pitfall: the total is sum(0, len - 1)."""

    def sample_batch(self, beta, rng=None):
        rng = np.random.default_rng(rng)
        total = self.sum_tree.sum(0, len(self) - 1)
        segment = total / self.batch_size
        indices = np.array([self.sum_tree.retrieve(rng.uniform(k * segment, (k + 1) * segment)) for k in range(self.batch_size)])
        batch = self._batch(indices)
        batch["weights"] = np.ones(self.batch_size, dtype=np.float32)
        batch["indices"] = indices
        return batch


class _NotStratified(PrioritizedReplayBuffer):
    def sample_batch(self, beta, rng=None):
        rng = np.random.default_rng(rng)
        total = self.sum_tree.sum()
        indices = np.array([self.sum_tree.retrieve(rng.uniform(0, total)) for _ in range(self.batch_size)])
        batch = self._batch(indices)
        p = np.array([self.sum_tree[i] for i in indices]) / total
        n = len(self)
        batch["weights"] = ((n * p) ** -beta / (n * self.min_tree.min(0, n) / total) ** -beta).astype(np.float32)
        batch["indices"] = indices
        return batch


class _Asserts(PrioritizedReplayBuffer):
    def update_priorities(self, indices, priorities):
        for i, p in zip(indices, priorities, strict=True):
            assert p > 0
            assert 0 <= i < len(self)
        super().update_priorities(indices, priorities)


class _UnnormalisedWeights(PrioritizedReplayBuffer):
    def sample_batch(self, beta, rng=None):
        batch = super().sample_batch(beta, rng)
        p = np.array([self.sum_tree[i] for i in batch["indices"]]) / self.sum_tree.sum()
        batch["weights"] = ((len(self) * p) ** -beta).astype(np.float32)
        return batch


@pytest.mark.parametrize(
    "wrong, message",
    [
        (_NewestLeftOut, "includes the newest"),
        (_NotStratified, "stratify"),
        (_Asserts, "raised AssertionError; it should raise ValueError"),
        (_UnnormalisedWeights, "largest possible weight"),
    ],
)
def test_buffer_check_flags_the_pitfalls(wrong, message):
    with pytest.raises(AssertionError, match=message):
        check_prioritized_buffer(wrong, strict=True)


def test_buffer_check_accepts_both_course_buffers():
    assert check_prioritized_buffer(PrioritizedReplayBuffer, strict=True)
    assert check_prioritized_buffer(VectorPrioritizedReplayBuffer, strict=True)
