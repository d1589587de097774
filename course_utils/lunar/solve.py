"""The bar a lander must pass to solve LunarLander, and training until it does.

The bar is the one the Hugging Face Deep RL course uses: over one greedy episode on each of the
100 held-out ``EVAL_SEEDS``, the mean total reward minus its standard deviation is at least
``BAR`` (200). ``UntilSolved`` stops the notebook's training of the student's own actor-critic
there (``TrainerLoop.train(stop_when=...)``): every ``eval_every`` episodes (once the mean
training return of the last 100 episodes has reached ``screen``, so that hopeless early policies
cost no evaluation) it plays those 100 episodes and stops as soon as the bar is passed.
``Schedule`` is that schedule; the course's own trainer (``course_admin.lunar.solve``) and
``course bench lunar-solve`` (Stable-Baselines3's PPO) run it too. ``summary`` and
``plot_solve_run`` show the course's stored run (``evaluation.TRAINING_CURVE``).
"""

from __future__ import annotations

import time

import numpy as np

from course_utils.lunar.env import EVAL_SEEDS
from course_utils.lunar.evaluation import evaluate
from course_utils.paths import ASSETS

BAR = 200.0
"""Mean minus standard deviation of the greedy return over the 100 evaluation seeds."""
EVAL_EVERY = 32_768
"""Environment steps between evaluations (8 updates of the course's trainer)."""
SCREEN = 100.0
"""Evaluations start once the mean return of the last 100 training episodes reaches this."""


STUDENT_RUN = ASSETS / "lunar_student_run.json"
"""The course's timing of Section 8's run with the exercise's classes at full size, until it passes
the bar (``course train lunar-student-run``): what the notebook prints before that run and what
``course_admin.schedule`` counts as its minutes."""


def stored_student_run() -> dict:
    """The stored timing of Section 8's run: ``solved``, ``episodes``, ``wall_s``, ``cpu_s``,
    ``cores``, ``load_average_1min`` (at its start and end), ``date``, ``aac_hp``."""
    import json

    return json.loads(STUDENT_RUN.read_text())


def student_run_report() -> str:
    """What the course's own run of Section 8's cell took (``stored_student_run``), in one line; or,
    where the course has not timed the cell's code yet (no stored file), that it has not."""
    if not STUDENT_RUN.exists():
        return ("The course has not timed this cell with its current code yet (course train lunar-student-run): "
                "it trains until your agent passes the bar, which takes thousands of episodes; the stop button ends it early.")
    run = stored_student_run()
    outcome = (f"passed the bar after {run['episodes']:,} episodes" if run["solved"] else
               f"had not passed the bar after {run['episodes']:,} episodes")
    load = max(run["load_average_1min"])
    return (f"The course's own run of this cell (the exercise's reference classes, seed 2, the default aac_hp) "
            f"{outcome} in {run['wall_s'] / 60:.1f} minutes of wall-clock time ({run['cpu_s'] / 60:.1f} minutes of CPU, "
            f"{run['cores']} cores{f', shared: load average up to {load:.1f}' if load > run['cores'] else ''}). "
            "Yours takes about as long if your classes match it; the stop button ends it early.")


def score(returns: np.ndarray) -> float:
    """The bar's statistic: mean minus (population) standard deviation of the returns."""
    returns = np.asarray(returns, dtype=float)
    return float(returns.mean() - returns.std())


class Schedule:
    """When to evaluate, and the record of every evaluation: shared by the course and SB3.

    ``due(steps, recent_mean)`` says whether an evaluation is due after ``steps`` environment
    steps; ``record(steps, returns, t0, c0)`` stores one and returns whether the bar is passed.
    """

    def __init__(self, eval_every: int = EVAL_EVERY, screen: float = SCREEN, bar: float = BAR):
        self.eval_every, self.screen, self.bar = eval_every, screen, bar
        self.next_at = eval_every
        self.evaluations: list[dict] = []
        self.eval_wall_s = 0.0
        self.eval_cpu_s = 0.0

    def due(self, steps: int, recent_mean: float) -> bool:
        if steps < self.next_at:
            return False
        while self.next_at <= steps:
            self.next_at += self.eval_every
        return bool(recent_mean >= self.screen)

    def record(self, steps: int, returns: np.ndarray, wall_s: float, cpu_s: float, eval_wall_s: float,
               eval_cpu_s: float = 0.0) -> bool:
        """Store an evaluation after ``steps`` steps; ``wall_s``/``cpu_s`` are the totals so far,
        evaluations included; ``eval_*_s`` what this evaluation took. True if the bar is passed."""
        self.eval_wall_s += eval_wall_s
        self.eval_cpu_s += eval_cpu_s
        entry = {"steps": int(steps), "mean": round(float(np.mean(returns)), 2), "std": round(float(np.std(returns)), 2),
                 "score": round(score(returns), 2), "wall_s": round(wall_s, 2), "cpu_s": round(cpu_s, 2)}
        self.evaluations.append(entry)
        return self.solved

    @property
    def solved(self) -> bool:
        """Whether the latest evaluation passed the bar (training stops at the first that does)."""
        return bool(self.evaluations) and self.evaluations[-1]["score"] >= self.bar


