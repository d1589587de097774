"""Tutorial 3's benchmarks, each against its baseline in the same run: ``course bench lunar``
(environment steps per second of the course's collection against one environment at a time),
``lunar-solve`` (the course's lander against Stable-Baselines3 PPO, to the bar),
``lunar-student`` (the student's actor-critic to the bar, against the run before issue 17),
``lunar-experiments`` (the five experiments with three seeds each, against one seed each the
way before) and ``lunar-seeds`` (one experiment's three seeds, before issue 31 and now)."""

from __future__ import annotations

import time

import numpy as np
import torch

from course_admin.lunar.rollouts import AACRolloutCollector
from course_admin.lunar.solutions import PolicyAgent, PolicyNet
from course_utils.lunar.env import make_env
from course_utils.lunar.harness import VectorBatchDataset
from course_utils.runtime import positive_int, seed_torch


def _positive(name: str, value, kind=int, optional: bool = False) -> None:
    """Refuse a size that is not a positive ``kind`` at once, with what to pass instead (a
    benchmark started with a wrong argument would otherwise train for minutes first)."""
    if optional and value is None:
        return
    if kind is int:
        positive_int(name, value, TypeError)
        return
    number = isinstance(value, kind) or (kind is float and isinstance(value, int))
    if not number or isinstance(value, bool) or not value > 0:
        raise TypeError(f"{name} must be a positive number, got {value!r}.")


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
    for name, value in (("num_envs", num_envs), ("steps", steps), ("single_steps", single_steps), ("rounds", rounds)):
        _positive(name, value)
    seed_torch(0)
    net = PolicyNet(8, 4, tuple(hidden_layers))
    spec = (PolicyNet, dict(in_features=8, out_actions=4, hidden_layers=tuple(hidden_layers)))
    seeds = list(range(num_envs))
    env = make_env()
    agent = PolicyAgent(env, net, seed=0)
    per_round = max(1, steps // rounds // num_envs)
    wall = {"vector": 0.0, "vector_one_process": 0.0, "single": 0.0}
    cpu = dict.fromkeys(wall, 0.0)

    parallel = AACRolloutCollector(seeds, spec, shards=2, workers=2)
    local = AACRolloutCollector(seeds, spec, shards=2, workers=1)
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


def bench_lunar_step(episodes: int = 96, rounds: int = 3) -> dict:
    """``course bench lunar-step``: tutorial 3's shard stepping its landers in C
    (``lander_step.play_step``) against the same shard stepping them in Python
    (``lander_step.python_play_step``), in one run: ``episodes`` episodes of 8 landers at a time
    played by the course's trained lander (sampled actions: landings, and hovers to the step
    limit, as late in a training run), split into ``rounds`` that alternate between the ways, in
    one thread as in the worker processes. CPU microseconds per lander step beside wall-clock
    ones (policy, action draw and bookkeeping included); ``identical`` says whether both played
    the same episodes to the last bit."""
    from course_utils.lunar import lander_step
    from course_utils.lunar.evaluation import load_pretrained
    from course_utils.lunar.numpy_policy import one_blas_thread
    from course_utils.lunar.rollouts import Shard

    for name, value in (("episodes", episodes), ("rounds", rounds)):
        _positive(name, value)
    if lander_step.load() is None:
        return {"benchmark": "lunar-step", "c": None, "why_not": lander_step.why_not}
    torch.set_num_threads(1)
    one_blas_thread()
    net = load_pretrained()
    ways = {"c": lander_step.load().play_step, "python": lander_step.python_play_step}
    shards = {name: Shard(range(8), net, generator_seed=0) for name in ways}
    figures = {name: {"steps": 0, "wall_s": 0.0, "cpu_s": 0.0} for name in ways}
    played = {name: [] for name in ways}
    per_round = max(1, episodes // rounds // 8)
    for k in range(rounds * per_round):
        for name, shard in shards.items():
            shard.play_step = ways[name]
            t0, c0 = time.perf_counter(), time.process_time()
            episodes_played = shard.play_episodes(net.state_dict(), range(8 * k, 8 * k + 8))
            figures[name]["wall_s"] += time.perf_counter() - t0
            figures[name]["cpu_s"] += time.process_time() - c0
            figures[name]["steps"] += sum(len(rewards) for _, _, rewards in episodes_played)
            played[name].append(b"".join(array.tobytes() for episode in episodes_played for array in episode))
    for shard in shards.values():
        shard.close()
    out = {"benchmark": "lunar-step", "episodes": 8 * rounds * per_round}
    for name, f in figures.items():
        out[name] = {"steps": f["steps"], "us_per_step_wall": round(1e6 * f["wall_s"] / f["steps"], 1),
                     "us_per_step_cpu": round(1e6 * f["cpu_s"] / f["steps"], 1)}
    out["speedup_cpu"] = round(out["python"]["us_per_step_cpu"] / out["c"]["us_per_step_cpu"], 2)
    out["identical"] = played["c"] == played["python"]
    return out


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

    _positive("max_steps", max_steps)
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env

    from course_admin.lunar.aac import evaluate
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

    from course_admin.lunar.solve import train_until_solved
    from course_utils.lunar.solve import BAR, EVAL_EVERY, SCREEN

    _positive("max_steps", max_steps)
    if not isinstance(sb3, bool):
        raise TypeError(f"sb3 must be True or False, got {sb3!r}.")

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


# --------------------------------------------------------------------------------------------
# The notebook's long runs: the experiments with every seed, and the student's own AAC
# --------------------------------------------------------------------------------------------


def _clock() -> tuple[float, float]:
    """Wall-clock and CPU seconds of this process and of every child process it has waited for
    (the worker processes, once joined)."""
    import resource

    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    return time.perf_counter(), sum(u.ru_utime + u.ru_stime for u in usage)


def _since(start: tuple[float, float]) -> dict:
    wall, cpu = _clock()
    return {"wall_s": round(wall - start[0], 1), "cpu_s": round(cpu - start[1], 1)}


class InProcessDataset:
    """The benchmarks' baseline collection: every episode of a batch played one after the other in
    this process (``episodes.collect_episodes``), actions drawn from one torch generator; batches
    of the same shape and seeds as ``harness.VectorBatchDataset``, which plays them in worker
    processes."""

    def __init__(self, p_net, episode_batch_size, gamma, seed=0, *, batch_type, episode_type, workers=None):
        self.p_net, self.size, self.gamma, self.seed = p_net, episode_batch_size, gamma, seed
        self.batch_type, self.episode_type = batch_type, episode_type

    def __iter__(self):
        from course_admin.lunar.episodes import collect_episodes

        generator = torch.Generator().manual_seed(self.seed)
        k = 0
        while True:
            first = self.seed * 10**6 + k * self.size
            episodes = collect_episodes(self.p_net, range(first, first + self.size), generator, episode_type=self.episode_type)
            yield self.batch_type.from_episodes(episodes, self.gamma)
            k += 1


def bench_lunar_experiments(max_episodes: int | None = None) -> dict:
    """``course bench lunar-experiments``: Sections 6 and 7 of the notebook at full size with the
    reference classes, the course's way against the way before (issue 17, target 4: five
    experiments with three seeds each in at most 5 minutes), in one run:

    * ``course``: vpg, epg, bpg, cpg and aac with each of ``experiments.SEEDS``
      (``run_experiments``: runs side by side in worker processes, episodes in two shards each);
    * ``baseline``: the same five experiments with seed 0 only, one after the other in this
      process with the in-process collection (``InProcessDataset``).

    Both train into a temporary cache (nothing of the user's is reused or overwritten). CPU
    time counts every process, beside wall-clock; ``final_mean_reward`` per experiment is the
    mean over the seeds of each run's last mean reward.
    """
    import os
    import tempfile
    from pathlib import Path

    from course_admin.lunar.reference import EXPERIMENT_EPISODES, reference_experiments
    from course_utils.lunar import experiments

    _positive("max_episodes", max_episodes, optional=True)
    episodes = max_episodes or EXPERIMENT_EPISODES
    specs = reference_experiments()
    out = {"benchmark": "lunar-experiments", "episodes_per_run": episodes, "cores": os.cpu_count()}
    with tempfile.TemporaryDirectory() as cache:
        previous = os.environ.get("COURSE_CACHE")
        os.environ["COURSE_CACHE"] = cache
        try:
            start = _clock()
            results = experiments.run_experiments(specs, episodes, experiments.SEEDS, force=True, progress=False)
            out["course"] = {"runs": len(specs) * len(experiments.SEEDS), **_since(start),
                             "final_mean_reward": {n: round(float(np.mean(experiments.final_rewards(s))), 1)
                                                   for n, s in results.items()}}
            start = _clock()
            finals = {}
            for name, spec in specs.items():
                path = Path(cache) / f"baseline-{name}.json"
                data = experiments._train(name, spec, episodes, 0, path, dataset_type=InProcessDataset)
                finals[name] = round(data["mean_reward"][-1], 1)
            out["baseline"] = {"runs": len(specs), **_since(start), "final_mean_reward": finals}
        finally:
            if previous is None:
                os.environ.pop("COURSE_CACHE", None)
            else:
                os.environ["COURSE_CACHE"] = previous
    course, base = out["course"], out["baseline"]
    out["target_wall_s"] = 300
    out["per_run_speedup_wall"] = round((base["wall_s"] / base["runs"]) / (course["wall_s"] / course["runs"]), 2)
    out["per_run_speedup_cpu"] = round((base["cpu_s"] / base["runs"]) / (course["cpu_s"] / course["runs"]), 2)
    return out


def bench_lunar_seeds(name: str = "aac", max_episodes: int | None = None) -> dict:
    """``course bench lunar-seeds``: one notebook cell's runs, experiment ``name`` (default the aac
    cell) with each of ``experiments.SEEDS`` at full size with the reference classes, the way
    before issue 31 and today's, in one run and on the same code otherwise:

    * ``before``: gymnasium's own ``LunarLander`` in the rollouts, two worker processes;
    * ``now``: ``lander.LeanLunarLander`` (the same steps, faster), ``balanced_workers``'
      processes (three for three runs on two cores).

    Wall-clock and CPU seconds (every process) of each, the load average at the start and the
    end, and whether both gave the same runs (``same_runs``: every recorded number equal, as they
    must be). Both train into a temporary cache."""
    import os
    import tempfile

    from gymnasium.envs.box2d.lunar_lander import LunarLander

    from course_admin.lunar.reference import EXPERIMENT_EPISODES, reference_experiments
    from course_utils.lunar import env, experiments

    _positive("max_episodes", max_episodes, optional=True)
    specs = reference_experiments()
    if name not in specs:
        raise KeyError(f"No experiment named {name!r}; there are {list(specs)}.")
    episodes = max_episodes or EXPERIMENT_EPISODES
    out = {"benchmark": "lunar-seeds", "experiment": name, "seeds": list(experiments.SEEDS), "episodes_per_run": episodes,
           "cores": os.cpu_count(), "load_average_1min": [round(os.getloadavg()[0], 2)]}
    runs = {}
    for way, lander, workers in (("before", LunarLander, 2), ("now", env.VECTOR_LANDER, None)):
        with tempfile.TemporaryDirectory() as cache:
            previous = os.environ.get("COURSE_CACHE")
            os.environ["COURSE_CACHE"], kept, env.VECTOR_LANDER = cache, env.VECTOR_LANDER, lander
            try:
                start = _clock()
                result = experiments.run_experiments({name: specs[name]}, episodes, experiments.SEEDS, force=True,
                                                     progress=False, workers=workers)[name]
                out[way] = {**_since(start), "lander": lander.__name__,
                            "final_mean_reward": [round(r, 1) for r in experiments.final_rewards(result)]}
                runs[way] = [{k: v for k, v in run.items() if k != "model_state"} for run in result["runs"]]
            finally:
                env.VECTOR_LANDER = kept
                if previous is None:
                    os.environ.pop("COURSE_CACHE", None)
                else:
                    os.environ["COURSE_CACHE"] = previous
    out["same_runs"] = runs["before"] == runs["now"]
    out["load_average_1min"].append(round(os.getloadavg()[0], 2))
    out["speedup_wall"] = round(out["before"]["wall_s"] / out["now"]["wall_s"], 2)
    out["speedup_cpu"] = round(out["before"]["cpu_s"] / out["now"]["cpu_s"], 2)
    return out


AAC_HP_BEFORE = dict(batch_size=16, gamma=0.99, beta=0.5, delta=0.01, learn_rate=2e-3, hidden_layers=(128, 128))
"""The notebook's ``aac_hp`` before issue 17 (the baseline of ``bench_lunar_student``)."""


def _student_run(hp: dict, dataset_type, stop_when, max_episodes: int, lr_decay_episodes=None) -> tuple:
    """Section 8's run with the reference classes: seed 2, ``hp``, episodes from ``dataset_type``."""
    from course_admin.lunar.solutions import (
        AACPolicyGradientLoss,
        AACPolicyNet,
        ActionEntropyLoss,
        Episode,
        PolicyTrainer,
        TrainBatch,
    )

    seed_torch(2)
    net = AACPolicyNet.build_for_env(make_env(), **hp)
    trainer = PolicyTrainer(net, torch.optim.Adam(net.parameters(), lr=hp["learn_rate"]),
                            [AACPolicyGradientLoss(hp["delta"]), ActionEntropyLoss(4, hp["beta"])],
                            dataset_type(net, hp["batch_size"], hp["gamma"], seed=2, batch_type=TrainBatch, episode_type=Episode))
    # as Section 8's cell and the aac experiment: the critic's extra steps where hp gives them
    critic = {key: hp[key] for key in ("critic_steps", "critic_learn_rate") if key in hp}
    data = trainer.train(max_episodes=max_episodes, stop_when=stop_when, progress=False, lr_decay_episodes=lr_decay_episodes,
                         **critic)
    return net, data


def student_run(max_episodes: int | None = None) -> dict:
    """Section 8's cell with the exercise's classes (the reference solutions): the notebook's
    ``aac_hp``, learning-rate decay and collection (``VectorBatchDataset``: two shards, worker
    processes), stopped by ``solve.UntilSolved`` (greedy mean - std >= 200 over the 100
    evaluation landscapes, evaluated every 512 episodes once the training mean reaches 150) or
    after ``max_episodes`` (default: the notebook's ``FINAL_EPISODES`` at full size); like the
    cell, it gives the critic ``aac_hp``'s extra steps per batch (``critic_steps``). Returns its figures: solved,
    episodes, wall-clock and CPU seconds (every process), the last training
    mean and the last evaluation."""
    from course_admin.lunar.reference import AAC_HP, FINAL_LR_DECAY_EPISODES
    from course_utils.lunar.sizes import SIZES
    from course_utils.lunar.solve import UntilSolved

    _positive("max_episodes", max_episodes, optional=True)
    start = _clock()
    until = UntilSolved()
    _, data = _student_run(AAC_HP, VectorBatchDataset, until, max_episodes or SIZES.full("final_episodes"),
                           FINAL_LR_DECAY_EPISODES)
    return {"aac_hp": {**AAC_HP, "hidden_layers": list(AAC_HP["hidden_layers"])}, "critic_steps": AAC_HP["critic_steps"],
            "solved": until.solved,
            "episodes": int(data["episode_num"][-1]), **_since(start),
            "training_mean": round(data["mean_reward"][-1], 1),
            "final_evaluation": until.evaluations[-1] if until.evaluations else None}


def store_student_run(progress: bool = True) -> dict:
    """``course train lunar-student-run``: time Section 8's run at full size (``student_run``) and
    store the figures in ``solve.STUDENT_RUN`` (``assets/lunar_student_run.json``), which the
    notebook prints and ``course_admin.schedule`` turns into Section 8's minutes. The machine's
    cores and its load average at the start and the end are stored beside them: on a shared
    machine the wall-clock time is longer than a student's laptop would take."""
    import datetime
    import json
    import os

    from course_utils.lunar.solve import STUDENT_RUN

    load_before = os.getloadavg()[0]
    figures = student_run()
    stored = {"how": "course train lunar-student-run (course_admin.lunar.bench.store_student_run)",
              "date": datetime.date.today().isoformat(), "cores": os.cpu_count(),
              "load_average_1min": [round(load_before, 2), round(os.getloadavg()[0], 2)], **figures}
    STUDENT_RUN.write_text(json.dumps(stored, indent=1) + "\n")
    if progress:
        print(json.dumps(stored))
        print(f"wrote {STUDENT_RUN}")
    return stored


def bench_lunar_student(budget_s: float = 300.0, max_episodes: int | None = None) -> dict:
    """``course bench lunar-student``: the student's own actor-critic (Section 8, with the
    exercise's classes: the reference solutions) until it passes the course's bar (issue 17,
    target 3: in at most 5 minutes), against the same run before issue 17, in one run:

    * ``course``: ``student_run``, the notebook's cell as it is;
    * ``baseline``: the baseline ``aac_hp`` (``AAC_HP_BEFORE``) and the in-process collection
      (``InProcessDataset``), stopped after ``budget_s`` of wall-clock (with no such limit it
      runs until a training mean of 200, which it does not reach), then evaluated on the same
      100 landscapes.

    Both report episodes, the last training mean (sampled actions) and the greedy evaluation;
    CPU time counts every process, beside wall-clock. ``max_episodes`` caps the course's run
    (default: the notebook's ``FINAL_EPISODES`` at full size).
    """
    import os

    from course_admin.lunar.aac import evaluate
    from course_utils.lunar.env import EVAL_SEEDS
    from course_utils.lunar.solve import BAR, score

    _positive("budget_s", budget_s, float)
    _positive("max_episodes", max_episodes, optional=True)
    out = {"benchmark": "lunar-student", "bar": f"mean - std of 100 greedy episodes >= {BAR:g}", "cores": os.cpu_count()}
    out["course"] = student_run(max_episodes)
    start = _clock()
    deadline = time.perf_counter() + budget_s
    net, data = _student_run(AAC_HP_BEFORE, InProcessDataset, lambda model, d: time.perf_counter() > deadline, 10**9)
    clock = _since(start)
    returns = evaluate(net, EVAL_SEEDS, deterministic=True)
    out["baseline"] = {"aac_hp": {**AAC_HP_BEFORE, "hidden_layers": list(AAC_HP_BEFORE["hidden_layers"])},
                       "stopped_after_s": budget_s, "episodes": int(data["episode_num"][-1]), **clock,
                       "training_mean": round(data["mean_reward"][-1], 1),
                       "best_training_mean": round(data["best_mean_reward"][-1], 1),
                       "greedy": {"mean": round(float(returns.mean()), 2), "std": round(float(returns.std()), 2),
                                  "score": round(score(returns), 2)}}
    out["target_wall_s"] = 300
    return out
