"""Tutorial 2, colour replay: the changing colour environment, the A2C agent, its training
loop, evaluation, and a replay memory that keeps experiences (never autograd graphs).

Shapes used throughout: ``T`` trials per gradient step, agent input of 9 features per trial
(6 for the two RGB colours scaled to [0, 1], 1 for the previous reward divided by 4,
2 for the one-hot previous action).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import gymnasium as gym
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from tqdm.auto import tqdm

from course_utils.game import check_side

COLOUR_REWARDS = {"red": 1, "yellow": 2, "green": 3, "blue": 4}
"""Fixed reward of each colour (its place in the rainbow)."""

COLOUR_RGB = {
    "red": (255, 0, 0),
    "yellow": (255, 255, 0),
    "green": (0, 128, 0),
    "blue": (0, 0, 255),
}
"""RGB values (0-255) of each colour, as the agent sees them."""

MODE_COLOURS = {1: ("red", "yellow", "green"), 2: ("red", "green", "blue")}
"""The three colours each mode draws its pairs from: mode 2 swaps yellow for blue."""

COLOURS = tuple(COLOUR_REWARDS)
RHO_MAX = 10.0
MAX_REWARD = max(COLOUR_REWARDS.values())
N_INPUTS = 9


def _check_mode(mode) -> int:
    if isinstance(mode, bool) or mode not in MODE_COLOURS:
        raise ValueError(
            f"mode must be 1 (colours {', '.join(MODE_COLOURS[1])}) or 2 (colours {', '.join(MODE_COLOURS[2])}), got {mode!r}."
        )
    return int(mode)


_check_action = check_side


class ColourEnv(gym.Env):
    """Pick the colour worth more of two shown side by side.

    Each trial shows two different colours drawn from the current mode's three. Choosing
    left (0) or right (1) earns that colour's fixed reward (red 1, yellow 2, green 3,
    blue 4). Mode 1 uses red/yellow/green; mode 2 red/green/blue. Trials never end by
    themselves (``terminated`` and ``truncated`` are always False).

    Observation: float32 array of shape (6,): left RGB then right RGB, scaled to [0, 1].
    ``info`` of ``step`` describes the finished trial: ``colours`` (left, right), ``chosen``,
    ``best``, ``max_reward``; ``info`` of ``reset`` gives the first pair and the mode.
    """

    metadata = {"render_modes": []}

    def __init__(self, mode: int = 1):
        self.mode = _check_mode(mode)
        self.observation_space = gym.spaces.Box(0.0, 1.0, shape=(6,), dtype=np.float32)
        self.action_space = gym.spaces.Discrete(2)
        self.colours: tuple[str, str] | None = None

    def set_mode(self, mode: int) -> None:
        """Switch the colour set; takes effect from the next pair drawn."""
        self.mode = _check_mode(mode)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Start afresh. ``options={"mode": 2}`` switches mode. Returns ``(obs, info)``."""
        super().reset(seed=seed)
        if options and "mode" in options:
            self.set_mode(options["mode"])
        self._draw()
        return self.observation(), {"colours": self.colours, "mode": self.mode}

    def step(self, action):
        """Choose left (0) or right (1). Returns ``(obs, reward, terminated, truncated, info)``."""
        if self.colours is None:
            raise RuntimeError("Call env.reset() before env.step(action).")
        action = _check_action(action)
        shown = self.colours
        chosen = shown[action]
        best = max(shown, key=COLOUR_REWARDS.get)
        info = {"colours": shown, "chosen": chosen, "best": best, "max_reward": COLOUR_REWARDS[best]}
        self._draw()
        return self.observation(), float(COLOUR_REWARDS[chosen]), False, False, info

    def observation(self) -> np.ndarray:
        """The current pair as float32 (6,): left RGB, right RGB, in [0, 1]."""
        left, right = self.colours
        return np.asarray(COLOUR_RGB[left] + COLOUR_RGB[right], dtype=np.float32) / 255.0

    def _draw(self) -> None:
        palette = MODE_COLOURS[self.mode]
        i, j = self.np_random.choice(3, size=2, replace=False)
        self.colours = (palette[i], palette[j])


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


