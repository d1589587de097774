"""Tutorial 1's agent: the A2C agent with an LSTM, its hyperparameters (and how evolution
mutates them), and its train-then-evaluate loop on one task.

``train_evaluate_agent`` is given code the tutorial cannot run without (the course's exception to
"no answers in the student package", see the README's instructor section): Exercise 1
(``evaluate_individual``) and through it Exercise 2 call it. It resembles tutorial 3's A2C losses
(``aac_loss``, ``entropy_loss``) and the discounted returns (tutorial 2's optional
``discounted_returns``, tutorial 3's ``calc_qvals``): the returns, the loss and the optimizer step
are written inside its training loop, not as functions an exercise could be answered with.

Shapes used throughout: the agent's input has 5 features per trial: the two digits shown
(left, right, as numbers 0-9), the previous reward (+1, -1 or 0 on the first trial) and the
one-hot previous action (two zeros on the first trial). ``H`` is the LSTM's hidden size (20).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from course_utils.harlow.env import N_ACTIONS, HarlowExperimentEnv
from course_utils.runtime import seed_torch

N_INPUTS = 5
HIDDEN_SIZE = 20

DEFAULT_HYPERPARAMETERS = {"learning_rate": 0.00075, "gamma": 0.91, "value_cost": 0.4, "entropy_cost": 0.001}
"""The newbie's training hyperparameters (the reference setup); evolution mutates them."""

PARAMETER_NOISE = 0.02
"""Standard deviation of the Gaussian noise added to every weight of an offspring."""

HYPER_MUTATION = {
    "learning_rate": (0.00005, 0.0001, 0.01),
    "gamma": (0.01, 0.6, 0.99),
    "value_cost": (0.05, 0.1, 0.7),
    "entropy_cost": (0.001, 0.0001, 0.05),
}
"""For each hyperparameter: (standard deviation of its mutation noise, lowest allowed value,
highest allowed value). Each one is clamped to its OWN range after mutation."""


