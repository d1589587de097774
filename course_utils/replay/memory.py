"""A circular replay memory of dict batches of tensors (tutorial 4, section 1).

The memory has ``capacity`` slots. Each field of a transition (``state``, ``action``,
``reward``, ``next_state``, ``done``, ``step``, ``episode_id``, ``td_error``) is one tensor
of shape (capacity, ...) in ``memory.memory``, so the i-th transition is row i of every
field. Batches are added whole: a batch of n transitions goes into the n slots after the
newest one, ``pointer`` (the next slot to write) moves on by n and wraps to 0; when the
memory is full the oldest transitions are overwritten first, and a batch that runs past the
last slot is split between the end and the start.

``sample()`` refuses (``ReplayMemoryError``) until ``warmup`` transitions are held; it then
draws ``batch_size`` slots without replacement *across calls* (a shuffled pass over all
held slots, reshuffled when used up), so ``ceil(len / batch_size)`` calls visit every slot.
"""

from __future__ import annotations

import numpy as np
import torch

from course_utils.runtime import positive_int

FIELDS = ("state", "action", "reward", "next_state", "done", "step", "episode_id", "td_error")
"""The fields a batch may hold; ``td_error`` is optional (zeros when missing)."""


class ReplayMemoryError(Exception):
    """The memory cannot do what was asked yet (for example: sampling before the warm-up)."""


class CircularReplayMemory:
    """A fixed number of slots filled batch by batch; the oldest are overwritten first.

    ``capacity``: slots; ``batch_size``: transitions per ``sample()``; ``warmup``: transitions
    needed before ``sample()`` works (at most ``capacity``). ``seed`` fixes the sampling order.
    """

    def __init__(self, capacity: int = 200, batch_size: int = 16, warmup: int = 100, seed: int | None = None):
        for name, value in (("capacity", capacity), ("batch_size", batch_size), ("warmup", warmup)):
            positive_int(name, value)
        if warmup > capacity:
            raise ValueError(f"warmup ({warmup}) cannot exceed capacity ({capacity}): sampling would never start.")
        self.capacity, self.batch_size, self.warmup = capacity, batch_size, warmup
        self.memory: dict[str, torch.Tensor] | None = None  # allocated by the first batch
        self.pointer = 0  # the slot the next transition goes to
        self.size = 0  # slots holding a transition
        self._generator = torch.Generator().manual_seed(seed if seed is not None else torch.seed() % 2**63)
        self._order = torch.empty(0, dtype=torch.int64)  # slots still to visit in this pass

    def __len__(self) -> int:
        return self.size

    def __add__(self, batch: dict) -> CircularReplayMemory:
        """``memory + batch`` adds the batch in place and returns the memory itself."""
        self.add(batch)
        return self

    def prepare(self, batch: dict) -> tuple[dict[str, torch.Tensor], int]:
        """Check ``batch`` and allocate the memory's tensors at the first call.

        Returns ``(batch, n)``: the batch as a dict of tensors with a zero ``td_error`` added
        if it had none, cut to its newest ``capacity`` transitions if it was longer, and
        ``n``, its number of transitions (1 <= n <= capacity).
        """
        if not isinstance(batch, dict) or not batch:
            raise TypeError(f"a batch must be a non-empty dict of tensors, got {type(batch).__name__}.")
        unknown = set(batch) - set(FIELDS)
        if unknown:
            raise KeyError(f"unknown fields {sorted(unknown)}; a batch may hold {list(FIELDS)}.")
        batch = {key: torch.as_tensor(value) for key, value in batch.items()}
        lengths = {key: (value.shape[0] if value.ndim else None) for key, value in batch.items()}
        n = next(iter(lengths.values()))
        if n is None or n < 1 or any(length != n for length in lengths.values()):
            raise ValueError(f"every field of a batch must have the same first dimension n >= 1, got {lengths}.")
        if "td_error" not in batch:
            batch["td_error"] = torch.zeros(n)
        if self.memory is None:
            self.memory = {key: torch.zeros((self.capacity, *value.shape[1:]), dtype=value.dtype) for key, value in batch.items()}
        if set(batch) != set(self.memory):
            raise KeyError(f"this memory holds fields {sorted(self.memory)}, the batch has {sorted(batch)}.")
        for key, value in batch.items():
            if value.shape[1:] != self.memory[key].shape[1:]:
                raise ValueError(
                    f"field {key!r}: each entry has shape {tuple(value.shape[1:])}, the memory holds "
                    f"{tuple(self.memory[key].shape[1:])}."
                )
        if n > self.capacity:  # only the newest capacity transitions can stay
            batch = {key: value[n - self.capacity :] for key, value in batch.items()}
            n = self.capacity
        return batch, n

    def add(self, batch: dict) -> CircularReplayMemory:
        """Write ``batch`` (dict of tensors, first dimension n) into the slots after the newest
        transition, splitting it between the end and the start if it does not fit; returns self.

        This is Exercise 1: write ``add`` in your ``CircularMemory`` subclass (``prepare`` does
        the checks and the allocation for you)."""
        raise NotImplementedError(
            "CircularReplayMemory.add is Exercise 1 of tutorial 4: write add in your CircularMemory subclass "
            "(call self.prepare(batch) first)."
        )

    def __getitem__(self, index) -> dict[str, torch.Tensor]:
        """The transitions in slots ``index`` (a slice, an int or a tensor of slots) as a dict."""
        if self.memory is None:
            raise ReplayMemoryError("the memory is empty: add a batch first.")
        if isinstance(index, int):
            index = slice(index, index + 1) if index != -1 else slice(-1, None)
        return {key: value[: self.size][index] for key, value in self.memory.items()}

    def sample(self) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
        """``batch_size`` held transitions and their slots: ``(batch dict, indices (B,) int64)``.

        Raises ``ReplayMemoryError`` while fewer than ``warmup`` transitions are held.
        """
        if self.size < self.warmup:
            raise ReplayMemoryError(
                f"the memory holds {self.size} transitions; sampling starts after a warm-up of {self.warmup}. "
                "Add more batches first."
            )
        parts, needed = [], min(self.batch_size, self.size)
        while needed > 0:
            if self._order.numel() == 0:  # start a new shuffled pass over the held slots
                self._order = torch.randperm(self.size, generator=self._generator)
            parts.append(self._order[:needed])
            self._order = self._order[needed:]
            needed -= parts[-1].numel()
        indices = torch.cat(parts)
        return {key: value[indices] for key, value in self.memory.items()}, indices

    def update_td(self, values, indices) -> None:
        """Write TD errors ``values`` (one per index) to exactly the slots ``indices``."""
        if self.memory is None:
            raise ReplayMemoryError("the memory is empty: add a batch first.")
        indices = torch.as_tensor(indices, dtype=torch.int64).reshape(-1)
        td = self.memory["td_error"]
        values = torch.as_tensor(values, dtype=td.dtype).reshape((indices.numel(), *td.shape[1:]))
        if indices.numel() and (indices.min() < 0 or indices.max() >= self.size):
            raise IndexError(f"indices must refer to held slots, 0 to {self.size - 1}, got {indices.tolist()}.")
        td[indices] = values