class ReplayMemory:
    """A fixed-size memory of experiences; when full, new ones overwrite the oldest.

    ``write`` stores at the writing pointer; ``read`` returns experiences in storage order,
    wrapping around. It holds only detached tensors, so 250 experiences of 100 trials take
    1.3 MB (keeping 250 losses with their autograd graphs instead takes about 1.7 GB).
    """

    def __init__(self, capacity: int = 250):
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, got {capacity}.")
        self.capacity = capacity
        self.slots: list[Experience | None] = [None] * capacity
        self.write_pointer = 0
        self.read_pointer = 0
        self.n_written = 0

    def __len__(self) -> int:
        return min(self.n_written, self.capacity)

    def write(self, experience: Experience) -> None:
        self.slots[self.write_pointer] = experience
        self.write_pointer = (self.write_pointer + 1) % self.capacity
        self.n_written += 1

    def read(self) -> Experience:
        if len(self) == 0:
            raise IndexError("The replay memory is empty: write experiences before reading.")
        experience = self.slots[self.read_pointer]
        self.read_pointer = (self.read_pointer + 1) % len(self)
        return experience

    def nbytes(self) -> int:
        """Bytes held by the stored experiences' tensors."""
        return sum(e.nbytes() for e in self.slots if e is not None)


def returns_to_go(rewards: torch.Tensor, gamma: float) -> torch.Tensor:
    """Discounted returns Q_t = sum_k gamma^k r_{t+k} for rewards of shape (T,), as (T,).

    Computed as one matrix product with the upper-triangular matrix of gamma powers
    (cheap for the course's T = 100).
    """
    t = torch.arange(rewards.shape[-1], dtype=rewards.dtype)
    lag = t[None, :] - t[:, None]
    weights = torch.where(lag >= 0, gamma ** lag.clamp(min=0), torch.zeros(()))
    return weights @ rewards


def a2c_loss(agent: ActorCritic, experience: Experience) -> torch.Tensor:
    """The A2C loss of one experience under the agent's current weights (a scalar).

    actor: mean of -rho_t * log pi(a_t) * (Q_t - V_t), advantage and rho detached;
    critic: mean of (Q_t - V_t)^2; entropy: mean policy entropy;
    loss = actor + value_cost * critic - entropy_cost * entropy.

    rho_t = pi(a_t) / mu(a_t) is the importance ratio between the current policy and the
    one that acted (``experience.probs``), capped at ``RHO_MAX``. For fresh experience it is
    exactly 1 (plain A2C). For replayed experience it keeps the policy gradient unbiased:
    without it, replaying old actions against a baseline drifts the policy (measured: the
    agent collapsed to always choosing one side).
    """
    values, logits = agent(experience.inputs)
    log_probs = F.log_softmax(logits, dim=-1)
    q = returns_to_go(experience.rewards, agent.gamma)
    advantage = q - values
    chosen = log_probs.gather(-1, experience.actions[:, None]).squeeze(-1)
    ratio = (chosen.detach().exp() / experience.probs).clamp(max=RHO_MAX)
    actor = -(ratio * chosen * advantage.detach()).mean()
    critic = advantage.pow(2).mean()
    entropy = -(log_probs.exp() * log_probs).sum(-1).mean()
    return actor + agent.value_cost * critic - agent.entropy_cost * entropy


class _Policy:
    """NumPy views of the agent's weights for fast one-trial-at-a-time action sampling.

    The views share memory with the parameters, so they follow every optimizer step.
    """

    def __init__(self, agent: ActorCritic):
        self.we, self.be = (p.detach().numpy() for p in (agent.embedding.weight, agent.embedding.bias))
        self.wh, self.bh = (p.detach().numpy() for p in (agent.hidden.weight, agent.hidden.bias))
        self.wa, self.ba = (p.detach().numpy() for p in (agent.actor.weight, agent.actor.bias))

    def prob_right(self, x: np.ndarray) -> float:
        h = np.maximum(self.wh @ (self.we @ x + self.be) + self.bh, 0.0)
        logits = self.wa @ h + self.ba
        return 1.0 / (1.0 + np.exp(logits[0] - logits[1]))


