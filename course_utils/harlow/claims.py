"""Tutorial 1's claims over the stored 800-generation evolution (``assets/harlow_evolution.json``,
``course train harlow``); see ``course_utils.claims``. Scores are per task (of 20), the stored
``mean`` divided by the number of tasks each agent is scored on."""

from __future__ import annotations

import numpy as np

from course_utils.claims import Claim
from course_utils.harlow.agent import DEFAULT_HYPERPARAMETERS


def _per_task(history: dict, key: str = "mean") -> np.ndarray:
    return np.asarray(history[key], dtype=float) / history["num_tasks"]


def _run(history: dict) -> dict:
    s = history["settings"]
    mean = _per_task(history)
    return {
        "generations": s["generations"], "population": s["population_size"], "new": s["new_per_generation"],
        "tasks": history["num_tasks"], "agents": s["population_size"] + s["generations"] * s["new_per_generation"],
        "first": float(mean[:10].mean()), "last": float(mean[-10:].mean()),
        "at_200": float(mean[191:201].mean()), "final_tasks": history["final_tasks"],
    }


def _hyper(history: dict) -> dict:
    best, newbie = history["best_hyperparameters"], DEFAULT_HYPERPARAMETERS
    return {"lr_ratio": best["learning_rate"] / newbie["learning_rate"], "gamma": best["gamma"],
            "newbie_gamma": newbie["gamma"]}


def _history() -> dict:
    from course_utils.harlow.pretrained import load_history

    return load_history()


RESULTS = {"harlow_evolution": _history}
"""Stored result name -> loader (``assets/harlow_evolution.json``)."""


def _race(runs: dict) -> dict:
    """``runs``: {"baldwinian": run, "lamarckian": run} of ``evolve_live`` (same seed and size)."""
    from course_utils.harlow.evolution import summary

    baldwin, lamarck = summary(runs["baldwinian"]), summary(runs["lamarckian"])
    return {"generations": lamarck["generations"], "start": baldwin["start"], "lamarckian_start": lamarck["start"],
            "baldwinian": baldwin["end"], "lamarckian": lamarck["end"], "lead": lamarck["end"] - baldwin["end"]}


CLAIMS = (
    Claim("harlow.saved_run_rises", "Section 4, the saved run", "harlow_evolution", _run,
          "Over {generations} generations ({agents} agents, each scored over {tasks} tasks) the population's mean "
          "score per task rose from {first:.1f} (first 10 generations) to {last:.1f} of 20 (last 10).",
          lambda f: f["last"] - f["first"] > 10),
    Claim("harlow.keeps_rising_after_200", "Section 4, after the live evolution", "harlow_evolution", _run,
          "Evolution keeps going long after 200 generations: the saved run's mean score per task was {at_200:.1f} "
          "around generation 200 and {last:.1f} over its last 10 generations.",
          lambda f: f["last"] - f["at_200"] > 2),
    Claim("harlow.evolved_hyperparameters", "Section 5, what evolution changed", "harlow_evolution", _hyper,
          "The evolved learning rate is {lr_ratio:.1f} times the newbie's, and gamma went down from {newbie_gamma} "
          "to {gamma:.2f}.",
          lambda f: f["lr_ratio"] >= 3 and f["gamma"] < f["newbie_gamma"]),
    Claim("harlow.final_pick", "Section 5, the evolved agent", "harlow_evolution", _run,
          "The evolved agent is the best of the final population, re-scored over {final_tasks} new tasks to pick it.",
          lambda f: f["final_tasks"] >= 100),
    Claim("harlow.lamarck_pulls_ahead", "Section 3, the race", "live:harlow.evolve_live, both inheritances, seed 1", _race,
          "From the same first population ({start:.1f} per task), after {generations} generations the Lamarckian "
          "population is ahead: {lamarckian:.1f} per task against the Baldwinian {baldwinian:.1f} (of 20).",
          lambda f: f["start"] == f["lamarckian_start"] and f["lead"] > 2),
)
