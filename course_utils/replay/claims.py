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


CLAIMS = (
    Claim("replay.seeds_vary", "Section 4, the stored comparison", "per_results", _comparison,
          "DQN on CartPole varies a lot from seed to seed: over {seeds} seeds the final scores span {uniform_span:.0f} "
          "points with the uniform memory and {prioritized_span:.0f} with the prioritized one.",
          lambda f: min(f["uniform_span"], f["prioritized_span"]) >= 40),
    Claim("replay.few_minutes", "Section 4, the stored comparison", "per_results", _comparison,
          "Recomputing the {seeds} + {seeds} stored runs of {frames} frames takes {cpu_minutes:.1f} minutes of CPU time.",
          lambda f: 1 <= f["cpu_minutes"] <= 10),
    Claim("replay.no_winner", "Section 4, reading the result", "per_results", _comparison,
          "Solved within {frames} frames: {uniform_solved} of {seeds} seeds with the uniform memory, "
          "{prioritized_solved} of {seeds} with the prioritized one, with alpha = {alpha} (mildly prioritized). {verdict}",
          lambda f: abs(f["uniform_solved"] - f["prioritized_solved"]) <= 1 and f["alpha"] <= 0.3
          and f["verdict"].startswith("Verdict: the difference")),
)
