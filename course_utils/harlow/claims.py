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


def _ablation(results: dict) -> dict:
    """``results``: Section 4's one sample, ``same_tasks(ablation_agents(newbie, evolved))`` (name ->
    ``TaskResults``: ``scores`` (tasks,), ``correct`` (tasks, trials))."""
    from course_utils.harlow.ablation import learning_rate_only

    newbie, evolved = results["newbie"], results["evolved"]
    _, lr_best = learning_rate_only(results)
    return {
        "newbie": newbie.mean, "evolved": evolved.mean, "evolved_median": float(np.median(evolved.scores)),
        "lr_best": lr_best.mean, "lr_gap": evolved.mean - lr_best.mean,
        "hyper_only": results["newbie weights + evolved hyperparameters"].mean,
        "weights_only": results["evolved weights + newbie hyperparameters"].mean,
        # trials 1-6 of a problem (before any gradient step), and the 20 evaluation trials
        "newbie_first": float(newbie.correct[:, :6].mean()), "evolved_first": float(evolved.correct[:, :6].mean()),
        "newbie_last": float(newbie.correct[:, -20:].mean()), "evolved_last": float(evolved.correct[:, -20:].mean()),
    }


def _both_parts(f: dict) -> bool:
    together = f["evolved"] - max(f["hyper_only"], f["weights_only"]) > 1
    # "with the newbie's slow learning rate they lose much of their advantage": more than half of it
    weights_lose = f["evolved"] - f["weights_only"] > 0.5 * (f["evolved"] - f["newbie"])
    return f["hyper_only"] > f["weights_only"] > f["newbie"] + 1 and together and weights_lose


def _chance(finals: list) -> dict:
    """``finals``: the cumulative reward after 100 trials of ``run_dummy_agent``, one per seed."""
    return {"runs": len(finals), "mean": float(np.mean(finals)), "sd": float(np.std(finals))}


CLAIMS = (
    Claim("harlow.win_stay_lose_shift_at_chance", "Section 1, a first baseline", "live:harlow.run_dummy_agent, 200 seeds",
          _chance,
          "Over {runs} runs of 100 trials, win-stay lose-shift ends at {mean:+.1f} on average (one run's spread: "
          "{sd:.0f}): no better than tossing a coin.",
          lambda f: f["runs"] >= 100 and abs(f["mean"]) < 3),
    Claim("harlow.saved_run_rises", "Section 2, the saved run", "harlow_evolution", _run,
          "Over {generations} generations ({agents} agents, each scored over {tasks} tasks) the population's mean "
          "score per task rose from {first:.1f} (first 10 generations) to {last:.1f} of 20 (last 10).",
          lambda f: f["last"] - f["first"] > 10 and f["generations"] == 800),  # the text says 800 (Sections 0 and 2)
    Claim("harlow.keeps_rising_after_200", "Section 2, after the live evolution", "harlow_evolution", _run,
          "Evolution keeps going long after 200 generations: the saved run's mean score per task was {at_200:.1f} "
          "around generation 200 and {last:.1f} over its last 10 generations.",
          lambda f: f["last"] - f["at_200"] > 2),
    Claim("harlow.evolved_hyperparameters", "Section 4, what evolution changed", "harlow_evolution", _hyper,
          "The evolved learning rate is {lr_ratio:.1f} times the newbie's, and gamma went down from {newbie_gamma} "
          "to {gamma:.2f}.",
          lambda f: f["lr_ratio"] >= 3 and f["gamma"] < f["newbie_gamma"]),
    Claim("harlow.final_pick", "Section 4, the evolved agent", "harlow_evolution", _run,
          "The evolved agent is the best of the final population, re-scored over {final_tasks} new tasks to pick it.",
          lambda f: f["final_tasks"] >= 100),
    Claim("harlow.lamarck_pulls_ahead", "Section 3, the race", "live:harlow.evolve_live, both inheritances, seed 1", _race,
          "From the same first population ({start:.1f} per task), after {generations} generations the Lamarckian "
          "population is ahead: {lamarckian:.1f} per task against the Baldwinian {baldwinian:.1f} (of 20).",
          lambda f: f["start"] == f["lamarckian_start"] and f["lead"] > 2),
    Claim("harlow.evolved_learns_fast", "Section 4, the same tasks", "live:harlow.same_tasks of the ablation agents",
          _ablation,
          "After the same 25 gradient steps the evolved agent scores {evolved:.1f} of 20 per task (median "
          "{evolved_median:.0f}): it has learned almost every task. The newbie scores {newbie:.1f}.",
          lambda f: f["evolved"] > 15 and f["evolved_median"] >= 18 and f["newbie"] < 8),
    Claim("harlow.not_just_the_learning_rate", "Section 4, the ablation", "live:harlow.same_tasks of the ablation agents",
          _ablation,
          "No learning rate alone brings the newbie up to the evolved agent: the best scores {lr_best:.1f}, "
          "{lr_gap:.1f} below it.",
          lambda f: f["lr_gap"] > 1),
    Claim("harlow.both_parts_needed", "Section 4, the ablation", "live:harlow.same_tasks of the ablation agents",
          _ablation,
          "The newbie's weights with the evolved hyperparameters score {hyper_only:.1f}, the evolved weights with the "
          "newbie's hyperparameters {weights_only:.1f}, neither (the newbie) {newbie:.1f}, both (the evolved agent) "
          "{evolved:.1f}: only the two together reach the evolved agent's score.",
          _both_parts),
    Claim("harlow.learns_across_trials_not_within", "Section 5, you against the agents",
          "live:harlow.same_tasks of the ablation agents", _ablation,
          "On the first 6 trials of a problem the newbie is right {newbie_first:.0%} of the time and the evolved agent "
          "{evolved_first:.0%} (chance); on the evaluation trials, after their gradient steps, {newbie_last:.0%} and "
          "{evolved_last:.0%}.",
          lambda f: all(0.4 < f[k] < 0.6 for k in ("newbie_first", "evolved_first")) and f["evolved_last"] > 0.9
          and f["newbie_last"] < 0.7),
)