@dataclass
class Trials:
    """What happened in a run of trials: arrays of length T."""

    inputs: np.ndarray  # float32 (T, 9)
    actions: np.ndarray  # int64 (T,)
    rewards: np.ndarray  # float64 (T,), raw 1-4
    max_rewards: np.ndarray  # float64 (T,)
    probs: np.ndarray  # float32 (T,), probability the acting policy gave its chosen action
    shown: list = field(default_factory=list)  # T pairs (left, right) of colour names

    @property
    def chosen(self) -> list[str]:
        return [pair[a] for pair, a in zip(self.shown, self.actions, strict=True)]

    @property
    def best(self) -> list[str]:
        return [max(pair, key=COLOUR_REWARDS.get) for pair in self.shown]

    def experience(self) -> Experience:
        return Experience(
            torch.from_numpy(self.inputs.copy()),
            torch.from_numpy(self.actions.copy()),
            torch.from_numpy((self.rewards / MAX_REWARD).astype(np.float32)),
            torch.from_numpy(self.probs.copy()),
        )


def run_trials(
    env: ColourEnv, agent: ActorCritic, n_trials: int, rng: np.random.Generator, policy: _Policy | None = None
) -> Trials:
    """Let the agent play ``n_trials`` trials from the env's current pair, without gradients.

    Each trial starts from no previous reward or action only at the start of the run, as in
    the reference setup.
    """
    policy = policy or _Policy(agent)
    inputs = np.zeros((n_trials, N_INPUTS), dtype=np.float32)
    actions = np.zeros(n_trials, dtype=np.int64)
    rewards = np.zeros(n_trials)
    max_rewards = np.zeros(n_trials)
    probs = np.zeros(n_trials, dtype=np.float32)
    shown = []
    obs = env.observation()
    uniforms = rng.random(n_trials)
    for t in range(n_trials):
        inputs[t, :6] = obs
        p_right = policy.prob_right(inputs[t])
        action = int(uniforms[t] < p_right)
        probs[t] = p_right if action else 1.0 - p_right
        obs, reward, _, _, info = env.step(action)
        actions[t], rewards[t], max_rewards[t] = action, reward, info["max_reward"]
        shown.append(info["colours"])
        if t + 1 < n_trials:
            inputs[t + 1, 6] = reward / MAX_REWARD
            inputs[t + 1, 7 + action] = 1.0
    return Trials(inputs, actions, rewards, max_rewards, probs, shown)


def _default_rng(rng) -> np.random.Generator:
    if rng is None:
        return np.random.default_rng(np.random.randint(2**31))
    if isinstance(rng, (int, np.integer)):
        return np.random.default_rng(int(rng))
    return rng


def train_agent(
    env: ColourEnv,
    agent: ActorCritic,
    mode: int = 1,
    num_gradient_steps: int = 1000,
    num_trials: int = 100,
    replay=None,
    replay_mode: str | None = None,
    rng=None,
    progress: bool = True,
) -> list[float]:
    """Train ``agent`` on ``mode`` for ``num_gradient_steps`` A2C steps of ``num_trials`` trials.

    With ``replay_mode="write"`` every step's experience is written to ``replay``; with
    ``"read"`` every step is followed by a second step on an experience read back from it.
    Any object with ``write(experience)`` and ``read()`` works as ``replay``.
    Actions are sampled one trial at a time without gradients, then the loss of all trials
    is computed in one batched forward pass. Returns the mean reward (1-4) of each step.
    """
    if replay_mode not in (None, "write", "read"):
        raise ValueError(f"replay_mode must be None, 'write' or 'read', got {replay_mode!r}.")
    if replay_mode and replay is None:
        raise ValueError(f"replay_mode={replay_mode!r} needs a replay memory: pass replay=...")
    rng = _default_rng(rng)
    env.reset(seed=int(rng.integers(2**31)), options={"mode": mode})
    optimizer = agent.make_optimizer()
    policy = _Policy(agent)
    mean_rewards = []
    bar = tqdm(range(num_gradient_steps), desc=f"training on mode {mode}", disable=not progress, leave=False)
    for _ in bar:
        trials = run_trials(env, agent, num_trials, rng, policy)
        experience = trials.experience()
        _gradient_step(agent, optimizer, experience)
        if replay_mode == "write":
            replay.write(experience)
        elif replay_mode == "read":
            _gradient_step(agent, optimizer, replay.read())
        mean_rewards.append(float(trials.rewards.mean()))
        bar.set_postfix(mean_reward=f"{mean_rewards[-1]:.2f}", refresh=False)
    return mean_rewards


def _gradient_step(agent: ActorCritic, optimizer: torch.optim.Optimizer, experience: Experience) -> None:
    optimizer.zero_grad()
    a2c_loss(agent, experience).backward()
    optimizer.step()


