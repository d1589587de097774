"""The stored test batch as a ``TrainBatch``: the inputs of tutorial 3's loss checks.

Stacking stored episodes into a batch is what ``TrainBatch.from_episodes`` (exercise 5) asks, so
this lives apart from ``expected`` (which the episode checks read): only the loss checks import it,
and the grader's child that drives exercise 5 cannot read it (``exercises.GradedCell.twins``).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from course_utils.lunar.expected import EXPECTED_FILE, StoredEpisode, load_expected, stored_episode


@dataclass(eq=False)
class StoredBatch:
    """The stored test batch as data: ``states`` (N, 8) float32, ``actions`` (N,) long,
    ``q_vals`` (N,) float32 (gamma 0.9) and ``total_rewards`` (episodes,) float32.

    It has the attributes (and ``len``) of the tutorial's ``TrainBatch``, so the losses and
    ``train_batch`` take it as their batch. Not frozen: code that may assign to a
    ``TrainBatch``'s attributes works on it the same way."""

    states: torch.Tensor
    actions: torch.Tensor
    q_vals: torch.Tensor
    total_rewards: torch.Tensor

    def __len__(self) -> int:
        return len(self.q_vals)

    def __repr__(self) -> str:
        return (
            f"StoredBatch(states {tuple(self.states.shape)}, actions {tuple(self.actions.shape)}, "
            f"q_vals {tuple(self.q_vals.shape)}, {len(self.total_rewards)} episodes)"
        )


def expected_batch(expected: dict | None = None) -> tuple[list[StoredEpisode], StoredBatch, torch.Tensor, torch.Tensor]:
    """The fixed test batch from the expected file: (episodes, batch, action_scores (N, 4), state_values (N,)).

    Fresh objects on every call, so code that changes them does not change the next check's."""
    data = (expected or load_expected())["batch"]
    gamma, q_vals = data["gamma"], data["q_vals"]
    episodes, start = [], 0
    for ep in data["episodes"]:
        length = len(ep["rewards"])
        episodes.append(stored_episode(ep, gamma, q_vals[start : start + length]))
        start += length
    if start != len(q_vals):
        raise ValueError(f"{EXPECTED_FILE.name}: {len(q_vals)} stored q-values for {start} steps")
    batch = StoredBatch(
        states=torch.stack([e.state for ep in episodes for e in ep.experiences]),
        actions=torch.tensor([e.action for ep in episodes for e in ep.experiences], dtype=torch.long),
        q_vals=torch.tensor(q_vals, dtype=torch.float32),
        total_rewards=torch.tensor([ep.total_reward for ep in episodes], dtype=torch.float32),
    )
    return episodes, batch, torch.tensor(data["action_scores"]), torch.tensor(data["state_values"])