class UntilSolved:
    """``stop_when`` for the notebook's ``TrainerLoop.train``: the student's own agent trained
    until it passes the course's bar, on the same schedule as the course's lander.

    Every ``eval_every`` episodes (once the mean return of the last 100 training episodes has
    reached ``screen``: in the course's runs of the reference classes it was 156-175 when the
    greedy policy first passed, and an evaluation costs about as much as 100 training episodes)
    it plays one greedy episode on each of ``seeds`` (``evaluation.evaluate``,
    most probable action) and returns True once mean minus standard deviation reaches ``bar``.
    ``evaluations`` keeps each evaluation (``Schedule.record``'s entries, with ``episodes``);
    ``on_evaluation(entry)`` is called after each (the notebook prints it).

    Why the greedy policy: the training episodes sample their actions, and on the ground a
    sampled policy keeps firing its side engines now and then, so the lander never comes to
    rest (which ends an episode with +100) before the 300-step limit: the course's own solved
    lander averages about 170 in training and 258 greedy. The bar judges the policy the agent
    would fly with.
    """

    def __init__(self, eval_every: int = 512, screen: float = 150.0, bar: float = BAR, seeds=EVAL_SEEDS,
                 on_evaluation=None):
        self.schedule = Schedule(eval_every, screen, bar)
        self.seeds, self.on_evaluation = seeds, on_evaluation
        self.t0, self.c0 = time.perf_counter(), time.process_time()

    @property
    def evaluations(self) -> list[dict]:
        return self.schedule.evaluations

    @property
    def solved(self) -> bool:
        return self.schedule.solved

    def __call__(self, model, training_data: dict) -> bool:
        episodes = int(training_data["episode_num"][-1])
        if not self.schedule.due(episodes, training_data["mean_reward"][-1]):
            return False
        e0, c0 = time.perf_counter(), time.process_time()
        returns = evaluate(model, self.seeds)
        self.schedule.record(episodes, returns, time.perf_counter() - self.t0, time.process_time() - self.c0,
                             time.perf_counter() - e0, time.process_time() - c0)
        entry = self.schedule.evaluations[-1]
        entry["episodes"] = entry.pop("steps")
        if self.on_evaluation is not None:
            self.on_evaluation(entry)
        return self.schedule.solved


def report_evaluation(entry: dict) -> None:
    """Print one evaluation of ``UntilSolved`` or of the course's trainer (their ``on_evaluation``)."""
    verdict = "passes the bar" if entry["score"] >= BAR else f"below the bar of {BAR:g}"
    when = f"{entry['episodes']:,} episodes" if "episodes" in entry else f"{entry['steps']:,} steps"
    print(f"after {when} ({entry['wall_s']:.0f} s): greedy return {entry['mean']:.1f} ± "
          f"{entry['std']:.1f} over the evaluation landscapes, mean - std = {entry['score']:.1f}: {verdict}")


def solve_report(until: UntilSolved) -> str:
    """One sentence on a run stopped by ``until`` (an ``UntilSolved``): where it passed the bar,
    or the best evaluation it reached, or that no evaluation was due yet."""
    if not until.evaluations:
        return (f"No evaluation yet: they start once the mean of the last 100 training episodes reaches "
                f"{until.schedule.screen:g}.")
    last = until.evaluations[-1]
    if until.solved:
        return (f"Your agent passed the bar after {last['episodes']:,} episodes ({last['wall_s']:.0f} s): greedy return "
                f"{last['mean']:.1f} ± {last['std']:.1f} over the evaluation landscapes, mean - std = {last['score']:.1f}.")
    best = max(until.evaluations, key=lambda entry: entry["score"])
    return (f"Not solved after {len(until.evaluations)} evaluations: the best, after {best['episodes']:,} episodes, had "
            f"mean - std = {best['score']:.1f} (the bar is {until.schedule.bar:g}).")


def summary(curve: dict) -> str:
    """One sentence on a run of the course's trainer (``course_admin.lunar.solve.train_until_solved``,
    stored in ``evaluation.TRAINING_CURVE``): steps, episodes, wall-clock and CPU time."""
    run = curve["solve"]
    how = "passed the bar" if run["solved"] else "did not pass the bar"
    return (f"It {how} after {run['steps']:,} environment steps ({curve['episodes'][-1]:,} episodes) in "
            f"{run['wall_s']:.0f} s of wall-clock time ({run['cpu_s']:.0f} s of CPU time in all its processes, "
            f"evaluations included).")


def plot_solve_run(curve: dict, ax=None):
    """The training curve (mean return of the last 100 training episodes, sampled actions) and
    every evaluation's mean - std (greedy actions), against environment steps, with the bar."""
    import matplotlib.pyplot as plt

    ax = ax or plt.subplots(figsize=(8, 4))[1]
    ax.plot(np.array(curve["steps"]) / 1e6, curve["mean_reward"], label="training: mean return, last 100 episodes")
    evals = curve["solve"]["evaluations"]
    if evals:
        ax.plot([e["steps"] / 1e6 for e in evals], [e["score"] for e in evals], "o",
                label="evaluation: mean - std, 100 greedy episodes")
    ax.axhline(curve["solve"].get("bar", BAR), color="grey", linestyle="--", label=f"the bar ({BAR:g})")
    ax.set_xlabel("environment steps (millions)")
    ax.set_ylabel("total reward")
    ax.legend(loc="lower right")
    return ax
