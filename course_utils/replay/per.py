"""Replay buffers for DQN (Schaul et al. 2016, proportional variant): a uniform buffer, a
prioritized one on the vectorised trees of ``trees`` (for training; built from a DQN config),
and the beta schedule. The plain prioritized buffer on one-leaf-at-a-time trees is the
tutorial's Exercise 3: its reference is harvested into ``solutions`` (instructor side).

Shapes used throughout: ``N`` transitions stored, ``B`` transitions per sampled batch,
observations of ``obs_dim`` float32 features. Priorities are positive floats (typically
``|TD error| + eps``, checked by ``trees.validate_priorities``); the trees hold them raised to
the power ``alpha``.

The sampling probability of transition ``i`` is ``P(i) = p_i**alpha / sum_k p_k**alpha`` and
its importance-sampling weight is ``w_i = (N * P(i))**-beta``, divided by the largest weight
any stored transition could get, so weights lie in (0, 1].
"""

from __future__ import annotations

import math

import numpy as np

from course_utils.replay.trees import (
    VectorMinTree,
    VectorSumTree,
    next_power_of_two,
    short_repr,
    validate_priorities,
)


def _as_rng(rng) -> np.random.Generator:
    """``None`` (fresh entropy), an int seed, or a ``np.random.Generator`` -> a Generator."""
    if rng is None:
        return np.random.default_rng()
    if isinstance(rng, int | np.integer) and not isinstance(rng, bool):
        return np.random.default_rng(int(rng))
    if isinstance(rng, np.random.Generator):
        return rng
    raise ValueError(f"rng must be None, an int seed or a numpy.random.Generator, got {type(rng).__name__}.")


# --------------------------------------------------------------------------------------
# Replay buffers


class ReplayBuffer:
    """A uniform replay buffer of ``size`` transitions in preallocated numpy arrays.

    ``store`` writes at the pointer and moves it on, overwriting the oldest transition when
    full. ``sample_batch`` draws ``batch_size`` distinct stored transitions uniformly and
    returns a dict: ``obs`` and ``next_obs`` float32 (B, obs_dim), ``acts`` int64 (B,),
    ``rews`` float32 (B,), ``done`` float32 (B,) (1.0 where the episode ended).
    """

    def __init__(self, obs_dim: int, size: int, batch_size: int = 32):
        for name, value in (("obs_dim", obs_dim), ("size", size), ("batch_size", batch_size)):
            if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}.")
        if batch_size > size:
            raise ValueError(f"batch_size ({batch_size}) must not exceed size ({size}): a batch holds distinct transitions.")
        self.obs_dim, self.max_size, self.batch_size = int(obs_dim), int(size), int(batch_size)
        self.obs_buf = np.zeros((size, obs_dim), dtype=np.float32)
        self.next_obs_buf = np.zeros((size, obs_dim), dtype=np.float32)
        self.acts_buf = np.zeros(size, dtype=np.int64)
        self.rews_buf = np.zeros(size, dtype=np.float32)
        self.done_buf = np.zeros(size, dtype=np.float32)
        self.ptr = 0
        self.size = 0

    def __len__(self) -> int:
        return self.size

    def store(self, obs, act: int, rew: float, next_obs, done: bool) -> int:
        """Store one transition; returns the slot index it was written to."""
        obs = np.asarray(obs, dtype=np.float32).reshape(-1)
        next_obs = np.asarray(next_obs, dtype=np.float32).reshape(-1)
        if obs.shape != (self.obs_dim,) or next_obs.shape != (self.obs_dim,):
            raise ValueError(f"obs and next_obs must have {self.obs_dim} features, got shapes {obs.shape} and {next_obs.shape}.")
        index = self.ptr
        self.obs_buf[index] = obs
        self.next_obs_buf[index] = next_obs
        self.acts_buf[index] = act
        self.rews_buf[index] = rew
        self.done_buf[index] = float(done)
        self.ptr = (self.ptr + 1) % self.max_size
        self.size = min(self.size + 1, self.max_size)
        return index

    def _check_can_sample(self) -> None:
        if len(self) < self.batch_size:
            raise ValueError(
                f"cannot sample a batch of {self.batch_size}: the buffer holds only {len(self)} transitions. "
                f"Store at least batch_size transitions first."
            )

    def _batch(self, indices: np.ndarray) -> dict[str, np.ndarray]:
        return {
            "obs": self.obs_buf[indices],
            "next_obs": self.next_obs_buf[indices],
            "acts": self.acts_buf[indices],
            "rews": self.rews_buf[indices],
            "done": self.done_buf[indices],
        }

    def sample_batch(self, rng=None) -> dict[str, np.ndarray]:
        """``batch_size`` distinct transitions drawn uniformly; ``rng``: None, a seed or a Generator."""
        self._check_can_sample()
        indices = _as_rng(rng).choice(len(self), size=self.batch_size, replace=False)
        return self._batch(indices)


def beta_schedule(step: int, total_steps: int, beta0: float = 0.4) -> float:
    """Importance-sampling exponent annealed linearly from ``beta0`` at step 0 to 1.0 at
    ``total_steps``, and 1.0 after: ``min(1, beta0 + (1 - beta0) * step / total_steps)``.

    A known pitfall: updating in place every step with ``beta = beta + f * (1 - beta)``,
    ``f = step / total_steps``, compounds. The gap ``1 - beta`` is multiplied by ``1 - f``
    at every step, so it shrinks like ``exp(-step**2 / (2 * total_steps))``: beta is within
    0.01 of 1 after about ``3 * sqrt(total_steps)`` steps (1% of a 100 000-step run)
    instead of at the end.
    """
    if isinstance(total_steps, bool) or not isinstance(total_steps, int | np.integer) or total_steps < 1:
        raise ValueError(f"total_steps must be a positive integer, got {total_steps!r}.")
    if step < 0:
        raise ValueError(f"step must be >= 0, got {step!r}.")
    if not 0.0 <= beta0 <= 1.0:
        raise ValueError(f"beta0 must lie in [0, 1], got {beta0!r}.")
    return min(1.0, beta0 + (1.0 - beta0) * step / total_steps)


