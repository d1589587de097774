"""Tutorial 4's claims over the stored uniform-vs-prioritized comparison
(``assets/per_results.json``, ``course train cartpole-comparison``); see ``course_utils.claims``."""

from __future__ import annotations

import numpy as np

from course_utils.claims import Claim


def _comparison(stored: dict) -> dict:
    from course_utils.replay.dqn import comparison_verdict, summarize_comparison

    summary = summarize_comparison(stored)
    curves = stored["curves"]
    finals = {kind: [s[-1] for s in curve["scores"] if s[-1] is not None] for kind, curve in curves.items()}
    return {
        "seeds": min(len(curve["seeds"]) for curve in curves.values()),
        "frames": stored["config"]["num_frames"], "alpha": stored["config"]["alpha"],
        "uniform_solved": summary["uniform"]["solved"], "prioritized_solved": summary["prioritized"]["solved"],
        "uniform_span": float(np.ptp(finals["uniform"])), "prioritized_span": float(np.ptp(finals["prioritized"])),
        "cpu_minutes": sum(sum(curve["cpu_s"]) for curve in curves.values()) / 60,
        "verdict": comparison_verdict(summary),
    }


def _comparison_file() -> dict:
    from course_utils.replay.dqn import load_results

    return load_results()


RESULTS = {"per_results": _comparison_file}
"""Stored result name -> loader (``assets/per_results.json``)."""


def _watch(watch) -> dict:
    """``watch``: ``dqn.random_and_trained`` (the same episode with random pushes and the trained agent)."""
    from course_utils.replay.dqn import MAX_EPISODE_STEPS

    return {"trained": watch.trained_score, "random": watch.random_score, "best": MAX_EPISODE_STEPS}


def _surprise(held: dict) -> dict:
    """``held``: {"td_errors": (N,) |TD errors| of the trained Q-network, "done": (N,) 0/1} on the
    memory's transitions."""
    errors, done = np.asarray(held["td_errors"], dtype=float), np.asarray(held["done"], dtype=float)
    worst = int(errors.argmax())
    lower_median = float(np.sort(errors)[(len(errors) - 1) // 2])  # the one torch.median gives, as the notebook prints
    return {"worst": float(errors[worst]), "median": lower_median, "worst_done": int(done[worst]),
            "slots": len(errors)}


def _compounding(schedule: dict) -> dict:
    """``schedule``: {"total_steps", "beta0"}: the Rainbow notebook's in-place update of beta, run."""
    total, beta = schedule["total_steps"], schedule["beta0"]
    first = None
    for step in range(1, total + 1):
        beta = beta + (step / total) * (1 - beta)
        if first is None and beta > 0.99:
            first = step
    return {"first": first, "total": total, "share": first / total}


CLAIMS = (
    Claim("replay.trained_agent_balances", "Section 0, watch a trained agent", "live:dqn.random_and_trained", _watch,
          "On the same episode, random pushes keep the pole up {random:.0f} steps and the course's trained agent "
          "{trained:.0f}, the most an episode lasts.",
          lambda f: f["trained"] == f["best"] > f["random"]),
    Claim("replay.largest_errors_at_the_end", "Section 1, the Think! on what to replay",
          "live:the trained Q-network's TD errors on the memory", _surprise,
          "The largest |TD error| of the {slots} held transitions, {worst:.1f} (median {median:.2f}), is on a step "
          "where the episode ended (done = {worst_done}).",
          lambda f: f["worst_done"] == 1 and f["worst"] > 5 * f["median"]),
    Claim("replay.compounding_beta_early", "Section 2, two pitfalls", "live:the compounding update of beta, run",
          _compounding,
          "The compounding update passes 0.99 at step {first} of {total}: after {share:.1%} of training.",
          lambda f: f["first"] is not None and f["share"] < 0.05),
    Claim("replay.seeds_vary", "Section 4, the stored comparison", "per_results", _comparison,
          "DQN on CartPole varies a lot from seed to seed: over {seeds} seeds the final scores span {uniform_span:.0f} "
          "points with the uniform memory and {prioritized_span:.0f} with the prioritized one.",
          lambda f: min(f["uniform_span"], f["prioritized_span"]) >= 40),
    Claim("replay.few_minutes", "Section 4, the stored comparison", "per_results", _comparison,
          "Recomputing the {seeds} + {seeds} stored runs of {frames} frames takes {cpu_minutes:.1f} minutes of CPU time.",
          lambda f: 1 <= f["cpu_minutes"] <= 10),
    Claim("replay.short_runs_often_unsolved", "Section 3, watching your agent", "per_results", _comparison,
          "In {frames} frames the course's own runs solved CartPole on {prioritized_solved} of {seeds} seeds with the "
          "prioritized memory ({uniform_solved} of {seeds} with the uniform one): an agent this young may still drop "
          "the pole.",
          lambda f: f["prioritized_solved"] < f["seeds"] and f["uniform_solved"] < f["seeds"]),
    Claim("replay.no_winner", "Section 4, reading the result", "per_results", _comparison,
          "Solved within {frames} frames: {uniform_solved} of {seeds} seeds with the uniform memory, "
          "{prioritized_solved} of {seeds} with the prioritized one, with alpha = {alpha} (mildly prioritized): as the "
          "verdict above says, no memory is shown to be better.",
          lambda f: abs(f["uniform_solved"] - f["prioritized_solved"]) <= 1 and f["alpha"] <= 0.3
          and f["verdict"].startswith("Verdict: the difference")),
)
