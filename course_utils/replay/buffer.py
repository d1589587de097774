"""The DQN's replay buffer, one transition at a time, on a circular memory (tutorial 4, Sections
1-2), and the beta schedule of prioritized replay.

``ReplayBuffer`` keeps its transitions in a memory of dict batches (``memory.CircularReplayMemory``'s
interface) that the caller gives it: in the notebook, the student's ``CircularMemory`` of Exercise 1.
It has no ring of its own: each transition is a batch of one added to that memory, whose pointer
says which slot it took. The tutorial's Exercise 3, the prioritized buffer, extends it.

Shapes: ``N`` transitions held, ``B`` per sampled batch, observations of ``obs_dim`` float32
features. A batch is a dict of numpy arrays: ``obs`` and ``next_obs`` float32 (B, obs_dim),
``acts`` int64 (B,), ``rews`` float32 (B,), ``done`` float32 (B,) (1.0 where the episode ended).
"""

from __future__ import annotations

import numpy as np
import torch

from course_utils.runtime import generator, positive_int


class ReplayBuffer:
    """A uniform replay buffer of ``size`` transitions, kept in ``memory(size, batch_size, warmup)``:
    a memory of dict batches of tensors with ``add``, ``pointer``, ``len`` and indexing by a tensor of
    slots (the student's ``CircularMemory``). ``store`` adds one transition and returns the slot it
    took; ``sample_batch`` draws ``batch_size`` distinct held transitions uniformly.
    """

    def __init__(self, obs_dim: int, size: int, batch_size: int = 32, memory=None):
        for name, value in (("obs_dim", obs_dim), ("size", size), ("batch_size", batch_size)):
            positive_int(name, value)
        if batch_size > size:
            raise ValueError(f"batch_size ({batch_size}) must not exceed size ({size}): a batch holds distinct transitions.")
        if memory is None:
            raise TypeError("ReplayBuffer keeps its transitions in a memory: pass memory=CircularMemory (your Exercise 1).")
        self.obs_dim, self.max_size, self.batch_size = int(obs_dim), int(size), int(batch_size)
        self.memory = memory(size, batch_size, batch_size)

    def __len__(self) -> int:
        return len(self.memory)

    def store(self, obs, act: int, rew: float, next_obs, done: bool) -> int:
        """Store one transition (a batch of one added to the memory); returns the slot it took."""
        obs = np.asarray(obs, dtype=np.float32).reshape(1, -1)
        next_obs = np.asarray(next_obs, dtype=np.float32).reshape(1, -1)
        if obs.shape != (1, self.obs_dim) or next_obs.shape != (1, self.obs_dim):
            raise ValueError(f"obs and next_obs must have {self.obs_dim} features, got shapes {obs.shape[1:]} and "
                             f"{next_obs.shape[1:]}.")
        slot = int(self.memory.pointer)
        self.memory.add({
            "state": torch.from_numpy(obs),
            "action": torch.tensor([int(act)], dtype=torch.int64),
            "reward": torch.tensor([float(rew)], dtype=torch.float32),
            "next_state": torch.from_numpy(next_obs),
            "done": torch.tensor([float(done)], dtype=torch.float32),
        })
        return slot

    def _check_can_sample(self) -> None:
        if len(self) < self.batch_size:
            raise ValueError(
                f"cannot sample a batch of {self.batch_size}: the buffer holds only {len(self)} transitions. "
                f"Store at least batch_size transitions first."
            )

    def _batch(self, indices) -> dict[str, np.ndarray]:
        """The held transitions in slots ``indices`` (int (B,)) as a batch of numpy arrays."""
        rows = self.memory[torch.as_tensor(np.asarray(indices, dtype=np.int64))]
        return {
            "obs": rows["state"].numpy(),
            "next_obs": rows["next_state"].numpy(),
            "acts": rows["action"].numpy(),
            "rews": rows["reward"].numpy(),
            "done": rows["done"].numpy(),
        }

    def sample_batch(self, rng=None) -> dict[str, np.ndarray]:
        """``batch_size`` distinct transitions drawn uniformly; ``rng``: None, a seed or a Generator."""
        self._check_can_sample()
        indices = generator(rng).choice(len(self), size=self.batch_size, replace=False)
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
    positive_int("total_steps", total_steps)
    if step < 0:
        raise ValueError(f"step must be >= 0, got {step!r}.")
    if not 0.0 <= beta0 <= 1.0:
        raise ValueError(f"beta0 must lie in [0, 1], got {beta0!r}.")
    return min(1.0, beta0 + (1.0 - beta0) * step / total_steps)
