"""``course train harlow``: tutorial 1's full batched evolution, the evolved agent's checkpoint and
the history it writes (read back by ``course_utils.harlow.pretrained``); ``course train
harlow-runs``: the runs of the notebook's size it shows until the student's code passes its checks."""

from __future__ import annotations

import json
import time

import numpy as np

from course_admin.harlow.batch import compare_agents, evolve
from course_utils import checkpoints
from course_utils.harlow.agent import agent_state, make_newbie
from course_utils.harlow.pretrained import CHECKPOINT, HISTORY, RUNS
from course_utils.harlow.sizes import SIZES


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


RUN_KEYS = ("generation", "mean", "best", "mean_learning_rate", "mean_gamma", "mean_value_cost", "mean_entropy_cost",
            "num_tasks", "settings")
"""What a stored run keeps of ``evolve``'s result: what the notebook's live runs return."""


def stored_runs(generations: int | None = None) -> dict:
    """The course's runs of the notebook's live size (seed 1, as the notebook's cells), with its
    own operators: a Baldwinian and a Lamarckian evolution, and the newbie's scores on 10 tasks."""
    generations = generations or SIZES.full("live_generations")
    runs = {}
    for inheritance in ("baldwinian", "lamarckian"):
        start = time.perf_counter()
        result = evolve(seed=1, generations=generations, inheritance=inheritance, progress=False,
                        final_candidates=1, final_tasks=1)
        runs[inheritance] = {k: result[k] for k in RUN_KEYS}
        runs[inheritance]["seconds"] = round(time.perf_counter() - start, 1)
    newbie = compare_agents({"newbie": make_newbie(seed=42)}, num_tasks=10, seed=42)["newbie"]
    runs["newbie_scores"] = [float(score) for score in np.asarray(newbie)]
    return runs


def write_stored_runs(progress: bool = True) -> dict:
    """``course train harlow-runs``: write ``stored_runs()`` to ``assets/harlow_runs.json``."""
    runs = stored_runs()
    RUNS.write_text(json.dumps(runs, indent=1) + "\n")
    if progress:
        print(f"stored runs: {RUNS} (Baldwinian {runs['baldwinian']['seconds']} s, Lamarckian "
              f"{runs['lamarckian']['seconds']} s)")
    return runs
