"""``course bench harlow``: the batched evolution against the notebook's one-agent loop."""

from __future__ import annotations

import time

import numpy as np
import torch

from course_admin.harlow.batch import _select, initial_population, unstack_agent
from course_admin.harlow.solutions import evaluate_individual
from course_utils.harlow.env import HarlowExperimentEnv
from course_utils.harlow.scoring import evaluate_population
from course_utils.runtime import seed_torch


def bench_harlow(slow_individuals: int = 2, num_tasks: int = 10, seed: int = 0) -> dict:
    """Seconds per evaluated individual (``num_tasks`` tasks x 25 gradient steps): a full generation
    of the batched path against the notebook's one-agent loop (``evaluate_individual``),
    measured in the same process, wall and process CPU time."""
    seed_torch(seed)
    rng = np.random.default_rng(seed)
    generator = torch.Generator().manual_seed(seed)
    params, hypers = initial_population(5, generator)
    evaluate_population(_select(params, [0]), hypers[:1], rng, 1, num_gradient_steps=2)  # warm-up

    wall, cpu = time.perf_counter(), time.process_time()
    evaluate_population(params, hypers, rng, num_tasks)
    fast_wall, fast_cpu = (time.perf_counter() - wall) / 5, (time.process_time() - cpu) / 5

    env = HarlowExperimentEnv()
    env.reset(seed=seed)
    agents = [unstack_agent(params, hypers, i) for i in range(slow_individuals)]
    evaluate_individual(env, unstack_agent(params, hypers, 0), torch.optim.RMSprop, num_tasks=1, num_gradient_steps=2)  # warm-up
    wall, cpu = time.perf_counter(), time.process_time()
    for agent in agents:
        evaluate_individual(env, agent, torch.optim.RMSprop, num_tasks=num_tasks)
    slow_wall = (time.perf_counter() - wall) / slow_individuals
    slow_cpu = (time.process_time() - cpu) / slow_individuals
    evolution_individuals = 50 + 800 * 5
    return {
        "benchmark": "harlow",
        "batched_s_per_individual": round(fast_wall, 4),
        "batched_cpu_s_per_individual": round(fast_cpu, 4),
        "one_agent_s_per_individual": round(slow_wall, 3),
        "one_agent_cpu_s_per_individual": round(slow_cpu, 3),
        "speedup": round(slow_wall / fast_wall, 1),
        "speedup_cpu": round(slow_cpu / fast_cpu, 1),
        "batched_generation_of_5_s": round(5 * fast_wall, 3),
        "full_evolution_estimate_min_batched": round(evolution_individuals * fast_wall / 60, 1),
        "full_evolution_estimate_min_one_agent": round(evolution_individuals * slow_wall / 60, 1),
        "num_tasks": num_tasks,
        "torch_threads": torch.get_num_threads(),
        "torch": torch.__version__,
    }
