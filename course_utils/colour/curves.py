"""Tutorial 2's experiments on mode 2: learning curves with and without replay, and the ablation
that replays without the importance ratio.

Each run starts from the same agent trained on mode 1 (and a copy of the same memory of its
mode-1 experiences), trains on mode 2, and every ``eval_every`` gradient steps measures the
agent on both modes with a separate environment, so the measurements do not disturb training.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import numpy as np
import torch

from course_utils.colour.agent import ActorCritic
from course_utils.colour.env import ColourEnv
from course_utils.colour.training import accuracy, evaluate_agent, pair_accuracy, train_agent

RUNS = {
    "no replay": {"replay": False, "importance_ratio": True},
    "replay": {"replay": True, "importance_ratio": True},
    "replay without the importance ratio": {"replay": True, "importance_ratio": False},
}
"""The three ways of training on mode 2 that the tutorial compares, by name."""


@dataclass
class LearningCurve:
    """Measurements taken while training on mode 2, one entry per measurement.

    steps: mode-2 gradient steps done so far (with replay, each was followed by one replayed step);
    mode1, mode2: fraction of trials (0 to 1) where the better colour was chosen on that mode;
    green_blue: the same on mode 2's green/blue pairs only (the pair mode 2 teaches);
    right: fraction of choices that went to the right-hand colour, over both modes
    (0.5 for an agent that looks at the colours; near 0 or 1 when it collapses to one side).
    """

    name: str
    steps: list[int] = field(default_factory=list)
    mode1: list[float] = field(default_factory=list)
    mode2: list[float] = field(default_factory=list)
    green_blue: list[float] = field(default_factory=list)
    right: list[float] = field(default_factory=list)

    def measure(self, step: int, agent: ActorCritic, num_trials: int, seed: int) -> None:
        """Add one measurement of ``agent`` at ``step``: ``num_trials`` trials on each mode."""
        env = ColourEnv()
        on1 = evaluate_agent(env, agent, mode=1, num_trials=num_trials, rng=seed)
        on2 = evaluate_agent(env, agent, mode=2, num_trials=num_trials, rng=seed + 1)
        self.steps.append(step)
        self.mode1.append(accuracy(on1))
        self.mode2.append(accuracy(on2))
        self.green_blue.append(pair_accuracy(on2).get("green/blue", float("nan")))
        self.right.append(float(np.concatenate([on1.actions, on2.actions]).mean()))

    def steps_to_reach(self, level: float, of: str = "mode2") -> int | None:
        """The first measured step at which ``of`` ("mode1", "mode2", "green_blue") reached
        ``level`` (0 to 1), or None if it never did."""
        values = getattr(self, of)
        return next((step for step, value in zip(self.steps, values, strict=True) if value >= level), None)

    def side_bias(self) -> float:
        """How far the last measurement's choices lean to one side: |right - 0.5| * 2, from 0
        (as often left as right) to 1 (always the same side)."""
        return abs(self.right[-1] - 0.5) * 2


def logit_gap(agent: ActorCritic, experiences) -> float:
    """Median over the trials of ``experiences`` (e.g. a memory's slots; None entries skipped) of
    |logit(right) - logit(left)|, the actor's two logits apart: a few units for an agent that is
    sure of its choices, hundreds when the logits have run away."""
    inputs = torch.cat([e.inputs for e in experiences if e is not None])
    with torch.no_grad():
        _, logits = agent(inputs)
    return float((logits[:, 1] - logits[:, 0]).abs().median())


def train_on_mode2(
    mode1_agent: ActorCritic,
    memory=None,
    *,
    name: str,
    num_gradient_steps: int,
    eval_every: int,
    eval_trials: int,
    importance_ratio: bool = True,
    actor_loss_fn,
    rng: int = 11,
    progress: bool = True,
) -> tuple[ActorCritic, LearningCurve]:
    """Train a copy of ``mode1_agent`` on mode 2 and return it with its learning curve.

    memory: a replay memory of mode-1 experiences to read from (a copy is read, so the same
    memory can serve several runs), or None to train without replay.
    eval_every: gradient steps between measurements (one more is taken before training);
    eval_trials: trials per mode per measurement. ``rng`` seeds training and measurements.
    ``actor_loss_fn``: the student's ``replay_actor_loss``, as in ``train_agent``.
    """
    if eval_every < 1 or eval_trials < 1:
        raise ValueError(f"eval_every and eval_trials must be at least 1, got {eval_every} and {eval_trials}.")
    agent = copy.deepcopy(mode1_agent)
    curve = LearningCurve(name)
    curve.measure(0, agent, eval_trials, seed=rng * 1000)

    def after_step(step, agent):
        if step % eval_every == 0 or step == num_gradient_steps:
            curve.measure(step, agent, eval_trials, seed=rng * 1000 + step)

    replay = copy.deepcopy(memory) if memory is not None else None
    train_agent(ColourEnv(), agent, mode=2, num_gradient_steps=num_gradient_steps, replay=replay,
                replay_mode="read" if replay is not None else None, rng=rng, progress=progress,
                importance_ratio=importance_ratio, after_step=after_step,
                actor_loss_fn=actor_loss_fn)
    return agent, curve


def compare_on_mode2(mode1_agent: ActorCritic, memory, **kwargs) -> tuple[dict[str, ActorCritic],
                                                                          dict[str, LearningCurve]]:
    """The three runs of ``RUNS`` from the same mode-1 agent and memory: the trained agents and
    their learning curves, both by name. ``kwargs`` go to ``train_on_mode2`` (sizes,
    ``actor_loss_fn``, ``rng``, ``progress``)."""
    agents, curves = {}, {}
    for name, how in RUNS.items():
        agents[name], curves[name] = train_on_mode2(mode1_agent, memory if how["replay"] else None, name=name,
                                                    importance_ratio=how["importance_ratio"], **kwargs)
    return agents, curves


def plot_learning_curves(curves: dict[str, LearningCurve], axes=None):
    """Accuracy on mode 2 (left) and on mode 1 (right) against mode-2 gradient steps, one line per
    run, with chance (0.5) dashed. Returns the two axes."""
    import matplotlib.pyplot as plt

    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(12, 4), sharey=True)
    for ax, of, title in zip(axes, ("mode2", "mode1"), ("Mode 2 (being trained)", "Mode 1 (not trained any more)"),
                             strict=True):
        for curve in curves.values():
            ax.plot(curve.steps, getattr(curve, of), marker=".", label=curve.name)
        ax.axhline(0.5, color="grey", linestyle="--", linewidth=1, label="chance")
        ax.set(title=title, xlabel="mode-2 gradient steps", ylim=(0.3, 1.02))
    axes[0].set_ylabel("better colour chosen (fraction of trials)")
    axes[0].legend(loc="lower left")
    return axes