def cartpole_batches(n_batches: int, batch_size: int = 5, seed: int = 0) -> list[dict[str, torch.Tensor]]:
    """``n_batches`` consecutive batches of CartPole transitions under a random policy, each a
    dict of tensors: state/next_state (n, 4) float32, action (n,) int64, reward and done (n,)
    float32, step (n,) int64 (step within the episode, from 0), episode_id (n,) int64."""
    from course_utils.replay.dqn import make_env

    env = make_env()
    obs, _ = env.reset(seed=seed)
    env.action_space.seed(seed)
    rows, step, episode = [], 0, 0
    while len(rows) < n_batches * batch_size:
        action = int(env.action_space.sample())
        next_obs, reward, terminated, truncated, _ = env.step(action)
        rows.append((obs, action, reward, next_obs, terminated, step, episode))
        obs, step = next_obs, step + 1
        if terminated or truncated:
            obs, _ = env.reset()
            step, episode = 0, episode + 1
    env.close()
    columns = list(zip(*rows, strict=True))
    table = {
        "state": torch.as_tensor(np.array(columns[0], dtype=np.float32)),
        "action": torch.as_tensor(np.array(columns[1], dtype=np.int64)),
        "reward": torch.as_tensor(np.array(columns[2], dtype=np.float32)),
        "next_state": torch.as_tensor(np.array(columns[3], dtype=np.float32)),
        "done": torch.as_tensor(np.array(columns[4], dtype=np.float32)),
        "step": torch.as_tensor(np.array(columns[5], dtype=np.int64)),
        "episode_id": torch.as_tensor(np.array(columns[6], dtype=np.int64)),
    }
    return [{key: value[i * batch_size : (i + 1) * batch_size] for key, value in table.items()} for i in range(n_batches)]


def plot_memory(memory: CircularReplayMemory, axes=None):
    """Left: the stored TD error of every slot. Right: which step of which episode each slot
    holds (colour: episode id), with the write pointer marked. Returns the figure."""
    import matplotlib.pyplot as plt

    if memory.memory is None:
        raise ReplayMemoryError("the memory is empty: add a batch before plotting it.")
    if axes is None:
        fig, axes = plt.subplots(1, 2, figsize=(12, 3.6))
    else:
        fig = axes[0].figure
    slots = torch.arange(len(memory))
    held = memory[: len(memory)]
    axes[0].bar(slots.numpy(), held["td_error"].reshape(len(memory), -1)[:, 0].numpy(), width=1.0)
    axes[0].set(title="TD error stored in each slot", xlabel="slot", ylabel="TD error")
    points = axes[1].scatter(
        slots.numpy(), held["step"].reshape(-1).numpy(), c=held["episode_id"].reshape(-1).numpy(), cmap="viridis", s=14
    )
    axes[1].axvline(memory.pointer - 0.5, color="crimson", linestyle="--", label="next write")
    axes[1].set(title="What the memory holds", xlabel="slot", ylabel="step within its episode")
    fig.colorbar(points, ax=axes[1], label="episode id")
    axes[1].legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    return fig
