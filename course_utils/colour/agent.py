"""Tutorial 2's agent: the A2C agent without memory, one gradient step's experience as plain
tensors, and the importance ratios of replayed experience. The loss is not here: the training step
(``training``) fuses the critic's and the entropy's terms with the student's ``replay_actor_loss``.

Shapes used throughout: ``T`` trials per gradient step, agent input of 9 features per trial
(6 for the two RGB colours scaled to [0, 1], 1 for the previous reward divided by 4,
2 for the one-hot previous action).
"""

from __future__ import annotations

from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

N_INPUTS = 9
RHO_MAX = 10.0
"""Cap on the importance ratio pi(a) / mu(a) of replayed experience."""


class ActorCritic(nn.Module):
    """A2C agent without memory: linear embedding, one ReLU layer, actor and critic heads.

    Input (..., 9) -> value (...,) and action logits (..., 2). The training
    hyperparameters travel with the agent: learning rate, discount factor ``gamma``,
    ``value_cost`` (weight of the critic loss) and ``entropy_cost`` (weight of the entropy
    bonus).
    """

    def __init__(self, hidden_size: int = 100, num_inputs: int = N_INPUTS, num_actions: int = 2):
        super().__init__()
        self.learning_rate = 0.00075
        self.gamma = 0.91
        self.value_cost = 0.4
        self.entropy_cost = 0.001
        self.embedding = nn.Linear(num_inputs, hidden_size)
        self.hidden = nn.Linear(hidden_size, hidden_size)
        self.critic = nn.Linear(hidden_size, 1)
        self.actor = nn.Linear(hidden_size, num_actions)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = F.relu(self.hidden(self.embedding(x)))
        return self.critic(h).squeeze(-1), self.actor(h)

    def make_optimizer(self) -> torch.optim.Optimizer:
        """RMSprop with the agent's learning rate (eps 1e-5), as in the reference setup."""
        return torch.optim.RMSprop(self.parameters(), lr=self.learning_rate, eps=1e-5)


class Experience(NamedTuple):
    """One gradient step's worth of trials, stored as plain tensors (no autograd graph).

    inputs: float32 (T, 9); actions: int64 (T,); rewards: float32 (T,), already divided by
    4; probs: float32 (T,), the probability the acting policy gave each chosen action (what
    replay needs to correct for the policy having changed since).
    """

    inputs: torch.Tensor
    actions: torch.Tensor
    rewards: torch.Tensor
    probs: torch.Tensor

    def nbytes(self) -> int:
        """Bytes held by the four tensors."""
        return sum(t.element_size() * t.nelement() for t in self)


def importance_ratios(agent: ActorCritic, experience: Experience) -> torch.Tensor:
    """The uncapped importance ratios pi(a_t) / mu(a_t) of one experience (T,): the current
    policy's probability of each stored action over the acting policy's. 1 on fresh experience."""
    with torch.no_grad():
        _, logits = agent(experience.inputs)
        chosen = F.softmax(logits, dim=-1).gather(-1, experience.actions[:, None]).squeeze(-1)
    return chosen / experience.probs


def graph_nbytes(agent: ActorCritic, experience: Experience) -> int:
    """Bytes of the tensors the autograd graph of the agent's forward pass on ``experience`` saves
    for its backward pass (values and log-probabilities of all T trials), the agent's weights not
    counted: what a memory of loss tensors would keep alive per step, on top of the experience
    itself. Every A2C loss of the step is built on this graph; its own terms add a few tensors of
    shape (T,), which this leaves out."""
    storages, weights = {}, {p.untyped_storage().data_ptr() for p in agent.parameters()}

    def pack(tensor):
        storages[tensor.untyped_storage().data_ptr()] = tensor.untyped_storage().nbytes()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        _, logits = agent(experience.inputs)
        F.log_softmax(logits, dim=-1)
    return sum(size for pointer, size in storages.items() if pointer not in weights)
