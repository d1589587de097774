"""Tutorial 1's evolutions run in the notebook on the student's own code, drawn live as they
run: the genetic algorithm of the student's ``update_population`` (which makes its offspring with
their ``create_new_agent``), and the race of a Lamarckian population (kept by the student's
``lamarckian_individual``) against a Baldwinian one (same seed, same budget). Until those pass
their checks the notebook shows the course's stored runs (``pretrained.load_runs``, drawn by
``show_run``).

This module holds no genetic-algorithm operator: the selection is the notebook's given
``choose_parents``, and offspring, replacement and what a Lamarckian population keeps are the
student's. What it adds is speed: the ``evaluate_individual`` that ``update_population`` calls is
replaced by a stand-in that scores a generation's offspring together with the batched scorer
(``scoring``; one at a time they would take about 40 times as long). It resembles Exercise 1
(``evaluate_individual``), as the batched scorer does, and no exercise more: it is a stand-in
inside ``evolve``, not a function with an exercise's signature.

Scores here are in the notebook's one unit: the **mean score per task, of 20** (the sum of the
20 evaluation rewards on a task, averaged over the tasks an individual was scored on).
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable

import matplotlib.pyplot as plt
import numpy as np
import torch

from course_utils.harlow.env import HarlowExperimentEnv
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


@contextlib.contextmanager
def _evaluate_with(update_population: Callable, stand_in: Callable):
    """Put ``stand_in`` where the student's ``update_population`` looks ``evaluate_individual`` up
    (the notebook's globals), and the student's own back afterwards."""
    namespace = getattr(update_population, "__globals__", {})
    if "evaluate_individual" not in namespace:
        raise ValueError("update_population should call evaluate_individual(...) for each offspring "
                         "(its check says the same): the live evolution scores the offspring in its place.")
    saved = namespace["evaluate_individual"]
    namespace["evaluate_individual"] = stand_in
    try:
        yield
    finally:
        namespace["evaluate_individual"] = saved


def _random_states() -> tuple:
    return random.getstate(), np.random.get_state(), torch.random.get_rng_state()


def _set_random_states(states: tuple) -> None:
    random.setstate(states[0])
    np.random.set_state(states[1])
    torch.random.set_rng_state(states[2])


def _same_agent(a, b) -> bool:
    """Whether two agents hold the same weights and hyperparameters."""
    first, second = a.state_dict(), b.state_dict()
    return (a.hyperparameters() == b.hyperparameters() and first.keys() == second.keys()
            and all(torch.equal(first[name], second[name]) for name in first))


def evolve(
    update_population: Callable,
    choose_parents: Callable,
    seed: int = 0,
    generations: int = 200,
    lamarckian_individual: Callable | None = None,
    population_size: int = 50,
    new_per_generation: int = 5,
    num_tasks: int = 10,
    on_generation: Callable[[dict], None] | None = None,
    **settings,
) -> dict:
    """The tutorial's genetic algorithm run by the student's own code, deterministic from ``seed``.

    Generation 0 is ``population_size`` fresh agents, each scored over ``num_tasks`` new tasks.
    Each generation is then the notebook's: ``choose_parents(population)`` (the selection the
    notebook gives) and the student's ``update_population(env, optimizer_func, population,
    parents_population, best_score, new_generation_new_individuals=new_per_generation)``, with a
    stand-in for the ``evaluate_individual`` it calls. The offspring, their scores' use and which
    old individuals go are the student's; this function adds no operator of its own.

    The stand-in scores a generation's offspring in one batch (the batched scorer, ``scoring``):
    ``update_population`` runs once to make them (the stand-in queues each and answers 0), they
    are scored together, and it runs again from the same random state, the stand-in now answering
    each offspring's real score: the population it returns is the one the student's code makes
    with the real scores. An offspring the second run makes differently (an answer drawing from
    a generator of its own) is scored on its own when it asks.

    With ``lamarckian_individual(born, trained)`` the population is Lamarckian: once scored, each
    individual is replaced by what that function keeps of it, given the weights its trained
    copies ended with (one state dict per task); without it, Baldwinian.

    The student's functions draw from Python's, NumPy's and torch's global generators: they are
    seeded from ``seed`` for the run and put back afterwards. ``on_generation(history)`` is called
    after every generation (0 included). Returns the history: ``generation``, ``mean`` and
    ``best`` population score (over ``num_tasks`` tasks), the mean of each hyperparameter, and
    the settings.
    """
    inheritance = "lamarckian" if lamarckian_individual is not None else "baldwinian"
    states = _random_states()
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    env = HarlowExperimentEnv()

    def scored(agents):
        """Score the agents together: a list of (kept agent, total score, per-task scores); a
        Lamarckian population keeps what ``lamarckian_individual`` keeps of each."""
        per_task = {} if lamarckian_individual is not None else None
        params, hypers = stack_agents(agents)
        scores = evaluate_population(params, hypers, rng, num_tasks, learned_per_task=per_task, **settings)
        kept = list(agents)
        if per_task is not None:
            kept = [lamarckian_individual(agent, [{name: p[i, k] for name, p in per_task.items()}
                                                  for k in range(num_tasks)])
                    for i, agent in enumerate(agents)]
        return [(agent, float(row.sum()), [float(s) for s in row]) for agent, row in zip(kept, scores, strict=True)]

    def one_generation(population, best_score):
        parents = choose_parents(population)
        before, queued = _random_states(), []

        def queue(env, agent, *args, **kwargs):
            queued.append(agent)
            return 0.0, [0.0] * num_tasks

        with _evaluate_with(update_population, queue):
            update_population(env, torch.optim.RMSprop, list(population), list(parents), best_score,
                              new_generation_new_individuals=new_per_generation)
        results = scored(queued) if queued else []
        _set_random_states(before)
        offspring = {}  # id of an offspring of the second run -> (it, what the population keeps of it)

        def answer(env, agent, *args, **kwargs):
            k = len(offspring)
            known = k < len(results) and _same_agent(agent, queued[k])
            individual, total, per_task = results[k] if known else scored([agent])[0]
            offspring[id(agent)] = (agent, individual if lamarckian_individual is not None else agent)
            return total, per_task

        with _evaluate_with(update_population, answer):
            returned = update_population(env, torch.optim.RMSprop, list(population), list(parents), best_score,
                                         new_generation_new_individuals=new_per_generation)
        try:
            population, best_score = returned
            population = [(agent, float(score)) for agent, score in population]
        except (TypeError, ValueError):
            raise ValueError("update_population should return (population, best score), the population a list of "
                             "(agent, score) pairs (its check says the same).") from None
        if len(population) != population_size:
            raise ValueError(f"update_population returned {len(population)} individuals of {population_size} "
                             "(its check says the same).")
        kept = {key: individual for key, (agent, individual) in offspring.items()}
        return [(kept.get(id(agent), agent), score) for agent, score in population], best_score

    try:
        population = [(agent, total) for agent, total, _ in
                      scored(fresh_agents(population_size, torch.Generator().manual_seed(seed)))]
        best_score = max(score for _, score in population)
        history = {"generation": [], "mean": [], "best": [], **{f"mean_{k}": [] for k in HYPER_NAMES},
                   "num_tasks": num_tasks}

        def record(generation):
            scores = np.array([score for _, score in population])
            hypers = np.array([[agent.hyperparameters()[k] for k in HYPER_NAMES] for agent, _ in population])
            history["generation"].append(generation)
            history["mean"].append(round(float(scores.mean()), 3))
            history["best"].append(float(scores.max()))
            for j, k in enumerate(HYPER_NAMES):
                history[f"mean_{k}"].append(float(f"{hypers[:, j].mean():.6g}"))
            if on_generation is not None:
                on_generation(history)

        record(0)
        for generation in range(1, generations + 1):
            population, best_score = one_generation(population, best_score)
            record(generation)
    finally:
        _set_random_states(states)
    return {**history, "settings": {"seed": seed, "population_size": population_size, "generations": generations,
                                    "new_per_generation": new_per_generation, "inheritance": inheritance,
                                    **settings}}


def evolve_live(
    generations: int,
    update_population: Callable,
    choose_parents: Callable,
    seed: int = 0,
    lamarckian_individual: Callable | None = None,
    curves: dict | None = None,
    label: str | None = None,
    title: str = "Evolution, live",
    **settings,
) -> dict:
    """Run ``evolve`` on the student's ``update_population`` (with their ``create_new_agent``,
    which it calls) and the notebook's ``choose_parents`` (and, for a Lamarckian run, their
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
    result = evolve(update_population, choose_parents, seed=seed, generations=generations,
                    lamarckian_individual=lamarckian_individual, on_generation=plot, **settings)
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