class VectorPrioritizedReplayBuffer(ReplayBuffer):
    """Proportional prioritized replay on the vectorised trees, built from a DQN config:
    ``VectorPrioritizedReplayBuffer(obs_dim, config)`` with ``config`` a ``dqn.DQNConfig`` (or
    anything with ``memory_size``, ``batch_size`` and ``alpha``).

    Transition ``i`` is drawn with probability ``P(i) = p_i**alpha / sum_k p_k**alpha``;
    ``alpha`` >= 0 sets how much priorities matter (0: uniform). A new transition gets the
    largest priority seen so far (1.0 at the start), so it is replayed at least once soon.
    ``memory_size`` need not be a power of two: the trees are rounded up to the next one, and
    their extra leaves stay at 0 (sum tree) and inf (min tree), so they are never drawn.
    ``sample_batch`` does the whole batch's tree descent in one go and ``update_priorities``
    updates both trees level by level.
    """

    def __init__(self, obs_dim: int, config):
        size, batch_size, alpha = config.memory_size, config.batch_size, config.alpha
        super().__init__(obs_dim, size, batch_size)
        if not (math.isfinite(alpha) and alpha >= 0.0):
            raise ValueError(f"alpha must be a finite number >= 0 (0 gives uniform sampling), got {alpha!r}.")
        self.alpha = float(alpha)
        self.max_priority = 1.0
        tree_capacity = next_power_of_two(size)
        self.sum_tree = VectorSumTree(tree_capacity)
        self.min_tree = VectorMinTree(tree_capacity)
        self._strata = np.arange(self.batch_size, dtype=np.float64)
        self._one_node = np.zeros(1, dtype=np.int64)
        self._one_value = np.zeros(1, dtype=np.float64)

    def store(self, obs, act: int, rew: float, next_obs, done: bool) -> int:
        """Store one transition with the current max priority; returns its slot index."""
        index = super().store(obs, act, rew, next_obs, done)
        self._one_value[0] = self.max_priority**self.alpha
        for tree in (self.sum_tree, self.min_tree):
            self._one_node[0] = index + tree.capacity
            tree._write(self._one_node, self._one_value)
        return index

    def sample_batch(self, beta: float, rng=None) -> dict[str, np.ndarray]:
        """A batch drawn in proportion to priority, with importance-sampling weights.

        Stratified: the total priority is cut into ``batch_size`` equal segments and one
        prefix sum is drawn uniformly in each (so a batch covers the whole range; a
        transition can still appear twice if its priority spans two segments). Returns the
        arrays of ``ReplayBuffer.sample_batch`` plus ``weights`` float32 (B,) =
        ``(N * P(i))**-beta / max_weight`` with ``max_weight = (N * p_min / total)**-beta``,
        in (0, 1], and ``indices`` int64 (B,) for ``update_priorities``. ``beta`` >= 0
        (see ``beta_schedule``).
        """
        if not (math.isfinite(beta) and beta >= 0.0):
            raise ValueError(f"beta must be a finite number >= 0 (usually annealed from 0.4 to 1), got {beta!r}.")
        self._check_can_sample()
        rng = _as_rng(rng)
        total = self.sum_tree.total()
        draws = self._strata + rng.random(self.batch_size)
        draws *= total / self.batch_size
        np.minimum(draws, total, out=draws)
        indices = self.sum_tree.retrieve(draws)
        # w_i / max_w = (p_i / p_min) ** -beta: the totals and N cancel out
        weights = (self.sum_tree.tree[indices + self.sum_tree.capacity] / self.min_tree.min()) ** -beta
        batch = self._batch(indices)
        batch["weights"] = weights.astype(np.float32)
        batch["indices"] = indices
        return batch

    def update_priorities(self, indices, priorities) -> None:
        """Set the priorities (e.g. ``|TD error| + eps``, before ``alpha``) of stored transitions.

        ``indices`` int (K,) must be in [0, len); ``priorities`` (K,) must be finite and > 0.
        Everything is checked before anything is written. A repeated index keeps its last
        priority. The max priority (given to new transitions) only ever grows.
        """
        indices, priorities = self._checked_update(indices, priorities)
        if indices.size == 0:
            return
        scaled = priorities**self.alpha
        self.sum_tree._write(indices + self.sum_tree.capacity, scaled)
        self.min_tree._write(indices + self.min_tree.capacity, scaled)
        self.max_priority = max(self.max_priority, float(priorities.max()))

    def _checked_update(self, indices, priorities) -> tuple[np.ndarray, np.ndarray]:
        """``update_priorities``'s arguments as flat arrays (indices (K,) int, priorities (K,)
        float64), once every one is checked: priorities by ``validate_priorities`` (one per
        index, finite and > 0), indices integers referring to stored transitions."""
        indices = np.asarray(indices).reshape(-1)
        priorities = validate_priorities(priorities, length=indices.size)
        if indices.size == 0:
            return indices, priorities
        if not np.issubdtype(indices.dtype, np.integer):
            raise IndexError(f"indices must be integers, got dtype {indices.dtype}.")
        if indices.min() < 0 or indices.max() >= len(self):
            out = indices[(indices < 0) | (indices >= len(self))]
            raise IndexError(f"indices must refer to stored transitions, 0 to {len(self) - 1}, got {short_repr(out)}.")
        return indices, priorities
