"""Tutorial 1, Harlow meta-RL and the Baldwin effect: the Harlow environment, a win-stay
lose-shift baseline, the A2C agent with an LSTM, its train-then-evaluate loop, and the
one-agent-at-a-time genetic algorithm the notebook builds.

The fast, batched evolution (a whole generation at once) is in ``course_utils.harlow_batch``;
``course train harlow`` runs it and saves the evolved agent and the history of every
generation.

Shapes used throughout: the agent's input has 5 features per trial: the two digits shown
(left, right, as numbers 0-9), the previous reward (+1, -1 or 0 on the first trial) and the
one-hot previous action (two zeros on the first trial). ``H`` is the LSTM's hidden size (20).
"""

from __future__ import annotations

import copy
import json
import random
from dataclasses import dataclass

import gymnasium as gym
import matplotlib.pyplot as plt
import numpy as np
import torch
from torch import nn

from course_utils.game import check_side
from course_utils.paths import ASSETS

N_INPUTS = 5
N_ACTIONS = 2
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

HISTORY = ASSETS / "harlow_evolution.json"
CHECKPOINT = "harlow_evolved"


# --------------------------------------------------------------------------------------
# Environment


_check_action = check_side


class HarlowExperimentEnv(gym.Env):
    """Harlow's experiment with digits: two digits are shown, one of them always pays.

    ``reset`` starts a new *task* (a new problem): it draws a rewarded and a punished digit,
    two different digits from 0-9. Every trial shows both, each on a random side. Choosing
    the side (0 left, 1 right) with the rewarded digit earns ``reward`` (+1), the other
    ``punishment`` (-1). Trials never end by themselves (``terminated`` and ``truncated``
    are always False).

    Observation: float32 array of shape (2,): the digit on the left, the digit on the right.
    ``info``: ``rewarded_digit``, ``punished_digit``; ``step`` adds ``correct`` (bool) and
    ``rewarded_side`` (where the rewarded digit was for the finished trial).
    ``reset(options={"digits": (rewarded, punished)})`` fixes the task instead of drawing it.
    """

    metadata = {"render_modes": []}

    def __init__(self, reward: float = 1.0, punishment: float = -1.0):
        self.reward = float(reward)
        self.punishment = float(punishment)
        self.observation_space = gym.spaces.Box(0.0, 9.0, shape=(2,), dtype=np.float32)
        self.action_space = gym.spaces.Discrete(2)
        self.rewarded_digit: int | None = None
        self.punished_digit: int | None = None
        self.rewarded_side = 0

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Start a new task. Returns ``(obs, info)``."""
        super().reset(seed=seed)
        if options and "digits" in options:
            rewarded, punished = (int(d) for d in options["digits"])
            if not (0 <= rewarded <= 9 and 0 <= punished <= 9) or rewarded == punished:
                raise ValueError(f"digits must be two different digits 0-9, got {options['digits']!r}.")
        else:
            rewarded, punished = (int(d) for d in self.np_random.choice(10, size=2, replace=False))
        self.rewarded_digit, self.punished_digit = rewarded, punished
        self._place()
        return self.observation(), self._info()

    def step(self, action):
        """Choose left (0) or right (1). Returns ``(obs, reward, terminated, truncated, info)``."""
        if self.rewarded_digit is None:
            raise RuntimeError("Call env.reset() before env.step(action): it draws the two digits of a task.")
        action = _check_action(action)
        correct = action == self.rewarded_side
        info = {**self._info(), "correct": correct, "rewarded_side": self.rewarded_side}
        self._place()
        return self.observation(), self.reward if correct else self.punishment, False, False, info

    def observation(self) -> np.ndarray:
        """The digits shown as float32 (2,): left, right."""
        pair = (self.rewarded_digit, self.punished_digit)
        return np.asarray(pair if self.rewarded_side == 0 else pair[::-1], dtype=np.float32)

    def _place(self) -> None:
        self.rewarded_side = int(self.np_random.random() < 0.5)

    def _info(self) -> dict:
        return {"rewarded_digit": self.rewarded_digit, "punished_digit": self.punished_digit}


def run_dummy_agent(env: HarlowExperimentEnv, num_trials: int = 100, seed: int | None = None) -> list[float]:
    """Win-stay lose-shift on sides: keep the side that just paid, switch after a -1.

    It never looks at the digits. Starts on the left. Returns the cumulative reward before
    the first trial (0) and after each trial: a list of ``num_trials + 1`` numbers.
    """
    env.reset(seed=seed)
    action, total, totals = 0, 0.0, [0.0]
    for _ in range(num_trials):
        _, reward, _, _, _ = env.step(action)
        total += reward
        totals.append(total)
        if reward < 0:
            action = 1 - action
    return totals


# --------------------------------------------------------------------------------------
# Agent


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


def discounted_returns(rewards: list[float], gamma: float) -> torch.Tensor:
    """Q_t = r_t + gamma * Q_{t+1}, with Q_T = 0, for T rewards; float32 (T,)."""
    returns, running = torch.zeros(len(rewards)), 0.0
    for t in reversed(range(len(rewards))):
        running = rewards[t] + gamma * running
        returns[t] = running
    return returns


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
        advantage = discounted_returns(rewards, agent.gamma) - torch.stack(values)
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


# --------------------------------------------------------------------------------------
# The genetic algorithm, one agent at a time (the notebook's version; reference solutions)


def evaluate_individual(
    env: HarlowExperimentEnv,
    agent: ActorCritic,
    optimizer_func=torch.optim.RMSprop,
    num_tasks: int = 10,
    num_gradient_steps: int = 25,
    num_trials: int = 6,
    num_evaluation_trials: int = 20,
) -> tuple[float, list[float]]:
    """Baldwinian fitness: train a fresh copy of ``agent`` on each of ``num_tasks`` new tasks
    and score it there. ``agent`` itself never changes. Returns (total score, list of the
    ``num_tasks`` scores); the total is at most ``num_tasks * num_evaluation_trials``."""
    scores = []
    for _ in range(num_tasks):
        learner = copy.deepcopy(agent)
        scores.append(train_evaluate_agent(env, learner, optimizer_func, num_gradient_steps, num_trials, num_evaluation_trials))
    return float(np.sum(scores)), scores


def mutate_hyperparameters(child: ActorCritic, agent1: ActorCritic, agent2: ActorCritic) -> None:
    """Set each of ``child``'s hyperparameters: taken from ``agent1`` or ``agent2`` with
    probability 1/2 each, plus Gaussian noise, then clamped to its own range
    (``HYPER_MUTATION``). Uses Python's ``random`` and NumPy's global generator."""
    for name, (noise, low, high) in HYPER_MUTATION.items():
        value = getattr(agent2 if random.random() < 0.5 else agent1, name)
        value += np.random.normal() * noise
        setattr(child, name, min(max(value, low), high))


def create_new_agent(agent1: ActorCritic, agent2: ActorCritic) -> ActorCritic:
    """An offspring of two parents: for each layer (embedding, LSTM, critic, actor) take
    the weights of one parent at random (crossing over), add Gaussian noise of standard
    deviation ``PARAMETER_NOISE`` to every weight (mutation), then inherit and mutate the
    hyperparameters (``mutate_hyperparameters``). The parents are not changed."""
    child = copy.deepcopy(agent1)
    with torch.no_grad():
        for name, module in child.named_children():
            donor = getattr(agent2 if random.random() < 0.5 else agent1, name)
            for (_, p), (_, q) in zip(module.named_parameters(), donor.named_parameters(), strict=True):
                p.copy_(q + torch.randn_like(q) * PARAMETER_NOISE)
    mutate_hyperparameters(child, agent1, agent2)
    return child


def create_initial_population(env, optimizer_func=torch.optim.RMSprop, population_size: int = 50, **evaluation):
    """``population_size`` fresh agents with their scores: (list of (agent, score), best score)."""
    population = []
    for _ in range(population_size):
        agent = ActorCritic()
        population.append((agent, evaluate_individual(env, agent, optimizer_func, **evaluation)[0]))
    return population, max(score for _, score in population)


def select_parents(population, tournament_size: int = 20, parents_size: int = 4) -> list:
    """Truncation selection: the ``tournament_size`` best individuals, then ``parents_size``
    of them drawn at random (with replacement, Python's ``random``)."""
    ranked = sorted(population, key=lambda individual: individual[1], reverse=True)
    return random.choices(ranked[:tournament_size], k=parents_size)


def update_population(
    env, optimizer_func, population, parents_population, best_score, new_generation_new_individuals: int = 5, **evaluation
):
    """One generation: ``new_generation_new_individuals`` offspring, each of two parents
    drawn at random from ``parents_population``, are scored with ``evaluate_individual``;
    as many random old individuals are removed; returns (new population, best score).
    The population keeps its size. ``evaluation`` is passed to ``evaluate_individual``."""
    newcomers = []
    for _ in range(new_generation_new_individuals):
        (agent1, _), (agent2, _) = random.choices(parents_population, k=2)
        child = create_new_agent(agent1, agent2)
        score, _ = evaluate_individual(env, child, optimizer_func, **evaluation)
        best_score = max(best_score, score)
        newcomers.append((child, score))
    survivors = list(population)
    for _ in range(new_generation_new_individuals):
        survivors.pop(random.randrange(len(survivors)))
    return survivors + newcomers, best_score


# --------------------------------------------------------------------------------------
# The evolved agent, its history, and the training command


def train_and_register(progress: bool = True, seed: int = 0) -> dict:
    """``course train harlow``: the full evolution (50 agents, then 800 generations of 5),
    batched; saves the evolved agent's checkpoint and the per-generation history."""
    import time

    from course_utils import checkpoints
    from course_utils.harlow_batch import evolve

    wall, cpu = time.perf_counter(), time.process_time()
    result = evolve(seed=seed, progress=progress)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    entry = checkpoints.save_checkpoint(agent_state(result["agent"]), CHECKPOINT, "course train harlow")
    history = {k: v for k, v in result.items() if k != "agent"}
    history["wall_seconds"], history["cpu_seconds"] = round(wall, 1), round(cpu, 1)
    HISTORY.write_text(json.dumps(history, indent=1) + "\n")
    print(f"{CHECKPOINT}: {entry['file']} {entry['size']} bytes sha256 {entry['sha256'][:12]}...")
    print(f"history: {HISTORY}")
    print(f"evolved in {wall:.1f} s wall, {cpu:.1f} s CPU; hyperparameters {result['agent'].hyperparameters()}")
    return history


def load_evolved_agent() -> ActorCritic:
    """The agent evolved by ``course train harlow``, from the checkpoint registry."""
    from course_utils.checkpoints import load_checkpoint

    return agent_from_state(load_checkpoint(CHECKPOINT))


def newbie_vs_evolved(num_tasks: int = 50, seed: int = 0) -> dict[str, np.ndarray]:
    """Scores (num_tasks,) of a newbie (fresh weights from ``seed``, default hyperparameters)
    and of the evolved agent on the same ``num_tasks`` new tasks (batched evaluation)."""
    from course_utils.harlow_batch import compare_agents

    torch.manual_seed(seed)
    return compare_agents({"newbie": ActorCritic(), "evolved": load_evolved_agent()}, num_tasks=num_tasks, seed=seed)


def load_history() -> dict:
    """The saved evolution: ``generation``, ``mean``, ``best`` lists and the settings used."""
    return json.loads(HISTORY.read_text())


# --------------------------------------------------------------------------------------
# Plots


def plot_cumulative_rewards(totals, title: str = "Win-stay lose-shift", ax=None):
    """Cumulative reward after each trial (trial 0 is before the first choice)."""
    ax = ax or plt.subplots()[1]
    ax.plot(np.arange(len(totals)), totals)
    ax.axhline(0, color="0.5", linestyle=":", linewidth=1)
    ax.set(title=title, xlabel="trial", ylabel="cumulative reward")
    return ax


def plot_scores(scores: dict[str, list[float]], title: str = "Score per task", ax=None, max_score: float = 20):
    """Box plots of per-task scores, one box per named agent (scores -max_score..max_score)."""
    ax = ax or plt.subplots(figsize=(max(3.5, 2.2 * len(scores)), 4))[1]
    ax.boxplot(list(scores.values()), tick_labels=list(scores))
    ax.axhline(0, color="0.5", linestyle=":", linewidth=1, label="chance")
    ax.set(title=title, ylabel="score on a task", ylim=(-max_score - 1, max_score + 1))
    return ax


def plot_evolution(history: dict, ax=None, live: dict | None = None):
    """Mean and best population score per generation (a saved history from ``load_history``)."""
    ax = ax or plt.subplots(figsize=(8, 4))[1]
    ax.plot(history["generation"], history["mean"], label="population mean")
    ax.plot(history["generation"], history["best"], label="population best", alpha=0.8)
    if live:
        ax.scatter(live["generation"], live["mean"], color="C3", zorder=3, label="your generation (mean)")
    ax.set(title="Evolution of the population", xlabel="generation", ylabel=f"score over {history['num_tasks']} tasks")
    ax.legend(loc="lower right")
    return ax


@dataclass
class TrialAccuracy:
    """Accuracy (0-1) by trial number within a problem (trial 1 first), and how many
    problems each value averages."""

    accuracy: np.ndarray
    counts: np.ndarray


def accuracy_by_trial(trials, correct) -> TrialAccuracy:
    """Group per-attempt correctness by trial number within the problem (1-based)."""
    trials, correct = np.asarray(trials, dtype=int), np.asarray(correct, dtype=float)
    n = int(trials.max()) if trials.size else 0
    counts = np.array([(trials == t).sum() for t in range(1, n + 1)])
    accuracy = np.array([correct[trials == t].mean() if c else np.nan for t, c in zip(range(1, n + 1), counts, strict=True)])
    return TrialAccuracy(accuracy, counts)


def agent_accuracy_by_trial(
    agent: ActorCritic, num_problems: int = 200, num_gradient_steps: int = 25, num_evaluation_trials: int = 20, seed: int = 0
) -> TrialAccuracy:
    """How often ``agent`` picks the rewarded digit on each trial of a new problem, from its
    first trial on: ``num_gradient_steps`` gradient steps of 6 trials (it learns after each
    6), then the evaluation trials, averaged over ``num_problems`` problems (batched)."""
    from course_utils.harlow_batch import stack_agents, train_evaluate_pairs

    params, hypers = stack_agents([agent])
    params = {name: p.expand(num_problems, *p.shape[1:]) for name, p in params.items()}
    hypers = np.repeat(hypers, num_problems, axis=0)
    _, correct = train_evaluate_pairs(
        params,
        hypers,
        np.random.default_rng(seed),
        num_gradient_steps=num_gradient_steps,
        num_evaluation_trials=num_evaluation_trials,
    )
    return TrialAccuracy(correct.mean(0), np.full(correct.shape[1], num_problems))


HARLOW_MONKEYS_TRIAL2 = (0.82, 0.87)
"""Harlow's monkeys chose right on trial 2 of a new problem in about 82-87% of problems,
after 100-200 problems of experience (Harlow, 1949)."""


def plot_you_vs_agents(curves: dict[str, TrialAccuracy], title: str = "Choosing right on a new problem", ax=None):
    """Accuracy by trial number within a problem for each named player (you, agents), on a
    log scale of trials (an agent's curve runs through its training trials).

    Trial 1 of a problem is a coin flip for anyone: the line at 0.5 is chance. A player who
    has learned the structure of the task is right from trial 2 on; the band marks Harlow's
    experienced monkeys on trial 2.
    """
    ax = ax or plt.subplots(figsize=(8, 4.5))[1]
    for name, curve in curves.items():
        x = np.arange(1, len(curve.accuracy) + 1)
        ax.plot(x, curve.accuracy, marker="o" if len(x) <= 12 else None, label=name)
    ax.axhline(0.5, color="0.5", linestyle=":", linewidth=1, label="chance")
    low, high = HARLOW_MONKEYS_TRIAL2
    ax.errorbar(
        [2], [(low + high) / 2], yerr=[[(high - low) / 2]], fmt="s", color="0.3", capsize=4, label="Harlow's monkeys, trial 2"
    )
    longest = max(len(curve.accuracy) for curve in curves.values())
    if longest > 150:
        ax.axvline(150.5, color="0.6", linestyle="--", linewidth=1)
        ax.text(145, 1.02, "agents: evaluation trials from here", ha="right", va="top", fontsize=8, color="0.4")
    ax.set_xscale("log")
    ticks = [t for t in (1, 2, 3, 6, 10, 20, 50, 100, 150) if t <= max(longest, 2)]
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.minorticks_off()
    ax.set(title=title, xlabel="trial within a problem (log scale)", ylabel="chose the rewarded symbol", ylim=(0, 1.05))
    ax.legend(loc="lower right", fontsize=9)
    return ax
