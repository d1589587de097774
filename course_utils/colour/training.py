"""Tutorial 2's training and evaluation: trials played one at a time without gradients, one
batched A2C step per run of trials (optionally writing to or reading from a replay memory),
accuracies, and the pretrained agents.

Given code the tutorial cannot run without (the course's exception to "no answers in the student
package", see the README's instructor section): the A2C gradient step, which resembles tutorial 3's
A2C losses (``aac_loss``, ``entropy_loss``) and the returns of tutorial 2's optional
``discounted_returns`` / tutorial 3's ``calc_qvals``. It holds no actor term: the actor's part of
the loss is always the student's ``replay_actor_loss``, handed in as ``actor_loss_fn``. The
critic's squared advantage, the entropy bonus and the discounted returns are written inside the
step (``_gradient_step``: it computes the loss, steps the optimizer and returns the loss as a
number), not separate functions an exercise could be answered with.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

from course_utils import checkpoints
from course_utils.colour.agent import N_INPUTS, RHO_MAX, ActorCritic, Experience, importance_ratios
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
    importance_ratio: bool = True,
    after_step=None,
    *,
    actor_loss_fn,
) -> list[float]:
    """Train ``agent`` on ``mode`` for ``num_gradient_steps`` A2C steps of ``num_trials`` trials.

    ``actor_loss_fn(log_pi, mu, advantage, rho_max)``: the actor's term of the loss (a scalar
    tensor), the student's ``replay_actor_loss`` once it passes its check (the instructor's
    trainers hand in the harvested solution). With ``replay_mode="write"`` every step's
    experience is written to ``replay``; with ``"read"`` every step is followed by a second step
    on an experience read back from it. Any object with ``write(experience)`` and ``read()``
    works as ``replay``. ``importance_ratio=False`` makes every ratio the actor term computes
    exactly 1 (the ablation: replay without the ratio, see ``_gradient_step``).
    ``after_step(step, agent)``, if given, is called after each step (step counts from 1).
    Actions are sampled one trial at a time without gradients, then the loss of all trials is
    computed in one batched forward pass. Returns the mean reward (1-4) of each step.
    """
    if replay_mode not in (None, "write", "read"):
        raise ValueError(f"replay_mode must be None, 'write' or 'read', got {replay_mode!r}.")
    if replay_mode and replay is None:
        raise ValueError(f"replay_mode={replay_mode!r} needs a replay memory: pass replay=...")
    if not callable(actor_loss_fn):
        raise TypeError("train_agent needs actor_loss_fn: your replay_actor_loss, once it passes its check.")
    rng = generator(rng)
    env.reset(seed=int(rng.integers(2**31)), options={"mode": mode})
    optimizer = agent.make_optimizer()
    policy = _Policy(agent)
    mean_rewards = []
    bar = tqdm(range(num_gradient_steps), desc=f"training on mode {mode}", disable=not progress, leave=False)
    for _ in bar:
        trials = run_trials(env, agent, num_trials, rng, policy)
        experience = trials.experience()
        _gradient_step(agent, optimizer, experience, actor_loss_fn, importance_ratio)
        if replay_mode == "write":
            replay.write(experience)
        elif replay_mode == "read":
            _gradient_step(agent, optimizer, replay.read(), actor_loss_fn, importance_ratio)
        mean_rewards.append(float(trials.rewards.mean()))
        if after_step is not None:
            after_step(len(mean_rewards), agent)
        bar.set_postfix(mean_reward=f"{mean_rewards[-1]:.2f}", refresh=False)
    return mean_rewards


def _gradient_step(agent: ActorCritic, optimizer: torch.optim.Optimizer, experience: Experience, actor_loss_fn,
                   importance_ratio: bool = True) -> float:
    """One A2C step on one experience of T trials; returns the loss it stepped on, as a number.

    loss = actor + value_cost * mean((Q_t - V_t)^2) - entropy_cost * mean policy entropy, with
    Q_t = r_t + gamma * Q_(t+1) the discounted returns of the experience's rewards (float32, from
    the last trial back) and the actor's term ``actor_loss_fn(log_pi, mu, Q - V, RHO_MAX)``:
    log pi(a_t) (T,) with its gradient, the stored mu (T,), and the advantage (T,) still attached
    to the critic (detaching it is the actor term's job). Without the importance ratio (the
    ablation) the actor term is handed log pi minus its own detached value (zero, with log pi's
    gradient) and mu = 1: every ratio is then exactly 1, even where pi underflows to 0, and the
    gradient is plain A2C's.
    """
    values, logits = agent(experience.inputs)
    log_probs = F.log_softmax(logits, dim=-1)
    log_pi = log_probs.gather(-1, experience.actions[:, None]).squeeze(-1)
    rewards, gamma = experience.rewards, torch.tensor(agent.gamma, dtype=experience.rewards.dtype)
    q, running = torch.empty_like(rewards), torch.zeros((), dtype=rewards.dtype)
    for t in range(len(rewards) - 1, -1, -1):
        running = rewards[t] + gamma * running
        q[t] = running
    advantage = q - values
    if importance_ratio:
        actor = actor_loss_fn(log_pi, experience.probs, advantage, RHO_MAX)
    else:
        actor = actor_loss_fn(log_pi - log_pi.detach(), torch.ones_like(experience.probs), advantage, RHO_MAX)
    loss = (actor + agent.value_cost * advantage.pow(2).mean()
            - agent.entropy_cost * -(log_probs.exp() * log_probs).sum(-1).mean())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return float(loss.detach())


def replayed_step(agent: ActorCritic, experience: Experience, actor_loss_fn) -> dict[str, float]:
    """One gradient step of a copy of ``agent`` (a fresh optimizer) on ``experience``, with
    ``actor_loss_fn`` as the actor's term; ``agent`` is left as it was.

    Returns ``loss`` (the A2C loss stepped on), ``grad_norm`` (the Euclidean norm of that loss's
    gradient over all the agent's weights) and the experience's uncapped ratios pi / mu under
    ``agent``: ``rho_min``, ``rho_max`` and ``capped`` (the fraction of trials above ``RHO_MAX``)."""
    rho = importance_ratios(agent, experience)
    learner = copy.deepcopy(agent)
    loss = _gradient_step(learner, learner.make_optimizer(), experience, actor_loss_fn)
    grad_norm = float(torch.cat([p.grad.reshape(-1) for p in learner.parameters()]).norm())
    return {"loss": loss, "grad_norm": grad_norm, "rho_min": float(rho.min()), "rho_max": float(rho.max()),
            "capped": float((rho > RHO_MAX).float().mean())}


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
