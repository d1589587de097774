"""Tutorial 1's evolutions run in the notebook: the batched genetic algorithm drawn live as it
runs, and the race of a Lamarckian population against a Baldwinian one (same seed, same budget).

Scores here are in the notebook's one unit: the **mean score per task, of 20** (the sum of the
20 evaluation rewards on a task, averaged over the tasks an individual was scored on).
"""

from __future__ import annotations

import time

import matplotlib.pyplot as plt
import numpy as np

from course_utils.harlow.batch import evolve
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


def evolve_live(
    generations: int,
    seed: int = 0,
    inheritance: str = "baldwinian",
    curves: dict | None = None,
    label: str | None = None,
    title: str = "Evolution, live",
    **settings,
) -> dict:
    """Run the batched genetic algorithm for ``generations`` generations (population 50, 5 new
    individuals per generation, each scored over 10 new tasks, as in the tutorial), drawing its
    population mean live. Returns ``evolve``'s result plus ``seconds`` (wall time of the run).

    ``curves``: finished runs to draw beside it, ``{label: (generations, mean per task)}``.
    """
    if generations < 1:
        raise ValueError(f"generations must be at least 1, got {generations!r}.")
    label = label or f"{inheritance} population mean"
    plot = LiveEvolution(generations, label, curves, title)
    start = time.perf_counter()
    result = evolve(seed=seed, generations=generations, progress=False, inheritance=inheritance,
                    on_generation=plot, final_candidates=5, final_tasks=20, **settings)
    result["seconds"] = time.perf_counter() - start
    plot.finish(result)
    return result


def summary(result: dict, last: int = 10) -> dict:
    """Figures of one run, per task (of 20): the population mean at generation 0, the mean over
    its ``last`` generations (one generation's mean is noisy), and the gain between them."""
    mean = per_task(result)
    start, end = float(mean[0]), float(mean[-last:].mean())
    return {"start": start, "end": end, "gain": end - start, "generations": int(result["generation"][-1])}