class ActorCritic(nn.Module):
    """A2C agent with memory: linear embedding (5 -> H), an LSTM cell (H -> H), and two
    linear heads on the LSTM's output: the critic (value, a scalar) and the actor (2 logits).

    ``forward(x, (h, c))`` takes x of shape (5,) or (B, 5) and the LSTM state (each (H,) or
    (B, H)) and returns ``value`` (() or (B,)), ``logits`` ((2,) or (B, 2)) and the new state.
    The training hyperparameters travel with the agent (they are what evolution tunes along
    with the weights): ``learning_rate``, discount factor ``gamma``, ``value_cost`` (weight of
    the critic loss) and ``entropy_cost`` (weight of the entropy bonus).
    """

    def __init__(self, hidden_size: int = HIDDEN_SIZE, num_inputs: int = N_INPUTS, num_actions: int = N_ACTIONS):
        super().__init__()
        self.hidden_size = hidden_size
        for name, value in DEFAULT_HYPERPARAMETERS.items():
            setattr(self, name, value)
        self.embedding = nn.Linear(num_inputs, hidden_size)
        self.rnn = nn.LSTMCell(hidden_size, hidden_size)
        self.critic = nn.Linear(hidden_size, 1)
        self.actor = nn.Linear(hidden_size, num_actions)

    def forward(self, x: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor]):
        h, c = self.rnn(self.embedding(x), state)
        return self.critic(h).squeeze(-1), self.actor(h), (h, c)

    def initial_state(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Zero LSTM state (h, c), each of shape (H,)."""
        return torch.zeros(self.hidden_size), torch.zeros(self.hidden_size)

    def hyperparameters(self) -> dict[str, float]:
        return {name: float(getattr(self, name)) for name in DEFAULT_HYPERPARAMETERS}

    def extra_repr(self) -> str:
        return ", ".join(f"{k}={v:.4g}" for k, v in self.hyperparameters().items())


NEWBIE_SEED = 42
"""The tutorial's one newbie is made from this seed."""


def make_newbie(seed: int = NEWBIE_SEED) -> ActorCritic:
    """A newly initialised agent: PyTorch's default initialisation from ``seed`` (torch's global
    generator is left as it was), default hyperparameters. The same seed gives the same newbie."""
    state = torch.random.get_rng_state()
    try:
        seed_torch(seed)
        return ActorCritic()
    finally:
        torch.random.set_rng_state(state)


def agent_state(agent: ActorCritic) -> dict[str, torch.Tensor]:
    """The agent's state_dict plus its four hyperparameters as float64 scalar tensors
    (keys ``hyper.<name>``): one dict of tensors, loadable with ``weights_only=True``."""
    state = {k: v.detach().clone() for k, v in agent.state_dict().items()}
    state.update({f"hyper.{k}": torch.tensor(v, dtype=torch.float64) for k, v in agent.hyperparameters().items()})
    return state


def agent_from_state(state: dict[str, torch.Tensor]) -> ActorCritic:
    """Rebuild an agent from ``agent_state``'s dict."""
    weights = {k: v for k, v in state.items() if not k.startswith("hyper.")}
    agent = ActorCritic(hidden_size=weights["rnn.weight_hh"].shape[1])
    agent.load_state_dict(weights)
    for key, value in state.items():
        if key.startswith("hyper."):
            setattr(agent, key[len("hyper.") :], float(value))
    return agent


def _agent_input(obs: np.ndarray, prev_reward: float, prev_action: int | None) -> torch.Tensor:
    x = torch.zeros(N_INPUTS)
    x[:2] = torch.from_numpy(obs)
    x[2] = prev_reward
    if prev_action is not None:
        x[3 + prev_action] = 1.0
    return x


def train_evaluate_agent(
    env: HarlowExperimentEnv,
    agent: ActorCritic,
    optimizer_func=torch.optim.RMSprop,
    num_gradient_steps: int = 25,
    num_trials: int = 6,
    num_evaluation_trials: int = 20,
) -> float:
    """Train ``agent`` on ONE new task, then score it on the same task (this changes ``agent``).

    ``env.reset()`` draws the task. Each of the ``num_gradient_steps`` A2C steps plays
    ``num_trials`` trials from a fresh LSTM state (no previous reward or action) and takes
    one optimizer step (``optimizer_func(params, lr=agent.learning_rate, eps=1e-5)``) on
    actor + value_cost * critic - entropy_cost * entropy, each a mean over the trials.
    Then, without learning, the agent plays ``num_evaluation_trials`` trials from a fresh
    state; the score is the sum of their rewards (at most ``num_evaluation_trials``).
    Actions are sampled from the policy with torch's global random generator.
    """
    obs, _ = env.reset()
    optimizer = optimizer_func(agent.parameters(), lr=agent.learning_rate, eps=1e-5)
    for _ in range(num_gradient_steps):
        state, prev_reward, prev_action = agent.initial_state(), 0.0, None
        values, log_probs, entropies, rewards = [], [], [], []
        for _ in range(num_trials):
            value, logits, state = agent(_agent_input(obs, prev_reward, prev_action), state)
            dist = torch.distributions.Categorical(logits=logits)
            action = dist.sample()
            obs, reward, _, _, _ = env.step(int(action))
            values.append(value)
            log_probs.append(dist.log_prob(action))
            entropies.append(dist.entropy())
            rewards.append(reward)
            prev_reward, prev_action = reward, int(action)
        returns, running = [0.0] * num_trials, 0.0
        for t in range(num_trials - 1, -1, -1):  # Q_t = r_t + gamma * Q_(t+1), from the last trial back
            running = rewards[t] + agent.gamma * running
            returns[t] = running
        advantage = torch.tensor(returns, dtype=torch.float64).float() - torch.stack(values)
        actor_loss = -(torch.stack(log_probs) * advantage.detach()).mean()
        critic_loss = advantage.pow(2).mean()
        loss = actor_loss + agent.value_cost * critic_loss - agent.entropy_cost * torch.stack(entropies).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    score = 0.0
    with torch.no_grad():
        state, prev_reward, prev_action = agent.initial_state(), 0.0, None
        for _ in range(num_evaluation_trials):
            _, logits, state = agent(_agent_input(obs, prev_reward, prev_action), state)
            action = int(torch.distributions.Categorical(logits=logits).sample())
            obs, reward, _, _, _ = env.step(action)
            score += reward
            prev_reward, prev_action = reward, action
    return score
