"""``course bench lunar``: environment steps per second of the course's collection (many
LunarLanders, batched forwards, worker processes) against one environment at a time."""

from __future__ import annotations

import time

import torch

from course_utils.lunar.env import make_env
from course_utils.lunar.rollouts import RolloutCollector
from course_utils.lunar.solutions import PolicyAgent, PolicyNet


def bench_lunar(
    num_envs: int = 32, steps: int = 40_000, single_steps: int = 10_000, hidden_layers=(512, 256), rounds: int = 5
) -> dict:
    """Environment steps per second of the course's collection against the reference's way,
    measured in the same run with the same policy network.

    * ``vector``: ``num_envs`` environments in 2 shards, each stepped by its own worker
      process with one batched policy forward per step (``rollouts.RolloutCollector``,
      what ``course train lunar`` uses), rollouts of ``steps / rounds / num_envs`` steps;
    * ``vector_one_process``: the same shards played one after the other in this process
      (``workers=1``): the gain from batching alone;
    * ``single``: one ``gym.make`` environment with one forward per step (``PolicyAgent.step``).

    The policy is a ``PolicyNet`` with the reference assignment's hidden layers (512, 256).
    ``steps`` and ``single_steps`` count environment steps, split into ``rounds`` that
    alternate between the ways, so that all see the same load on a shared machine. Rates use
    wall time; worker start-up is excluded (one short warm-up rollout). ``cores_used`` is the
    CPU time of every process involved divided by the wall time.
    """
    torch.manual_seed(0)
    net = PolicyNet(8, 4, tuple(hidden_layers))
    spec = (PolicyNet, dict(in_features=8, out_actions=4, hidden_layers=tuple(hidden_layers)))
    seeds = list(range(num_envs))
    env = make_env()
    agent = PolicyAgent(env, net, seed=0)
    per_round = max(1, steps // rounds // num_envs)
    wall = {"vector": 0.0, "vector_one_process": 0.0, "single": 0.0}
    cpu = dict.fromkeys(wall, 0.0)

    parallel = RolloutCollector(seeds, spec, shards=2, workers=2)
    local = RolloutCollector(seeds, spec, shards=2, workers=1)
    with parallel, local:
        parallel.collect(net, 1)  # warm-up: worker processes started and importing done
        for _ in range(rounds):
            for name, collector in (("vector", parallel), ("vector_one_process", local)):
                t0, c0, w0 = time.perf_counter(), time.process_time(), collector.worker_cpu_s()
                collector.collect(net, per_round)
                wall[name] += time.perf_counter() - t0
                cpu[name] += time.process_time() - c0 + collector.worker_cpu_s() - w0  # workers: 0 in-process
            t0, c0 = time.perf_counter(), time.process_time()
            for _ in range(single_steps // rounds):
                agent.step()
            wall["single"] += time.perf_counter() - t0
            cpu["single"] += time.process_time() - c0
    env.close()
    counts = {"vector": rounds * per_round * num_envs, "single": rounds * (single_steps // rounds)}
    counts["vector_one_process"] = counts["vector"]
    rate = {name: counts[name] / wall[name] for name in wall}
    return {
        "benchmark": "lunar",
        "num_envs": num_envs,
        "shards": 2,
        "hidden_layers": list(hidden_layers),
        "vector_steps": counts["vector"],
        "vector_steps_per_s": round(rate["vector"], 1),
        "vector_one_process_steps_per_s": round(rate["vector_one_process"], 1),
        "single_steps": counts["single"],
        "single_steps_per_s": round(rate["single"], 1),
        "speedup": round(rate["vector"] / rate["single"], 2),
        "speedup_one_process": round(rate["vector_one_process"] / rate["single"], 2),
        "cores_used": {name: round(cpu[name] / wall[name], 2) for name in wall},
        "target_speedup": 2.5,
    }
