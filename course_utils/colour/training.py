"""Tutorial 2's training and evaluation: trials played one at a time without gradients, one
batched A2C step per run of trials (optionally writing to or reading from a replay memory),
accuracies, and the pretrained agents."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
from tqdm.auto import tqdm

from course_utils import checkpoints
from course_utils.colour.agent import N_INPUTS, ActorCritic, Experience, a2c_loss
from course_utils.colour.env import COLOUR_REWARDS, MAX_REWARD, ColourEnv, FixedPairsEnv
from course_utils.runtime import generator


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
        with np.errstate(over="ignore"):  # a huge logit gap gives exp = inf and a probability of exactly 0
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
    returns_fn=None,
    importance_ratio: bool = True,
    after_step=None,
    actor_loss_fn=None,
) -> list[float]:
    """Train ``agent`` on ``mode`` for ``num_gradient_steps`` A2C steps of ``num_trials`` trials.

    With ``replay_mode="write"`` every step's experience is written to ``replay``; with
    ``"read"`` every step is followed by a second step on an experience read back from it.
    Any object with ``write(experience)`` and ``read()`` works as ``replay``.
    ``returns_fn(rewards, gamma)`` computes the discounted returns (default: the course's);
    ``importance_ratio=False`` drops the importance ratio from the loss (the ablation);
    ``actor_loss_fn(log_pi, mu, advantage, rho_max)`` computes the actor's term (default: the
    course's, see ``a2c_loss``);
    ``after_step(step, agent)``, if given, is called after each step (step counts from 1).
    Actions are sampled one trial at a time without gradients, then the loss of all trials
    is computed in one batched forward pass. Returns the mean reward (1-4) of each step.
    """
    if replay_mode not in (None, "write", "read"):
        raise ValueError(f"replay_mode must be None, 'write' or 'read', got {replay_mode!r}.")
    if replay_mode and replay is None:
        raise ValueError(f"replay_mode={replay_mode!r} needs a replay memory: pass replay=...")
    rng = generator(rng)
    env.reset(seed=int(rng.integers(2**31)), options={"mode": mode})
    optimizer = agent.make_optimizer()
    policy = _Policy(agent)
    mean_rewards = []
    bar = tqdm(range(num_gradient_steps), desc=f"training on mode {mode}", disable=not progress, leave=False)
    for _ in bar:
        trials = run_trials(env, agent, num_trials, rng, policy)
        experience = trials.experience()
        _gradient_step(agent, optimizer, experience, returns_fn, importance_ratio, actor_loss_fn)
        if replay_mode == "write":
            replay.write(experience)
        elif replay_mode == "read":
            _gradient_step(agent, optimizer, replay.read(), returns_fn, importance_ratio, actor_loss_fn)
        mean_rewards.append(float(trials.rewards.mean()))
        if after_step is not None:
            after_step(len(mean_rewards), agent)
        bar.set_postfix(mean_reward=f"{mean_rewards[-1]:.2f}", refresh=False)
    return mean_rewards


def _gradient_step(agent: ActorCritic, optimizer: torch.optim.Optimizer, experience: Experience,
                   returns_fn=None, importance_ratio: bool = True, actor_loss_fn=None) -> None:
    optimizer.zero_grad()
    a2c_loss(agent, experience, returns_fn=returns_fn, importance_ratio=importance_ratio,
             actor_loss_fn=actor_loss_fn).backward()
    optimizer.step()


def evaluate_agent(env: ColourEnv, agent: ActorCritic, mode: int = 1, num_trials: int = 20, rng=None) -> Trials:
    """Play ``num_trials`` trials on ``mode`` with the agent's stochastic policy, no learning."""
    rng = generator(rng)
    env.reset(seed=int(rng.integers(2**31)), options={"mode": mode})
    with torch.no_grad():
        return run_trials(env, agent, num_trials, rng)


def play_pairs(agent: ActorCritic, pairs: list[tuple[str, str]], rng=None) -> Trials:
    """Let the agent choose on a given list of (left, right) pairs, without learning."""
    env = FixedPairsEnv(pairs)
    env.reset()
    with torch.no_grad():
        return run_trials(env, agent, len(pairs), generator(rng))


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


def load_agent(name: str) -> ActorCritic:
    """A pretrained agent from the checkpoint registry: ``"mode1"``, ``"mode2"`` or ``"replay"``."""
    agent = ActorCritic()
    agent.load_state_dict(checkpoints.load_checkpoint(f"colour_{name}"))
    return agent.eval()
