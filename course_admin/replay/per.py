"""The course's own uniform replay buffer for DQN (Schaul et al. 2016 build the proportional variant
on it, ``vector_per``): a ring of preallocated numpy arrays, what the course's trainer
(``train``) and benchmark (``bench``) use.

It is a ring buffer, the answer to tutorial 4's Exercise 1 and tutorial 2's replay memory, so it
is instructor code: the student's package gives the DQN ``course_utils.replay.buffer.ReplayBuffer``,
which keeps its transitions in the student's own memory.

Shapes used throughout: ``N`` transitions stored, ``B`` transitions per sampled batch,
observations of ``obs_dim`` float32 features.
"""

from __future__ import annotations

import numpy as np

from course_utils.runtime import generator, positive_int

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
            positive_int(name, value)
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
        indices = generator(rng).choice(len(self), size=self.batch_size, replace=False)
        return self._batch(indices)
