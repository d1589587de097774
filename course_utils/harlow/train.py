"""Tutorial 1's evolved agent: ``course train harlow`` (the full batched evolution), the
checkpoint and the history it writes, and the scored first population of the notebook."""

from __future__ import annotations

import json
import time

import numpy as np
import torch

from course_utils import checkpoints
from course_utils.harlow.agent import ActorCritic, agent_from_state, agent_state
from course_utils.harlow.batch import (
    evaluate_population,
    evolve,
    initial_population,
    unstack_agent,
)
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


def load_history() -> dict:
    """The saved evolution: ``generation``, ``mean``, ``best`` lists and the settings used."""
    return json.loads(HISTORY.read_text())


def scored_population(size: int = 50, num_tasks: int = 10, seed: int = 0) -> list[tuple[ActorCritic, float]]:
    """A fresh population in the notebook's form: a list of (agent, total score over ``num_tasks``
    tasks), scored with the batched evaluation (each agent learns each task afresh, like
    ``evaluate_individual``)."""
    generator = torch.Generator().manual_seed(seed)
    params, hypers = initial_population(size, generator)
    totals = evaluate_population(params, hypers, np.random.default_rng(seed), num_tasks).sum(1)
    return [(unstack_agent(params, hypers, i), float(totals[i])) for i in range(size)]
