"""Tutorial 3's claims over the course's stored runs: the lander trained until it passes the
bar (``assets/lunar_training.json``, ``course train lunar``) and the five policy-gradient
experiments (``assets/lunar_experiments.json``, ``course train lunar-experiments``); see
``course_utils.claims``."""

from __future__ import annotations

from course_utils.claims import Claim


def _lander(curve: dict) -> dict:
    evaluation, solve = curve["evaluation"], curve["solve"]
    mean, std = evaluation["deterministic_mean"], evaluation["deterministic_std"]
    return {"mean": mean, "std": std, "margin": mean - std, "episodes": len(evaluation["deterministic_returns"]),
            "sampled": evaluation["sampled_mean"], "wall_s": solve["wall_s"], "cpu_s": solve["cpu_s"]}


def _training_curve() -> dict:
    import json

    from course_utils.lunar.aac import TRAINING_CURVE

    return json.loads(TRAINING_CURVE.read_text())


def _experiments() -> dict:
    from course_utils.lunar.experiments import stored_results

    return stored_results()


RESULTS = {"lunar_training": _training_curve, "lunar_experiments": _experiments}
"""Stored result name -> loader (``assets/lunar_training.json``, ``assets/lunar_experiments.json``)."""


CLAIMS = (
    Claim("lunar.course_agent_solves", "Section 8, the course's agent", "lunar_training", _lander,
          "Over {episodes} new landscapes the course's agent scores a mean of {mean:.0f} with a standard deviation "
          "of {std:.0f}: mean minus deviation {margin:.0f}, at least 200, so it solves LunarLander.",
          lambda f: f["episodes"] >= 100 and f["margin"] >= 200),
    Claim("lunar.greedy_beats_sampled", "Section 8, the course's agent", "lunar_training", _lander,
          "Flying its most probable actions, the agent scores {mean:.0f} on average; sampling its actions, as in "
          "training, {sampled:.0f}.",
          lambda f: f["mean"] - f["sampled"] > 50),
    Claim("lunar.lands_in_minutes", "Summary", "lunar_training", _lander,
          "The course's trainer passed the bar in {wall_s:.0f} s ({cpu_s:.0f} s of CPU time) on the machine that "
          "trained it.",
          lambda f: f["wall_s"] < 300),
)
