"""The course's own proportional prioritized replay buffer (Schaul et al. 2016), on the vectorised
trees of ``trees``: what the course's trainer (``train``) trains with and the benchmark times.

It computes what the tutorial's Exercise 3 asks (a prioritized buffer), so it is instructor code,
never in the student's package.
"""

from __future__ import annotations

import math

import numpy as np

from course_admin.replay.per import ReplayBuffer
from course_admin.replay.trees import (
    VectorMinTree,
    VectorSumTree,
    next_power_of_two,
    short_repr,
    validate_priorities,
)
from course_utils.runtime import generator


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
        rng = generator(rng)
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
