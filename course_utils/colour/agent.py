"""Tutorial 2's agent: the A2C agent without memory, one gradient step's experience as plain
tensors, and the A2C loss with an importance ratio that makes replayed experience safe.

Shapes used throughout: ``T`` trials per gradient step, agent input of 9 features per trial
(6 for the two RGB colours scaled to [0, 1], 1 for the previous reward divided by 4,
2 for the one-hot previous action).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from course_utils.returns import discounted_returns

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


def a2c_loss(agent: ActorCritic, experience: Experience, *, returns_fn=None, importance_ratio: bool = True,
             actor_loss_fn=None) -> torch.Tensor:
    """The A2C loss of one experience under the agent's current weights (a scalar).

    actor: mean of -rho_t * log pi(a_t) * (Q_t - V_t), advantage and rho detached;
    critic: mean of (Q_t - V_t)^2; entropy: mean policy entropy;
    loss = actor + value_cost * critic - entropy_cost * entropy.

    rho_t = pi(a_t) / mu(a_t) is the importance ratio between the current policy and the
    one that acted (``experience.probs``), capped at ``RHO_MAX``. For fresh experience it is
    exactly 1 (plain A2C). For replayed experience it corrects each trial's action for the
    change of policy; the returns, the critic's targets and the inputs (previous action and
    reward) are still the acting policy's, and the cap adds a bias of its own. Without it
    (``importance_ratio=False``, rho_t = 1 everywhere, the tutorial's ablation) replaying old
    actions drifts the policy until it always chooses one side.

    returns_fn: ``returns_fn(rewards, gamma)`` -> T discounted returns, e.g. the student's
    ``discounted_returns``; default: the course's ``course_utils.returns.discounted_returns``.
    actor_loss_fn: ``actor_loss_fn(log_pi, mu, advantage, rho_max)`` -> the actor's term (a scalar),
    e.g. the student's ``replay_actor_loss``, handed log pi(a_t) (T,) with its gradient, the stored
    mu (T,), the advantage (T,) still attached to the critic (detaching it is the actor term's
    job) and ``RHO_MAX``; default: the course's term above. Not used when ``importance_ratio`` is
    False (the ablation has no ratio to compute).
    """
    values, logits = agent(experience.inputs)
    log_probs = F.log_softmax(logits, dim=-1)
    q = _returns(experience.rewards, agent.gamma, returns_fn)
    advantage = q - values
    chosen = log_probs.gather(-1, experience.actions[:, None]).squeeze(-1)
    if importance_ratio and actor_loss_fn is not None:
        actor = actor_loss_fn(chosen, experience.probs, advantage, RHO_MAX)
    elif importance_ratio:
        ratio = (chosen.detach().exp() / experience.probs).clamp(max=RHO_MAX)
        actor = -(ratio * chosen * advantage.detach()).mean()
    else:
        actor = -(chosen * advantage.detach()).mean()
    critic = advantage.pow(2).mean()
    entropy = -(log_probs.exp() * log_probs).sum(-1).mean()
    return actor + agent.value_cost * critic - agent.entropy_cost * entropy


def importance_ratios(agent: ActorCritic, experience: Experience) -> torch.Tensor:
    """The uncapped importance ratios pi(a_t) / mu(a_t) of one experience (T,): the current
    policy's probability of each stored action over the acting policy's. 1 on fresh experience."""
    with torch.no_grad():
        _, logits = agent(experience.inputs)
        chosen = F.softmax(logits, dim=-1).gather(-1, experience.actions[:, None]).squeeze(-1)
    return chosen / experience.probs


def actor_terms_agree(agent: ActorCritic, experience: Experience, actor_loss_fn) -> dict[str, float]:
    """The A2C loss of one experience computed twice, with the course's actor term and with
    ``actor_loss_fn`` (the student's ``replay_actor_loss``), and how far apart the two are.

    Returns ``course_loss`` and ``your_loss`` (the two scalar losses), ``grad_difference`` (the
    largest absolute difference between the two gradients over all the agent's weights), and the
    experience's uncapped ratios pi / mu: ``rho_min``, ``rho_max`` and ``capped`` (the fraction of
    trials above ``RHO_MAX``). The agent's weights and gradients are left as they were."""
    losses, grads = [], []
    saved = [None if p.grad is None else p.grad.clone() for p in agent.parameters()]
    for fn in (None, actor_loss_fn):
        agent.zero_grad(set_to_none=True)
        loss = a2c_loss(agent, experience, actor_loss_fn=fn)
        loss.backward()
        losses.append(float(loss.detach()))
        grads.append(torch.cat([p.grad.reshape(-1) for p in agent.parameters()]))
    for p, grad in zip(agent.parameters(), saved, strict=True):
        p.grad = grad
    rho = importance_ratios(agent, experience)
    return {"course_loss": losses[0], "your_loss": losses[1],
            "grad_difference": float((grads[0] - grads[1]).abs().max()),
            "rho_min": float(rho.min()), "rho_max": float(rho.max()), "capped": float((rho > RHO_MAX).float().mean())}


def graph_nbytes(agent: ActorCritic, experience: Experience) -> int:
    """Bytes of the tensors the autograd graph of ``a2c_loss(agent, experience)`` saves for its
    backward pass, the agent's weights not counted: what a memory of loss tensors would keep
    alive per step, on top of the experience itself."""
    storages, weights = {}, {p.untyped_storage().data_ptr() for p in agent.parameters()}

    def pack(tensor):
        storages[tensor.untyped_storage().data_ptr()] = tensor.untyped_storage().nbytes()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        a2c_loss(agent, experience)
    return sum(size for pointer, size in storages.items() if pointer not in weights)


def _returns(rewards: torch.Tensor, gamma: float, returns_fn) -> torch.Tensor:
    """The T discounted returns of ``rewards`` (T,) as a float32 tensor (T,)."""
    if returns_fn is None:
        return torch.from_numpy(discounted_returns(rewards.numpy(), gamma=gamma))
    q = np.asarray(returns_fn(rewards.numpy().copy(), gamma), dtype=np.float32)
    if q.shape != tuple(rewards.shape):
        raise ValueError(f"returns_fn gave returns of shape {q.shape} for {len(rewards)} rewards; it must return one "
                         "return per reward (shape (T,)). Check it with check_discounted_returns first.")
    return torch.from_numpy(q)
