import re
from types import SimpleNamespace

import numpy as np
import pytest
from verdicts import not_yet

from course_admin.replay.per import ReplayBuffer
from course_admin.replay.solutions import PrioritizedReplayBuffer  # the exercise's reference (instructor side)
from course_admin.replay.trees import validate_priorities
from course_admin.replay.vector_per import VectorPrioritizedReplayBuffer
from course_utils.claims import claim
from course_utils.replay.buffer import beta_schedule
from course_utils.replay.checks_buffer import check_prioritized_buffer
from course_utils.replay.dqn import DQNConfig


def _prioritized(obs_dim: int, size: int, batch_size: int = 32, alpha: float = 0.6) -> VectorPrioritizedReplayBuffer:
    """The course's prioritized buffer, built from a config as DQN builds it."""
    return VectorPrioritizedReplayBuffer(obs_dim, SimpleNamespace(memory_size=size, batch_size=batch_size, alpha=alpha))

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
    buffer = _prioritized(obs_dim=2, size=8, batch_size=2, alpha=0.5)
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
    buffer = _prioritized(obs_dim=2, size=6, batch_size=4, alpha=alpha)  # trees rounded up to 8
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
    buffer = _prioritized(obs_dim=2, size=4, batch_size=4, alpha=0.0)
    _fill(buffer, 4)
    buffer.update_priorities([0, 1, 2, 3], [0.01, 1.0, 10.0, 100.0])
    batch = buffer.sample_batch(beta=1.0, rng=5)
    assert sorted(batch["indices"].tolist()) == [0, 1, 2, 3]  # one per equal segment
    np.testing.assert_array_equal(batch["weights"], np.ones(4, dtype=np.float32))


def test_weights_match_the_formula_and_reach_one_for_the_min_priority():
    alpha, beta = 0.7, 0.5
    buffer = _prioritized(obs_dim=2, size=16, batch_size=8, alpha=alpha)
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


def test_update_priorities_errors_and_sampling_refused_before_batch_size():
    """The vectorised buffer checks everything before writing, with ``validate_priorities``'s messages."""
    buffer = _prioritized(obs_dim=2, size=8, batch_size=4)
    _fill(buffer, 3)
    with pytest.raises(ValueError, match="holds only 3 transitions"):
        buffer.sample_batch(beta=0.4, rng=0)
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="finite and > 0") as error:
            buffer.update_priorities([0], [bad])
        assert str(error.value) == _message(validate_priorities, [bad])  # the one check of priorities
    with pytest.raises(ValueError, match="finite and > 0"):
        buffer.update_priorities([0, 1, 2], np.array([[1.0], [-1.0], [1.0]]))  # any shape, flattened
    for bad in (3, 7, 8, -1):  # 3 and 7 fit the buffer's size but hold no transition yet
        with pytest.raises(IndexError, match="0 to 2"):
            buffer.update_priorities([bad], [1.0])
    with pytest.raises(IndexError, match="0 to 2"):
        buffer.update_priorities([0, 5], [2.0, 2.0])
    assert buffer.sum_tree[0] == 1.0 and buffer.max_priority == 1.0  # nothing written by a refused call
    with pytest.raises(ValueError, match="same length"):
        buffer.update_priorities([0, 1], [1.0])
    with pytest.raises(ValueError, match="same length"):
        buffer.update_priorities([0], [1.0, 2.0])
    assert buffer.sum_tree[0] == 1.0 and buffer.max_priority == 1.0
    buffer.update_priorities([], [])  # nothing to do
    with pytest.raises(ValueError, match="alpha"):
        _prioritized(obs_dim=2, size=8, batch_size=4, alpha=-0.1)
    _fill(buffer, 1, start=3)
    buffer.sample_batch(beta=0.4, rng=0)
    with pytest.raises(ValueError, match="beta"):
        buffer.sample_batch(beta=-1.0, rng=0)


def _message(function, *args) -> str:
    with pytest.raises(ValueError) as error:
        function(*args)
    return str(error.value)


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
    holds, figures = claim("replay.compounding_beta_early").check({"total_steps": 10_000, "beta0": 0.6})  # the notebook's
    assert holds and figures["first"] == 270, figures


# --------------------------------------------------------------------------------------
# The vectorised prioritized buffer


def test_vector_buffer_samples_like_the_reference_plain_buffer():
    alpha, beta = 0.6, 0.5
    plain = PrioritizedReplayBuffer(obs_dim=2, size=12, batch_size=6, alpha=alpha)
    fast = VectorPrioritizedReplayBuffer(2, DQNConfig(memory_size=12, batch_size=6, alpha=alpha))
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


WRONG_BUFFERS = [
    (_NewestLeftOut, "includes the newest"),
    (_NotStratified, "stratify"),
    (_Asserts, "raised AssertionError; it should raise ValueError"),
    (_UnnormalisedWeights, "largest possible weight"),
]


@pytest.mark.parametrize("wrong, message", WRONG_BUFFERS)
def test_buffer_check_flags_the_pitfalls(wrong, message):
    assert re.search(message, not_yet(check_prioritized_buffer, wrong))


def test_buffer_check_accepts_the_reference_and_the_vectorised_buffer_is_no_drop_in_answer(capsys):
    assert check_prioritized_buffer(PrioritizedReplayBuffer)
    with pytest.raises(TypeError):  # it is built from a DQN config, not (obs_dim, size, batch_size, alpha)
        VectorPrioritizedReplayBuffer(obs_dim=2, size=8, batch_size=4, alpha=0.5)
    assert check_prioritized_buffer(VectorPrioritizedReplayBuffer) is False
