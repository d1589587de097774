"""How noisy is a policy-gradient estimate? The same policy, many batches, four weights.

The notebook's losses all have the form ``-mean_t(w_t * log pi(a_t | s_t))`` over the steps of a
batch of episodes; they differ in the weight ``w_t``. On average over batches the four weights
below give the same gradient (the derivation in the notebook shows why), but one batch's
gradient scatters around that average by very different amounts. This module measures it:

1. ``play_episodes``: whole episodes of a fixed policy, all stepped together;
2. ``fit_critic``: a small network fitted to the reward-to-go of *other* episodes of the same
   policy (so it is a function of the state only, independent of the batches measured);
3. ``step_weights``: the four weights of one batch (``ESTIMATORS``);
4. ``batch_gradients``: the gradient of ``mean_t(w_t * log pi(a_t | s_t))`` with respect to the
   policy's parameters, one flat vector per weight;
5. ``measure``: ``batches`` batches of ``episodes_per_batch`` episodes, every weight on the same
   batches; ``summarise``: the total variance of each estimate across batches and the cosine of
   each batch's gradient with the mean gradient;
6. ``run_variance_experiment``: the measurement for a fresh network and for the course's
   trained agent; ``store_variance`` (``course train lunar-variance``) runs it at the notebook's
   full size and writes its summary, which the notebook shows (``course_utils.lunar.variance``:
   ``plot_variance`` and ``report``), to ``assets/lunar_variance.json``.

Instructor code: ``batch_gradients`` is the score-function estimator (Exercise 5) for any
network, and the measurement plays the course's actor-critic network.

Returns are undiscounted (gamma = 1): then the total return, the reward-to-go and the critic's
weight estimate the same gradient, that of the expected total reward. The batch mean includes the
step's own episode, whose returns depend on the action, so its estimate has a bias of order 1/E
for E episodes per batch. Shapes: ``N`` steps in a batch, ``P`` policy parameters,
``K`` batches, 8 observation features, 4 actions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from course_admin.lunar.aac import ActorCriticNet, _mlp
from course_admin.lunar.episodes import play_together
from course_utils.lunar.env import MAX_EPISODE_STEPS, make_env_for
from course_utils.lunar.harness import _progress
from course_utils.lunar.variance import ESTIMATORS, POLICIES, VARIANCE_RESULTS
from course_utils.runtime import seed_torch

FULL_SIZE = dict(batches=50, episodes_per_batch=16, critic_episodes=64, seed=0)
"""The stored measurement's sizes: batches per policy, episodes per batch (the experiments'
batch_size) and episodes the critic is fitted on, per policy, and the seed."""
FAST_SIZE = dict(batches=6, episodes_per_batch=16, critic_episodes=16, seed=0)
"""The sizes of the tests' quick run of the measurement."""


def reward_to_go(rewards) -> np.ndarray:
    """Undiscounted reward-to-go (T,) of one episode's rewards (T,): the reversed running sum."""
    return np.cumsum(np.asarray(rewards, dtype=np.float64)[::-1])[::-1].copy()


@dataclass
class Episode:
    """One episode: ``states`` (T, 8) float32, ``actions`` (T,) long, ``rewards`` (T,) float64,
    and whether it ended at the time limit (``truncated``) rather than by landing or crashing."""

    states: torch.Tensor
    actions: torch.Tensor
    rewards: np.ndarray
    truncated: bool


def play_episodes(net, seeds, generator: torch.Generator) -> list[Episode]:
    """One episode per seed with ``net``'s policy (sampled actions, ``generator``), all stepped
    together (``episodes.play_together``). Episodes are in seed order."""
    envs = [make_env_for(net) for _ in seeds]
    states, actions, rewards = ([[] for _ in seeds] for _ in range(3))
    for i, state, action, reward, _ in play_together(net, envs, seeds, generator):
        states[i].append(state)
        actions[i].append(action)
        rewards[i].append(reward)
    for env in envs:
        env.close()
    # An episode that lasted MAX_EPISODE_STEPS steps was cut off (a landing on the very last
    # step would also count here: rare enough not to matter for a fraction).
    return [
        Episode(torch.stack(s), torch.tensor(a, dtype=torch.long), np.array(r), len(r) == MAX_EPISODE_STEPS)
        for s, a, r in zip(states, actions, rewards, strict=True)
    ]