def evaluate_agent(env: ColourEnv, agent: ActorCritic, mode: int = 1, num_trials: int = 20, rng=None) -> Trials:
    """Play ``num_trials`` trials on ``mode`` with the agent's stochastic policy, no learning."""
    rng = _default_rng(rng)
    env.reset(seed=int(rng.integers(2**31)), options={"mode": mode})
    with torch.no_grad():
        return run_trials(env, agent, num_trials, rng)


class FixedPairsEnv(ColourEnv):
    """A colour env that shows a given list of (left, right) pairs in order, e.g. the ones a
    player saw, so an agent can be compared with the player on the very same trials."""

    def __init__(self, pairs: list[tuple[str, str]]):
        super().__init__()
        unknown = {c for pair in pairs for c in pair} - set(COLOUR_REWARDS)
        if unknown:
            raise ValueError(f"Unknown colours {sorted(unknown)}; use {', '.join(COLOURS)}.")
        self._pairs = [tuple(pair) for pair in pairs]
        self._next = 0

    def _draw(self) -> None:
        self.colours = self._pairs[min(self._next, len(self._pairs) - 1)]
        self._next += 1


def play_pairs(agent: ActorCritic, pairs: list[tuple[str, str]], rng=None) -> Trials:
    """Let the agent choose on a given list of (left, right) pairs, without learning."""
    env = FixedPairsEnv(pairs)
    env.reset()
    with torch.no_grad():
        return run_trials(env, agent, len(pairs), _default_rng(rng))


def accuracy(trials: Trials) -> float:
    """Fraction of trials where the better colour was chosen (0 to 1)."""
    return float(np.mean(trials.rewards == trials.max_rewards))


def pair_accuracy(trials: Trials) -> dict[str, float]:
    """Accuracy per unordered colour pair, keyed like ``"red/yellow"`` (lower reward first)."""
    hits: dict[str, list[bool]] = {}
    for pair, reward, best in zip(trials.shown, trials.rewards, trials.max_rewards, strict=True):
        key = "/".join(sorted(pair, key=COLOUR_REWARDS.get))
        hits.setdefault(key, []).append(reward == best)
    return {key: float(np.mean(v)) for key, v in sorted(hits.items())}


def train_colour_agents(seed: int = 1, num_gradient_steps: int = 1000, progress: bool = True) -> dict[str, ActorCritic]:
    """The tutorial's three agents, trained deterministically from ``seed``.

    ``mode1``: trained on mode 1 (its experiences written to a replay memory);
    ``mode2``: ``mode1`` then trained on mode 2 without replay;
    ``replay``: ``mode1`` then trained on mode 2 while replaying mode-1 experiences.
    """
    import copy

    from course_utils.runtime import set_seed

    set_seed(seed)
    env = ColourEnv()
    memory = ReplayMemory(250)
    mode1 = ActorCritic()
    train_agent(env, mode1, 1, num_gradient_steps, replay=memory, replay_mode="write", rng=seed, progress=progress)
    mode2, replay = copy.deepcopy(mode1), copy.deepcopy(mode1)
    train_agent(env, mode2, 2, num_gradient_steps, rng=seed + 10, progress=progress)
    train_agent(env, replay, 2, num_gradient_steps, replay=memory, replay_mode="read", rng=seed + 10, progress=progress)
    return {"mode1": mode1, "mode2": mode2, "replay": replay}


def train_and_register(progress: bool = True) -> None:
    """``course train colour``: train the three agents and write their checkpoints and hashes."""
    import time

    from course_utils import checkpoints

    start = time.perf_counter()
    for name, agent in train_colour_agents(seed=1, progress=progress).items():
        entry = checkpoints.save_checkpoint(agent.state_dict(), f"colour_{name}", "course train colour")
        print(f"colour_{name}: {entry['file']} {entry['size']} bytes sha256 {entry['sha256'][:12]}...")
    print(f"trained in {time.perf_counter() - start:.1f} s; registry: {checkpoints.REGISTRY}")


def load_agent(name: str) -> ActorCritic:
    """A pretrained agent from the checkpoint registry: ``"mode1"``, ``"mode2"`` or ``"replay"``."""
    from course_utils.checkpoints import load_checkpoint

    agent = ActorCritic()
    agent.load_state_dict(load_checkpoint(f"colour_{name}"))
    return agent.eval()
