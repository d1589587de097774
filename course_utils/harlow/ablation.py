"""What did evolution find? Agents learn the same new tasks from their own starting points:
the newbie, the evolved agent, and the two mixtures (evolved weights with the newbie's
hyperparameters, the newbie's weights with the evolved hyperparameters), plus the newbie with
only a bigger learning rate. One batched run scores them all on the same tasks, so every figure
of the notebook's Sections 4 and 5 comes from one sample.

Scores are per task, of 20 (the sum of the 20 evaluation rewards).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from course_utils.harlow.agent import DEFAULT_HYPERPARAMETERS, ActorCritic
from course_utils.harlow.plots import TrialAccuracy
from course_utils.harlow.scoring import stack_agents, train_evaluate_pairs

NUM_GRADIENT_STEPS, NUM_TRIALS, NUM_EVALUATION_TRIALS = 25, 6, 20


def with_hyperparameters(agent: ActorCritic, **hyperparameters: float) -> ActorCritic:
    """A copy of ``agent`` (same weights) with some hyperparameters replaced, e.g.
    ``with_hyperparameters(newbie, learning_rate=0.003)``."""
    unknown = set(hyperparameters) - set(DEFAULT_HYPERPARAMETERS)
    if unknown:
        raise ValueError(f"Unknown hyperparameters {sorted(unknown)}; known: {list(DEFAULT_HYPERPARAMETERS)}.")
    child = copy.deepcopy(agent)
    for name, value in hyperparameters.items():
        setattr(child, name, float(value))
    return child


LEARNING_RATES = (0.0015, 0.006, 0.01)
"""Learning rates the newbie also tries alone (its default is 0.00075; 0.01 is evolution's highest)."""


def ablation_agents(newbie: ActorCritic, evolved: ActorCritic, rates=LEARNING_RATES) -> dict[str, ActorCritic]:
    """The agents of the ablation, by name: the two pure cases, the two mixtures, and the newbie
    with only a bigger learning rate, the evolved one and each of ``rates`` (is it "just a
    bigger learning rate"?). Names of newbies with only another learning rate start with
    ``"newbie, learning rate"``."""
    agents = {
        "newbie": newbie,
        "newbie weights + evolved hyperparameters": with_hyperparameters(newbie, **evolved.hyperparameters()),
        "evolved weights + newbie hyperparameters": with_hyperparameters(evolved, **DEFAULT_HYPERPARAMETERS),
        "evolved": evolved,
    }
    for lr in sorted({*rates, evolved.learning_rate}):
        tag = " (the evolved one)" if lr == evolved.learning_rate else ""
        agents[f"newbie, learning rate {lr:.2g}{tag}"] = with_hyperparameters(newbie, learning_rate=lr)
    return agents


def learning_rate_only(results: dict[str, TaskResults]) -> tuple[str, TaskResults]:
    """The best newbie that differs from the newbie only by its learning rate: (name, results)."""
    return max(((n, r) for n, r in results.items() if n.startswith("newbie, learning rate")), key=lambda item: item[1].mean)


@dataclass
class TaskResults:
    """One agent on the shared tasks: ``scores`` (num_tasks,) per task (of 20) and ``correct``
    (num_tasks, 170) whether each trial chose the rewarded digit (150 training trials, then the
    20 evaluation trials)."""

    scores: np.ndarray
    correct: np.ndarray

    @property
    def mean(self) -> float:
        """Mean score per task (of 20)."""
        return float(self.scores.mean())

    @property
    def stderr(self) -> float:
        """Standard error of ``mean``."""
        return float(self.scores.std(ddof=1) / np.sqrt(len(self.scores)))

    def accuracy_by_trial(self) -> TrialAccuracy:
        """How often the agent chose the rewarded digit on each trial of a task (over the tasks)."""
        return TrialAccuracy(self.correct.mean(0), np.full(self.correct.shape[1], self.correct.shape[0]))


def same_tasks(agents: dict[str, ActorCritic], num_tasks: int = 200, seed: int = 0) -> dict[str, TaskResults]:
    """Every named agent learns the same ``num_tasks`` new tasks (digit pairs drawn from
    ``seed``), each task from the agent's own starting weights and hyperparameters (the
    notebook's ``train_evaluate_agent``, batched). One run for all agents: one sample."""
    if num_tasks < 2:
        raise ValueError(f"num_tasks must be at least 2 (a mean and its error), got {num_tasks!r}.")
    rng = np.random.default_rng(seed)
    rewarded = rng.integers(0, 10, num_tasks)
    punished = (rewarded + rng.integers(1, 10, num_tasks)) % 10
    params, hypers = stack_agents(list(agents.values()))
    n = len(agents)
    pair_params = {name: p.repeat_interleave(num_tasks, dim=0) for name, p in params.items()}
    scores, correct = train_evaluate_pairs(
        pair_params, np.repeat(hypers, num_tasks, axis=0), rng, num_gradient_steps=NUM_GRADIENT_STEPS,
        num_trials=NUM_TRIALS, num_evaluation_trials=NUM_EVALUATION_TRIALS,
        digits=(np.tile(rewarded, n), np.tile(punished, n)),
    )
    scores, correct = scores.reshape(n, num_tasks), correct.reshape(n, num_tasks, -1)
    return {name: TaskResults(scores[i], correct[i]) for i, name in enumerate(agents)}


def plot_ablation(results: dict[str, TaskResults], ax=None):
    """Mean score per task (of 20) of each named agent, with its standard error."""
    import matplotlib.pyplot as plt

    ax = ax or plt.subplots(figsize=(8, 0.5 * len(results) + 1.5))[1]
    names = list(results)
    y = np.arange(len(names))[::-1]
    colours = ["C1" if n.startswith("newbie, learning rate") else "C0" for n in names]
    ax.barh(y, [results[n].mean for n in names], xerr=[results[n].stderr for n in names], color=colours, capsize=3)
    ax.set_yticks(y, names)
    ax.set(title="What did evolution find? Every agent learns the same new tasks",
           xlabel="mean score per task (of 20)", xlim=(0, 20))
    return ax
