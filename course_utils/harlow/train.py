"""Tutorial 1's evolved agent: ``course train harlow`` (the full batched evolution), the
checkpoint and the history it writes, and the comparisons the notebook shows."""

from __future__ import annotations

import json
import time

import numpy as np
import torch

from course_utils import checkpoints
from course_utils.harlow.agent import NEWBIE_SEED, ActorCritic, agent_from_state, agent_state, make_newbie
from course_utils.harlow.batch import (
    compare_agents,
    evaluate_population,
    evolve,
    initial_population,
    stack_agents,
    train_evaluate_pairs,
    unstack_agent,
)
from course_utils.harlow.plots import TrialAccuracy
from course_utils.paths import ASSETS

HISTORY = ASSETS / "harlow_evolution.json"
CHECKPOINT = "harlow_evolved"


def train_and_register(progress: bool = True, seed: int = 0) -> dict:
    """``course train harlow``: the full evolution (50 agents, then 800 generations of 5),
    batched; saves the evolved agent's checkpoint and the per-generation history."""
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
    return agent_from_state(checkpoints.load_checkpoint(CHECKPOINT))


def newbie_vs_evolved(num_tasks: int = 50, seed: int = 0, newbie_seed: int = NEWBIE_SEED) -> dict[str, np.ndarray]:
    """Scores (num_tasks,) of the newbie (``make_newbie(newbie_seed)``) and of the evolved agent
    on the same ``num_tasks`` new tasks drawn from ``seed`` (batched evaluation)."""
    return compare_agents({"newbie": make_newbie(newbie_seed), "evolved": load_evolved_agent()}, num_tasks=num_tasks,
                          seed=seed)


def load_history() -> dict:
    """The saved evolution: ``generation``, ``mean``, ``best`` lists and the settings used."""
    return json.loads(HISTORY.read_text())


def agent_accuracy_by_trial(
    agent: ActorCritic, num_problems: int = 200, num_gradient_steps: int = 25, num_evaluation_trials: int = 20, seed: int = 0
) -> TrialAccuracy:
    """How often ``agent`` picks the rewarded digit on each trial of a new problem, from its
    first trial on: ``num_gradient_steps`` gradient steps of 6 trials (it learns after each
    6), then the evaluation trials, averaged over ``num_problems`` problems (batched)."""
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


def scored_population(size: int = 50, num_tasks: int = 10, seed: int = 0) -> list[tuple[ActorCritic, float]]:
    """A fresh population in the notebook's form: a list of (agent, total score over ``num_tasks``
    tasks), scored with the batched evaluation (each agent learns each task afresh, like
    ``evaluate_individual``)."""
    generator = torch.Generator().manual_seed(seed)
    params, hypers = initial_population(size, generator)
    totals = evaluate_population(params, hypers, np.random.default_rng(seed), num_tasks).sum(1)
    return [(unstack_agent(params, hypers, i), float(totals[i])) for i in range(size)]
