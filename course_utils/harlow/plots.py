"""Tutorial 1's plots and the accuracy-by-trial measure they show (you, the newbie, the
evolved agent and Harlow's monkeys on the same axes)."""

from __future__ import annotations

from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np


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
    """Mean and best population score per generation, per task (of 20), of a saved history
    (``load_history``); ``live``: a run made in the notebook (an ``evolve`` result, or a dict of
    ``generation`` and ``mean`` lists over ``num_tasks`` tasks), drawn on the same axes."""
    ax = ax or plt.subplots(figsize=(8, 4))[1]
    n = history["num_tasks"]
    ax.plot(history["generation"], np.asarray(history["mean"]) / n, label="saved run: population mean")
    ax.plot(history["generation"], np.asarray(history["best"]) / n, label="saved run: population best", alpha=0.8)
    if live:
        style = {"marker": "o"} if len(live["generation"]) < 3 else {}
        ax.plot(live["generation"], np.asarray(live["mean"]) / live.get("num_tasks", n), color="C3", zorder=3,
                label="the run above: population mean", **style)
    ax.set(title="Evolution of the population", xlabel="generation", ylabel="score per task (of 20)", ylim=(0, 20))
    ax.legend(loc="lower right")
    return ax


HYPERPARAMETER_LABELS = {
    "learning_rate": "learning rate",
    "gamma": "discount factor $\\gamma$",
    "value_cost": "value cost",
    "entropy_cost": "entropy cost",
}


def plot_hyperparameters(history: dict, defaults: dict[str, float]):
    """The population's mean of each hyperparameter, generation by generation (a saved history),
    against the newbie's value (``defaults``), and the evolved agent's value at the end."""
    fig, axes = plt.subplots(1, 4, figsize=(12, 3.2))
    last = history["generation"][-1]
    for ax, (name, label) in zip(axes, HYPERPARAMETER_LABELS.items(), strict=True):
        ax.plot(history["generation"], history[f"mean_{name}"], label="population mean")
        ax.axhline(defaults[name], color="0.5", linestyle="--", linewidth=1, label="newbie")
        ax.plot([last], [history["best_hyperparameters"][name]], "o", color="C3", label="evolved agent")
        ax.set(title=label, xlabel="generation")
    axes[0].legend(fontsize=8)
    fig.suptitle("Hyperparameters over the saved evolution")
    fig.tight_layout()
    return axes


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
