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


def _experiments_figures(stored: dict) -> dict:
    import numpy as np

    from course_utils.lunar.experiments import final_rewards

    finals = {name: final_rewards(run) for name, run in stored["runs"].items()}
    one_step = stored["ablations"]["aac, critic_steps=0"]
    return {
        "seeds": len(stored["seeds"]), "episodes": stored["max_episodes"],
        "aac": float(np.mean(finals["aac"])), "aac_min": min(finals["aac"]), "bpg": float(np.mean(finals["bpg"])),
        "bpg_min": min(finals["bpg"]), "cpg": float(np.mean(finals["cpg"])),
        "aac_above_bpg": all(a > b for a, b in zip(finals["aac"], finals["bpg"], strict=True)),
        "one_step": float(np.mean(final_rewards(one_step))), "one_step_max": max(final_rewards(one_step)),
        "one_step_adv": float(np.mean([np.mean(run["adv_m"][-50:]) for run in one_step["runs"]])),
        "aac_adv": float(np.mean([np.mean(run["adv_m"][-50:]) for run in stored["runs"]["aac"]["runs"]])),
    }


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
    Claim("lunar.aac_beats_the_baseline", "Section 7, the experiments", "lunar_experiments", _experiments_figures,
          "Over {seeds} seeds of {episodes} episodes the actor-critic ends at a mean of {aac:.0f}, above the batch-mean "
          "baseline ({bpg:.0f}) and the baseline with entropy ({cpg:.0f}), and above bpg on every seed.",
          lambda f: f["aac_above_bpg"] and f["aac"] > f["cpg"]),
    Claim("lunar.uncentred_critic_loses", "Section 7, the critic panels", "lunar_experiments", _experiments_figures,
          "With one critic step per batch the mean advantage stays at {one_step_adv:+.0f} to the end (with the critic's "
          "extra steps {aac_adv:+.0f}), and the actor-critic ends at {one_step:.0f}, below every seed of bpg.",
          lambda f: f["one_step_adv"] > 10 and abs(f["aac_adv"]) < 5 and f["one_step_max"] < f["bpg_min"]),
)
