"""``course bench lunar``: environment steps per second of the course's collection (many
LunarLanders, batched forwards, worker processes) against one environment at a time."""

from __future__ import annotations

import time

import numpy as np
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


ZOO_PPO = dict(n_steps=1024, batch_size=64, n_epochs=4, gamma=0.999, gae_lambda=0.98, ent_coef=0.01)
"""rl-baselines3-zoo's PPO hyperparameters for LunarLander (16 environments, MlpPolicy: 64-64
tanh policy and value networks, learning rate 3e-4); the zoo reports 242 +- 32 at 1M steps."""
SB3_INSTALL = "pip install 'stable-baselines3==2.9.2'"


class _SB3Logits(torch.nn.Module):
    """An SB3 policy as a network ``aac.evaluate`` can play: observations (N, 8) -> logits (N, 4)."""

    time_feature = False

    def __init__(self, policy):
        super().__init__()
        self.sb3_policy = policy

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.sb3_policy.get_distribution(obs).distribution.logits


def sb3_until_solved(max_steps: int = 2_000_000, seed: int = 0, schedule=None) -> dict:
    """Stable-Baselines3 PPO with the zoo's LunarLander hyperparameters on the course's
    environment, evaluated on the course's schedule (``solve.Schedule``: the same seeds, bar and
    evaluation steps) until it passes the bar. Returns the same figures as ``train_until_solved``.
    """
    import time

    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env

    from course_utils.lunar.aac import evaluate
    from course_utils.lunar.env import EVAL_SEEDS
    from course_utils.lunar.solve import Schedule

    schedule = schedule or Schedule()
    t0, c0 = time.perf_counter(), time.process_time()
    env = make_vec_env(lambda: make_env(), n_envs=16, seed=seed)
    model = PPO("MlpPolicy", env, seed=seed, device="cpu", verbose=0, **ZOO_PPO)

    class Evaluate(BaseCallback):
        def _on_rollout_start(self) -> None:  # after each update, before the next rollout
            buffer = self.model.ep_info_buffer
            recent = float(np.mean([info["r"] for info in buffer])) if buffer else -np.inf
            if self.num_timesteps and schedule.due(self.num_timesteps, recent):
                e0, ec0 = time.perf_counter(), time.process_time()
                returns = evaluate(_SB3Logits(self.model.policy).eval(), EVAL_SEEDS)
                schedule.record(self.num_timesteps, returns, time.perf_counter() - t0, time.process_time() - c0,
                                time.perf_counter() - e0, time.process_time() - ec0)

        def _on_step(self) -> bool:
            return not schedule.solved

    model.learn(total_timesteps=max_steps, callback=Evaluate())
    env.close()
    return {
        "solved": schedule.solved,
        "steps": int(model.num_timesteps),
        "wall_s": round(time.perf_counter() - t0, 2),
        "cpu_s": round(time.process_time() - c0, 2),
        "eval_wall_s": round(schedule.eval_wall_s, 2),
        "eval_cpu_s": round(schedule.eval_cpu_s, 2),
        "final": schedule.evaluations[-1] if schedule.evaluations else None,
        "evaluations": schedule.evaluations,
    }


def bench_lunar_solve(max_steps: int = 2_000_000, sb3: bool = True) -> dict:
    """``course bench lunar-solve``: wall-clock and steps until the lander passes the bar
    (``solve.BAR``: mean - std of the greedy return over the 100 evaluation seeds >= 200),
    for the course's trainer and for Stable-Baselines3 PPO with the zoo's hyperparameters,
    one after the other in this run, evaluated on the same schedule. CPU time (every process)
    beside wall-clock. Without stable-baselines3 installed, the course side runs alone and the
    result says how to install it."""
    import os

    from course_utils.lunar.solve import BAR, EVAL_EVERY, SCREEN, train_until_solved

    _, course = train_until_solved(progress=False)  # its own budget: aac.DEFAULT_AAC["total_steps"]
    course.pop("curve")
    out = {"benchmark": "lunar-solve", "bar": f"mean - std of 100 greedy episodes >= {BAR:g}",
           "eval_every_steps": EVAL_EVERY, "screen_training_mean": SCREEN, "cores": os.cpu_count(), "course": course}
    if sb3:
        try:
            import stable_baselines3

            out["sb3_version"] = stable_baselines3.__version__
        except ImportError:
            out["sb3"] = f"not installed: {SB3_INSTALL} (it installs beside this course's torch and gymnasium)"
            return out
        out["sb3"] = sb3_until_solved(max_steps=max_steps)
        if out["sb3"]["solved"] and course["solved"]:
            out["speedup_wall"] = round(out["sb3"]["wall_s"] / course["wall_s"], 2)
            out["speedup_cpu"] = round(out["sb3"]["cpu_s"] / course["cpu_s"], 2)
            out["target_speedup"] = 4.0
    return out
