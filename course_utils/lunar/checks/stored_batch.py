"""The stored test batch as a ``TrainBatch``: the inputs of tutorial 3's loss checks.

The batch is stored already stacked (``assets/lunar_expected.json``, ``batch.stacked``, written
by ``course_admin.lunar.reference``): stacking episodes into a batch is what
``TrainBatch.from_episodes`` (Exercise 4) asks, so no code here turns episodes into a batch.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from course_utils.lunar.expected import EXPECTED_FILE, load_expected


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


def stored_batch(expected: dict | None = None) -> tuple[StoredBatch, torch.Tensor, torch.Tensor]:
    """The fixed test batch from the expected file: (batch, action_scores (N, 4), state_values (N,)).

    Fresh objects on every call, so code that changes them does not change the next check's."""
    data = (expected or load_expected())["batch"]
    stacked = data["stacked"]
    batch = StoredBatch(
        states=torch.tensor(stacked["states"], dtype=torch.float32),
        actions=torch.tensor(stacked["actions"], dtype=torch.long),
        q_vals=torch.tensor(data["q_vals"], dtype=torch.float32),
        total_rewards=torch.tensor(stacked["total_rewards"], dtype=torch.float32),
    )
    if not len(batch.states) == len(batch.actions) == len(batch) == len(data["action_scores"]):
        raise ValueError(f"{EXPECTED_FILE.name}: the stored batch's arrays differ in length")
    return batch, torch.tensor(data["action_scores"]), torch.tensor(data["state_values"])