@dataclass
class Critic:
    """A state-value network fitted to reward-to-go; ``r2`` is the share of the targets' variance it
    explains on its training data (1: perfect, 0: no better than their mean)."""

    net: torch.nn.Module
    scale: float
    r2: float

    def __call__(self, states: torch.Tensor) -> np.ndarray:
        """v(s) of ``states`` (N, d): (N,) in reward units."""
        with torch.no_grad():
            return (self.net(states).squeeze(-1) * self.scale).double().numpy()


def fit_critic(episodes: list[Episode], steps: int = 300, minibatch: int = 512, seed: int = 0) -> Critic:
    """A (64, 64) tanh network fitted by Adam to the reward-to-go of ``episodes`` (minibatches of
    ``minibatch`` steps, ``steps`` updates, targets divided by their standard deviation)."""
    generator = torch.Generator().manual_seed(seed)
    seed_torch(seed)
    states = torch.cat([e.states for e in episodes])
    targets = torch.as_tensor(np.concatenate([reward_to_go(e.rewards) for e in episodes]), dtype=torch.float32)
    scale = float(targets.std()) or 1.0
    targets = targets / scale
    net = _mlp([states.shape[1], 64, 64, 1])
    optimizer = torch.optim.Adam(net.parameters(), lr=3e-3)
    for _ in range(steps):
        index = torch.randint(len(targets), (min(minibatch, len(targets)),), generator=generator)
        loss = ((net(states[index]).squeeze(-1) - targets[index]) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        residual = ((net(states).squeeze(-1) - targets) ** 2).mean()
    r2 = 1.0 - float(residual) / max(float(targets.var()), 1e-12)
    return Critic(net, scale, r2)


def step_weights(episodes: list[Episode], critic) -> dict[str, np.ndarray]:
    """The weight of every step of the batch for each of ``ESTIMATORS``: {name: (N,)}, steps of
    the episodes in order. ``critic(states)`` gives v(s) as (N,)."""
    togo = np.concatenate([reward_to_go(e.rewards) for e in episodes])
    total = np.concatenate([np.full(len(e.rewards), e.rewards.sum()) for e in episodes])
    values = critic(torch.cat([e.states for e in episodes]))
    return dict(zip(ESTIMATORS, (total, togo, togo - togo.mean(), togo - values), strict=True))


def policy_parameters(net) -> list[torch.nn.Parameter]:
    """The parameters the action scores depend on (the ``policy`` part of an actor-critic net)."""
    return list(getattr(net, "policy", net).parameters())


def batch_gradients(net, states: torch.Tensor, actions: torch.Tensor, weights: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """For each weight vector w (N,): the gradient of ``mean_t(w_t * log pi(a_t | s_t))`` with
    respect to ``policy_parameters(net)``, flattened to (P,). The loss of the notebook is minus
    this, so its gradient step goes the other way."""
    params = policy_parameters(net)
    output = net(states)
    scores = output[0] if isinstance(output, tuple) else output
    log_p = torch.log_softmax(scores, dim=-1).gather(1, actions.view(-1, 1)).squeeze(1)
    grads = {}
    for name, w in weights.items():
        objective = (torch.as_tensor(w, dtype=torch.float32) * log_p).mean()
        parts = torch.autograd.grad(objective, params, retain_graph=True)
        grads[name] = torch.cat([p.reshape(-1) for p in parts]).double().numpy()
    return grads


@dataclass
class Measurement:
    """What ``measure`` found for one policy: ``gradients[name]`` is (K, P), one row per batch;
    ``lengths`` the length and ``returns`` the total reward of every episode measured,
    ``truncated`` how many of them the time limit cut off; ``critic_r2`` how well the critic
    fitted its own training episodes."""

    gradients: dict[str, np.ndarray]
    lengths: list[int] = field(default_factory=list)
    returns: list[float] = field(default_factory=list)
    truncated: int = 0
    critic_r2: float = float("nan")


def measure(net, batches: int, episodes_per_batch: int, critic_episodes: int, seed: int = 0,
            progress: bool = True, desc: str = "variance") -> Measurement:
    """Play ``batches`` batches of ``episodes_per_batch`` episodes with ``net`` (seeds
    ``seed * 10**6 + i``) and compute every estimator's gradient on each; the critic is fitted
    first on ``critic_episodes`` other episodes (seeds from ``seed * 10**6 + 500_000``)."""
    if batches < 2 or episodes_per_batch < 1 or critic_episodes < 1:
        raise ValueError(f"measure needs at least 2 batches, 1 episode per batch and 1 critic episode; got "
                         f"batches={batches}, episodes_per_batch={episodes_per_batch}, critic_episodes={critic_episodes}.")
    generator = torch.Generator().manual_seed(seed)
    first = seed * 10**6
    critic = fit_critic(play_episodes(net, range(first + 500_000, first + 500_000 + critic_episodes), generator), seed=seed)
    result = Measurement({name: [] for name in ESTIMATORS}, critic_r2=critic.r2)
    bar = _progress(batches, progress, desc)
    for k in range(batches):
        episodes = play_episodes(net, range(first + k * episodes_per_batch, first + (k + 1) * episodes_per_batch), generator)
        result.lengths += [len(e.rewards) for e in episodes]
        result.returns += [float(np.sum(e.rewards)) for e in episodes]
        result.truncated += sum(e.truncated for e in episodes)
        states = torch.cat([e.states for e in episodes])
        actions = torch.cat([e.actions for e in episodes])
        for name, g in batch_gradients(net, states, actions, step_weights(episodes, critic)).items():
            result.gradients[name].append(g)
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    result.gradients = {name: np.stack(rows) for name, rows in result.gradients.items()}
    return result


def total_variance(gradients: np.ndarray) -> float:
    """The trace of the covariance of (K, P) gradient estimates: the mean squared distance of a
    batch's gradient from their mean (K - 1 in the denominator)."""
    return float(((gradients - gradients.mean(0)) ** 2).sum() / (len(gradients) - 1))


def reference_cosines(gradients: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """For each estimator, the cosine (K,) of every batch's gradient with the mean gradient.

    All estimators have the same expectation, so the mean gradient is estimated from all of them:
    their means, each weighted by the inverse of its total variance (the more precise, the more
    weight), leaving out the batch being compared (so no batch is compared with itself)."""
    variances = {name: total_variance(g) for name, g in gradients.items()}
    weights = {name: 1.0 / max(v, 1e-300) for name, v in variances.items()}
    norm = sum(weights.values())
    k = len(next(iter(gradients.values())))
    sums = {name: g.sum(0) for name, g in gradients.items()}
    cosines = {}
    for name, g in gradients.items():
        values = []
        for j in range(k):
            ref = sum(weights[e] * (sums[e] - gradients[e][j]) / (k - 1) for e in gradients) / norm
            values.append(float(g[j] @ ref / max(np.linalg.norm(g[j]) * np.linalg.norm(ref), 1e-300)))
        cosines[name] = np.array(values)
    return cosines


def summarise(result: Measurement) -> dict[str, dict[str, float]]:
    """Per estimator: ``variance`` (total), ``relative`` (to the total-return estimator's),
    ``mean_square`` (mean squared norm of a batch's gradient) and ``cosine`` (mean over batches
    of the cosine with the mean gradient, ``reference_cosines``)."""
    cosines = reference_cosines(result.gradients)
    base = total_variance(result.gradients[ESTIMATORS[0]])
    out = {}
    for name, g in result.gradients.items():
        variance = total_variance(g)
        out[name] = dict(variance=variance, relative=variance / base, mean_square=float((g**2).sum(1).mean()),
                         cosine=float(cosines[name].mean()))
    return out


def policies(seed: int = 0) -> dict:
    """The two policies of ``POLICIES``: a fresh ``ActorCriticNet`` (torch seeded with ``seed``)
    and the course's trained agent (its checkpoint in an ``ActorCriticNet``)."""
    from course_utils.checkpoints import load_checkpoint
    from course_utils.lunar.evaluation import CHECKPOINT

    seed_torch(seed)
    fresh = ActorCriticNet()
    agent = ActorCriticNet()
    agent.load_state_dict(load_checkpoint(CHECKPOINT))
    return dict(zip(POLICIES, (fresh, agent.eval()), strict=True))


def run_variance_experiment(batches: int, episodes_per_batch: int = 16, critic_episodes: int = 64, seed: int = 0,
                            progress: bool = True) -> dict[str, Measurement]:
    """``measure`` for each of ``POLICIES``: {policy name: Measurement}."""
    return {name: measure(net, batches, episodes_per_batch, critic_episodes, seed, progress, desc=name)
            for name, net in policies(seed).items()}


def summary(results: dict[str, Measurement], **sizes) -> dict:
    """What the notebook shows of a measurement, as JSON data: per policy its episodes' ``lengths``
    and ``returns``, ``truncated``, ``critic_r2``, ``batches`` and per estimator ``summarise``'s
    numbers with ``cosines`` (one per batch, ``reference_cosines``). ``sizes`` are stored with it."""
    out = {}
    for policy, result in results.items():
        numbers, cosines = summarise(result), reference_cosines(result.gradients)
        out[policy] = {
            "batches": len(result.gradients[ESTIMATORS[0]]),
            "lengths": [int(n) for n in result.lengths],
            "returns": [round(float(r), 3) for r in result.returns],
            "truncated": int(result.truncated),
            "critic_r2": float(result.critic_r2),
            "estimators": {name: {**{k: float(v) for k, v in numbers[name].items()},
                                  "cosines": [float(c) for c in cosines[name]]} for name in ESTIMATORS},
        }
    return {**sizes, "results": out}


def store_variance(progress: bool = True) -> dict:
    """``course train lunar-variance``: the measurement at full size (``FULL_SIZE``), its summary
    written to ``assets/lunar_variance.json``."""
    import json

    sizes = dict(FULL_SIZE)
    results = run_variance_experiment(**sizes, progress=progress)
    stored = {"how": "course train lunar-variance (course_admin.lunar.variance.store_variance)", **summary(results, **sizes)}
    VARIANCE_RESULTS.write_text(json.dumps(stored) + "\n")
    print(f"wrote {VARIANCE_RESULTS}")
    return stored


def score_identity(net=None, seed: int = 0) -> tuple[float, list[float]]:
    """The identity behind every baseline, computed exactly in one state: for the first state of
    the episode with ``seed``, the norm of ``sum_a pi(a|s) grad log pi(a|s)`` over the parameters
    of ``net`` (by default a fresh linear policy, observations (N, 8) -> action scores (N, 4), torch
    seeded with ``seed``) and the norm of each of its terms, action by action. Computed in float64
    on a copy of ``net``, so what is left of the sum is rounding error. Stored at release time for
    the notebook (``course_utils.lunar.variance.score_identity``): each term is a score-function
    gradient."""
    import copy

    from course_utils.lunar.env import make_env
    from course_utils.runtime import seed_torch

    if net is None:  # a fresh policy: every action's term is large
        with torch.random.fork_rng():
            seed_torch(seed)
            net = torch.nn.Linear(8, 4)
    net = copy.deepcopy(net).double()
    env = make_env()
    state = torch.as_tensor(env.reset(seed=seed)[0], dtype=torch.float64).unsqueeze(0)
    env.close()
    params = list(net.parameters())
    output = net(state)
    log_p = torch.log_softmax(output[0] if isinstance(output, tuple) else output, dim=-1).squeeze(0)
    total, norms = None, []
    for a in range(len(log_p)):
        parts = torch.autograd.grad(log_p[a], params, retain_graph=True)
        term = torch.cat([p.reshape(-1) for p in parts]) * float(log_p[a].detach().exp())
        norms.append(float(term.norm()))
        total = term if total is None else total + term
    return float(total.norm()), norms
