"""Train the course's lander until it solves LunarLander (``course train lunar``).

``train_until_solved`` runs ``aac.train_aac`` and, every ``eval_every`` environment steps (once
the mean training return of the last 100 episodes has reached ``screen``, so that hopeless early
policies cost no evaluation), plays one greedy episode on each of the 100 ``EVAL_SEEDS`` and
stops as soon as the bar (``course_utils.lunar.solve.BAR``) is passed. ``course bench
lunar-solve`` runs the same schedule (``Schedule``) for Stable-Baselines3's PPO.

Instructor code: it trains the course's actor-critic. The notebook shows the stored run.
"""

from __future__ import annotations

import time

import numpy as np

from course_admin.lunar.aac import evaluate, train_aac
from course_admin.lunar.numpy_ac import NumpyActorCritic
from course_utils.lunar.env import EVAL_SEEDS, MAX_EPISODE_STEPS, LanderVectorEnv
from course_utils.lunar.evaluation import evaluate as greedy_returns
from course_utils.lunar.solve import BAR, EVAL_EVERY, SCREEN, Schedule


def evaluate_greedy(net, seeds=EVAL_SEEDS) -> np.ndarray:
    """Total reward of one greedy episode per seed: what ``aac.evaluate(net, seeds)`` returns,
    computed faster for a network with a NumPy twin (``aac.ActorCriticNet``), whose episodes are
    played together in one ``LanderVectorEnv`` (the same dynamics, seeding and time limit as
    ``make_env()``) with NumPy forwards. Networks with the time feature go to ``aac.evaluate``,
    others to the student package's ``evaluation.evaluate``.

    Returns float array (len(seeds),). A test checks both ways give the same totals.
    """
    if getattr(net, "time_feature", False):
        return evaluate(net, seeds, deterministic=True)
    if not getattr(net, "numpy_twin", False):
        return greedy_returns(net, seeds)
    twin = NumpyActorCritic(net.state_dict())
    envs = LanderVectorEnv(len(seeds))
    obs, _ = envs.reset(seed=[int(s) for s in seeds])
    totals = np.zeros(len(seeds))
    playing = np.ones(len(seeds), dtype=bool)
    for _ in range(MAX_EPISODE_STEPS):
        logits, _ = twin.forward(obs)
        obs, rewards, terminated, truncated, _ = envs.step(logits.argmax(axis=1))
        totals += np.where(playing, rewards, 0.0)
        playing &= ~(terminated | truncated)
        if not playing.any():
            break
    envs.close()
    return totals


def train_until_solved(config: dict | None = None, max_steps: int | None = None, eval_every: int = EVAL_EVERY,
                       screen: float = SCREEN, bar: float = BAR, progress: bool = True, workers: int | None = None,
                       on_evaluation=None, seeds=EVAL_SEEDS):
    """Train the course's lander (``aac.DEFAULT_AAC`` updated by ``config``) until it passes
    the bar, or ``max_steps`` environment steps (the learning rate decays over ``max_steps``).

    ``on_evaluation(entry)`` is called after each evaluation (the notebook prints it);
    ``seeds`` are the evaluation episodes (the bar is defined on the 100 ``EVAL_SEEDS``).
    Returns ``(net, result)``: the network when it stopped, and a dict with ``solved``,
    ``steps``, ``wall_s`` and ``cpu_s`` (every process, evaluations included) at the stop,
    the ``evaluations`` and the training ``curve``.
    """
    schedule = Schedule(eval_every, screen, bar)
    t0 = time.perf_counter()

    def stop_when(net, steps, curve):
        recent = curve["mean_reward"][-1] if curve["mean_reward"] else -np.inf
        if not schedule.due(steps, recent):
            return False
        e0, c0 = time.perf_counter(), time.process_time()
        returns = evaluate_greedy(net, seeds)
        eval_wall, eval_cpu = time.perf_counter() - e0, time.process_time() - c0
        schedule.record(steps, returns, time.perf_counter() - t0,
                        curve["cpu_s"][-1] + schedule.eval_cpu_s + eval_cpu, eval_wall, eval_cpu)
        if on_evaluation is not None:
            on_evaluation(schedule.evaluations[-1])
        return schedule.solved

    from course_admin.lunar.aac import DEFAULT_AAC

    max_steps = max_steps or {**DEFAULT_AAC, **(config or {})}["total_steps"]
    net, curve = train_aac({**(config or {}), "total_steps": max_steps}, progress=progress, log_every=1,
                           workers=workers, stop_when=stop_when)
    last = schedule.evaluations[-1] if schedule.evaluations else None
    curve["solve"] = {"solved": schedule.solved, "steps": curve["steps"][-1], "bar": bar,
                      "wall_s": round(time.perf_counter() - t0, 2),
                      "cpu_s": round(curve["cpu_s"][-1] + schedule.eval_cpu_s, 2), "evaluations": schedule.evaluations}
    result = {
        "solved": schedule.solved,
        "steps": curve["steps"][-1],
        "wall_s": round(time.perf_counter() - t0, 2),
        "cpu_s": round(curve["cpu_s"][-1] + schedule.eval_cpu_s, 2),
        "eval_wall_s": round(schedule.eval_wall_s, 2),
        "eval_cpu_s": round(schedule.eval_cpu_s, 2),
        "final": last,
        "evaluations": schedule.evaluations,
        "curve": curve,
    }
    return net, result
