"""Tutorial 1's evolutions run in the notebook with the student's own operators, drawn live as
they run: the genetic algorithm with the student's ``create_new_agent``, and the race of a
Lamarckian population (kept by the student's ``lamarckian_individual``) against a Baldwinian one
(same seed, same budget). Until those pass their checks the notebook shows the course's stored runs
(``pretrained.load_runs``, drawn by ``show_run``).

The loop around the student's operators is given, and it is the course's exception to "no
answers in the student package" (README, instructor section) that comes closest to one: ranking,
the tournament and the parents drawn as the notebook's own cell draws them, the children scored
together by the batched scorer (``scoring``), and as many random old individuals replaced. That
is the selection and replacement of Exercise 2's ``update_population``; the offspring are the
student's ``create_new_agent``'s. It is no drop-in (it scores a generation's children in one
batch and takes no population from outside), but its eight lines of selection and replacement can
be copied into ``update_population``: a red team did, and earned the exercise's 4 points (the
similarity report does not list it: the copy is a fifth of the answer). A live run on the
student's own ``update_population`` would score the children one at a time, about 40 times
slower; scoring them in one batch behind a stand-in ``evaluate_individual`` would close this.

Scores here are in the notebook's one unit: the **mean score per task, of 20** (the sum of the
20 evaluation rewards on a task, averaged over the tasks an individual was scored on).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

import matplotlib.pyplot as plt
import numpy as np
import torch

from course_utils.harlow.scoring import HYPER_NAMES, evaluate_population, fresh_agents, stack_agents
from course_utils.runtime import headless

REDRAW_SECONDS = 1.0
"""A live plot is redrawn at most this often (drawing costs more than a generation)."""


def per_task(history: dict, key: str = "mean") -> np.ndarray:
    """A history's per-generation ``key`` (``"mean"`` or ``"best"`` population score over its
    ``num_tasks`` tasks) as a score per task, of 20: array (generations + 1,)."""
    return np.asarray(history[key], dtype=float) / history["num_tasks"]


class LiveEvolution:
    """Draws an evolution's population mean (per task, of 20) while it runs.

    In JupyterLab the figure is redrawn in place (at most every ``REDRAW_SECONDS``); where
    nobody watches (``COURSE_HEADLESS=1``) it prints a line at every tenth of the run instead
    and shows the figure once at the end. ``curves`` are finished runs drawn for comparison:
    ``{label: (generations, mean per task)}``.
    """

    def __init__(self, generations: int, label: str, curves: dict | None = None, title: str = "Evolution, live"):
        self.generations, self.label, self.title = generations, label, title
        self.curves = curves or {}
        self.live = not headless()
        self.start = time.perf_counter()
        self.last_draw = -np.inf
        self.next_line = 0
        self.handle = None

    def _figure(self, history: dict):
        fig, ax = plt.subplots(figsize=(8, 4))
        for i, (label, (x, y)) in enumerate(self.curves.items()):
            ax.plot(x, y, color=f"C{i + 1}", alpha=0.8, label=label)
        ax.plot(history["generation"], per_task(history), color="C0", linewidth=2, label=self.label)
        ax.set(title=f"{self.title}: generation {history['generation'][-1]} of {self.generations}",
               xlabel="generation", ylabel="population mean score per task (of 20)",
               xlim=(0, self.generations), ylim=(0, 20))
        ax.axhline(0, color="0.5", linestyle=":", linewidth=1)
        ax.legend(loc="lower right")
        return fig

    def __call__(self, history: dict) -> None:
        """``evolve``'s ``on_generation`` hook."""
        generation, mean = history["generation"][-1], per_task(history)[-1]
        if not self.live:
            if generation >= self.next_line or generation == self.generations:
                print(f"{self.label}: generation {generation:4d}, population mean {mean:5.2f} per task "
                      f"({time.perf_counter() - self.start:.0f} s)")
                self.next_line = generation + max(1, self.generations // 10)
            return
        now = time.perf_counter()
        if now - self.last_draw < REDRAW_SECONDS and generation != self.generations:
            return
        from IPython.display import display

        fig = self._figure(history)
        if self.handle is None:
            self.handle = display(fig, display_id=True)
        else:
            self.handle.update(fig)
        plt.close(fig)
        self.last_draw = time.perf_counter()

    def finish(self, history: dict) -> None:
        """Headless: show the final figure once (live, the last generation has drawn it)."""
        if self.live:
            return
        fig = self._figure(history)
        plt.show()
        plt.close(fig)


def evolve(
    create_new_agent: Callable,
    seed: int = 0,
    generations: int = 200,
    lamarckian_individual: Callable | None = None,
    population_size: int = 50,
    new_per_generation: int = 5,
    tournament_size: int = 20,
    parents_size: int = 4,
    num_tasks: int = 10,
    on_generation: Callable[[dict], None] | None = None,
    **settings,
) -> dict:
    """The tutorial's genetic algorithm with the student's operators, deterministic from ``seed``.

    Generation 0 is ``population_size`` fresh agents. Each generation then takes the
    ``tournament_size`` best, draws ``parents_size`` parents among them (with replacement), makes
    ``new_per_generation`` children of random parent pairs with ``create_new_agent(agent1,
    agent2)``, scores them over ``num_tasks`` new tasks, and swaps them for as many random old
    individuals. With ``lamarckian_individual(born, trained)`` the population is Lamarckian: once
    scored, each individual is replaced by what that function keeps of it, given the weights its
    trained copies ended with (one state dict per task); without it, Baldwinian.

    ``create_new_agent`` draws from Python's, NumPy's and torch's global generators: they are
    seeded from ``seed`` for the run and put back afterwards. ``on_generation(history)`` is called
    after every generation (0 included). Returns the history: ``generation``, ``mean`` and
    ``best`` population score (over ``num_tasks`` tasks), the mean of each hyperparameter, and
    the settings.
    """
    inheritance = "lamarckian" if lamarckian_individual is not None else "baldwinian"
    states = random.getstate(), np.random.get_state(), torch.random.get_rng_state()
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    try:
        def scored(agents):
            """Score the agents; a Lamarckian population then keeps what ``lamarckian_individual`` keeps."""
            per_task = {} if lamarckian_individual is not None else None
            params, hypers = stack_agents(agents)
            scores = evaluate_population(params, hypers, rng, num_tasks, learned_per_task=per_task, **settings).sum(1)
            if per_task is not None:
                agents = [lamarckian_individual(agent, [{name: p[i, k] for name, p in per_task.items()}
                                                        for k in range(num_tasks)])
                          for i, agent in enumerate(agents)]
            return agents, scores

        population, scores = scored(fresh_agents(population_size, torch.Generator().manual_seed(seed)))
        history = {"generation": [], "mean": [], "best": [], **{f"mean_{k}": [] for k in HYPER_NAMES},
                   "num_tasks": num_tasks}

        def record(generation):
            hypers = np.array([[agent.hyperparameters()[k] for k in HYPER_NAMES] for agent in population])
            history["generation"].append(generation)
            history["mean"].append(round(float(scores.mean()), 3))
            history["best"].append(float(scores.max()))
            for j, k in enumerate(HYPER_NAMES):
                history[f"mean_{k}"].append(float(f"{hypers[:, j].mean():.6g}"))
            if on_generation is not None:
                on_generation(history)

        record(0)
        for generation in range(1, generations + 1):
            ranked = np.argsort(-scores, kind="stable")[:tournament_size]
            parents = rng.choice(ranked, size=parents_size, replace=True)
            couples = rng.choice(parents, size=(new_per_generation, 2), replace=True)
            children, child_scores = scored([create_new_agent(population[a], population[b]) for a, b in couples])
            keep = np.setdiff1d(np.arange(population_size),
                                rng.choice(population_size, new_per_generation, replace=False))
            population = [population[i] for i in keep] + children
            scores = np.concatenate([scores[keep], child_scores])
            record(generation)
    finally:
        random.setstate(states[0])
        np.random.set_state(states[1])
        torch.random.set_rng_state(states[2])
    return {**history, "settings": {"seed": seed, "population_size": population_size, "generations": generations,
                                    "new_per_generation": new_per_generation, "tournament_size": tournament_size,
                                    "parents_size": parents_size, "inheritance": inheritance, **settings}}


def evolve_live(
    generations: int,
    create_new_agent: Callable,
    seed: int = 0,
    lamarckian_individual: Callable | None = None,
    curves: dict | None = None,
    label: str | None = None,
    title: str = "Evolution, live",
    **settings,
) -> dict:
    """Run ``evolve`` with the student's ``create_new_agent`` (and, for a Lamarckian run, their
    ``lamarckian_individual``) for ``generations`` generations (population 50, 5 new individuals
    per generation, each scored over 10 new tasks, as in the tutorial), drawing its population mean
    live. Returns ``evolve``'s result plus ``seconds`` (wall time of the run).

    ``curves``: finished runs to draw beside it, ``{label: (generations, mean per task)}``.
    """
    if generations < 1:
        raise ValueError(f"generations must be at least 1, got {generations!r}.")
    inheritance = "lamarckian" if lamarckian_individual is not None else "baldwinian"
    label = label or f"{inheritance} population mean"
    plot = LiveEvolution(generations, label, curves, title)
    start = time.perf_counter()
    result = evolve(create_new_agent, seed=seed, generations=generations, lamarckian_individual=lamarckian_individual,
                    on_generation=plot, **settings)
    result["seconds"] = time.perf_counter() - start
    plot.finish(result)
    return result


def show_run(run: dict, label: str, curves: dict | None = None, title: str = "Evolution, stored") -> None:
    """Draw a finished run (a stored one, ``pretrained.load_runs``) once, as ``evolve_live`` draws
    a live one at its end: its population mean per task, with ``curves`` beside it."""
    plot = LiveEvolution(run["generation"][-1], label, curves, title)
    fig = plot._figure(run)
    plt.show()
    plt.close(fig)


def summary(result: dict, last: int = 10) -> dict:
    """Figures of one run, per task (of 20): the population mean at generation 0, the mean over
    its ``last`` generations (one generation's mean is noisy), and the gain between them."""
    mean = per_task(result)
    start, end = float(mean[0]), float(mean[-last:].mean())
    return {"start": start, "end": end, "gain": end - start, "generations": int(result["generation"][-1])}
