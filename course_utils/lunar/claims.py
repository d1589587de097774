"""Tutorial 3's claims over the course's stored runs: the lander trained until it passes the
bar (``assets/lunar_training.json``, ``course train lunar``), the five policy-gradient
experiments (``assets/lunar_experiments.json``, ``course train lunar-experiments``), the
gradient-variance measurement (``assets/lunar_variance.json``, ``course train lunar-variance``) and the timed
run of Section 8's cell (``assets/lunar_student_run.json``, ``course train lunar-student-run``); see
``course_utils.claims``. Claims in notebook order; those of Question 3's model answer, which only the
solution notebook quotes, are ``course_admin.lunar.claims``."""

from __future__ import annotations

from course_utils.claims import Claim


def _lander(curve: dict) -> dict:
    evaluation, solve = curve["evaluation"], curve["solve"]
    mean, std = evaluation["deterministic_mean"], evaluation["deterministic_std"]
    return {"mean": mean, "std": std, "margin": mean - std, "episodes": len(evaluation["deterministic_returns"]),
            "sampled": evaluation["sampled_mean"], "wall_s": solve["wall_s"], "cpu_s": solve["cpu_s"]}


def _training_curve() -> dict:
    import json

    from course_utils.lunar.evaluation import TRAINING_CURVE

    return json.loads(TRAINING_CURVE.read_text())


def _experiments() -> dict:
    from course_utils.lunar.experiments import stored_results

    return stored_results()


def _student_run() -> dict:
    from course_utils.lunar.solve import stored_student_run

    return stored_student_run()


def _variance_results() -> dict:
    from course_utils.lunar.variance import stored_variance

    return stored_variance()


RESULTS = {"lunar_training": _training_curve, "lunar_experiments": _experiments, "lunar_student_run": _student_run,
           "lunar_variance": _variance_results}
"""Stored result name -> loader (``assets/lunar_training.json``, ``assets/lunar_experiments.json``,
``assets/lunar_student_run.json``, ``assets/lunar_variance.json``)."""


def _seed_spread(stored: dict) -> dict:
    """How far the seeds of one experiment end apart, against the gaps between the experiments' means."""
    import itertools

    import numpy as np

    from course_utils.lunar.experiments import final_rewards

    finals = {name: final_rewards(run) for name, run in stored["runs"].items() if name != "aac"}
    spans = {name: max(f) - min(f) for name, f in finals.items()}
    widest = max(spans, key=spans.get)
    gaps = {(a, b): abs(np.mean(finals[a]) - np.mean(finals[b])) for a, b in itertools.combinations(finals, 2)}
    closest = min(gaps, key=gaps.get)
    return {"widest": widest, "span": spans[widest], "low": min(finals[widest]), "high": max(finals[widest]),
            "closest": " and ".join(closest), "gap": gaps[closest]}


def _bars(stored: dict) -> dict:
    """The best of each experiment's seed-mean curve (what ``performance_bar`` prints) and the bars."""
    from course_utils.lunar.experiments import PERFORMANCE_BARS

    return {"cpg": max(stored["runs"]["cpg"]["mean_reward"]), "aac": max(stored["runs"]["aac"]["mean_reward"]),
            "cpg_bar": PERFORMANCE_BARS["cpg"], "aac_bar": PERFORMANCE_BARS["aac"]}


def _critic_start(stored: dict) -> dict:
    """The first batch of the ``aac`` and ``vpg`` runs (an untrained critic), and how far the value loss fell."""
    import numpy as np

    aac, vpg = stored["runs"]["aac"]["runs"], stored["runs"]["vpg"]["runs"]
    return {"adv": float(np.mean([run["adv_m"][0] for run in aac])),
            "aac_loss_p": float(np.mean([run["loss_p"][0] for run in aac])),
            "vpg_loss_p": float(np.mean([run["loss_p"][0] for run in vpg])),
            "loss_v_first": float(np.mean([run["loss_v"][0] for run in aac])),
            "loss_v_last": float(np.mean([np.mean(run["loss_v"][-50:]) for run in aac]))}


def _student(run: dict) -> dict:
    evaluation = run["final_evaluation"]
    return {"episodes": run["episodes"], "training": run["training_mean"], "greedy": evaluation["mean"],
            "std": evaluation["std"], "solved": run["solved"]}


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


def _first_batches(stored: dict) -> dict:
    """The first batch of every stored run: an untrained network, before any gradient step."""
    import numpy as np

    runs = [run for experiment in stored["runs"].values() for run in experiment["runs"]]
    first = [run["mean_reward"][0] for run in runs]
    # the entropy loss of the first batch is -beta * H / H_max: how close to uniform a fresh network acts
    # (in the two policy-gradient experiments with an entropy bonus, whose beta is pg_hp's)
    entropy = [-run["loss_e"][0] / stored["pg_hp"]["beta"] for name in ("epg", "cpg") for run in stored["runs"][name]["runs"]]
    return {"runs": len(runs), "start": float(np.mean(first)), "low": min(first), "high": max(first),
            "entropy": float(min(entropy))}


def _variance(stored: dict) -> dict:
    """``stored``: the stored measurement (``variance.stored_variance``)."""
    import numpy as np

    from course_utils.lunar.variance import ESTIMATORS, POLICIES

    fresh_name, agent_name = POLICIES
    total, to_go, batch_mean, critic = ESTIMATORS
    results = stored["results"]
    summary = {policy: result["estimators"] for policy, result in results.items()}
    figures = {}
    for key, policy in (("fresh", fresh_name), ("agent", agent_name)):
        for short, name in (("to_go", to_go), ("batch_mean", batch_mean), ("critic", critic)):
            figures[f"{key}_{short}"] = summary[policy][name]["relative"]
        figures[f"{key}_ordered"] = all(summary[policy][a]["variance"] > summary[policy][b]["variance"]
                                        for a, b in zip(ESTIMATORS, ESTIMATORS[1:], strict=False))
    cos = {name: summary[fresh_name][name]["cosine"] for name in ESTIMATORS}
    fresh, agent = results[fresh_name], results[agent_name]
    return figures | {
        "cos_without": max(cos[total], cos[to_go]), "cos_with": min(cos[batch_mean], cos[critic]),
        "agent_best_cos": max(summary[agent_name][name]["cosine"] for name in ESTIMATORS), "fresh_critic_cos": cos[critic],
        "agent_positive": float(np.mean(np.asarray(agent["returns"]) > 0)), "agent_return": float(np.mean(agent["returns"])),
        "fresh_episodes": len(fresh["lengths"]), "fresh_truncated": fresh["truncated"],
        "fresh_length": float(np.mean(fresh["lengths"])),
        "agent_cut_off": agent["truncated"] / len(agent["lengths"]),
    }


def _sanity(data: dict) -> dict:
    """``data``: what ``PolicyTrainer.train`` returned for Section 5's sanity run (batches of 16)."""
    return {"reward": data["mean_reward"][-1], "batches": len(data["mean_reward"]), "episodes": data["episode_num"][-1]}


CLAIMS = (
    Claim("lunar.fresh_network_crashes_early", "Section 3, where the targets are biased",
          "lunar_variance", _variance,
          "{fresh_truncated} of the {fresh_episodes} episodes of a fresh network were cut off at 300 steps; they last "
          "{fresh_length:.0f} steps on average.",
          lambda f: f["fresh_truncated"] < 0.05 * f["fresh_episodes"] and f["fresh_length"] < 150),
    Claim("lunar.fresh_network_acts_uniformly", "Section 4, the measurement", "lunar_experiments", _first_batches,
          "In the first batch of every stored run with an entropy bonus, a fresh network's policy has at least "
          "{entropy:.1%} of the largest entropy there is: it acts almost uniformly at random.",
          lambda f: f["entropy"] > 0.99),
    Claim("lunar.baselines_cut_variance", "Section 4, what the measurement shows", "lunar_variance",
          _variance,
          "Relative to the total reward's, one batch's gradient variance is {fresh_to_go:.0%} with the reward-to-go, "
          "{fresh_batch_mean:.1%} with the batch-mean baseline and {fresh_critic:.1%} with the critic for a fresh "
          "network; {agent_to_go:.0%}, {agent_batch_mean:.1%} and {agent_critic:.1%} for the course's agent.",
          lambda f: f["fresh_ordered"] and f["agent_ordered"] and f["fresh_batch_mean"] < 0.5 * f["fresh_to_go"]),
    Claim("lunar.baselines_point_the_way", "Section 4, what the measurement shows", "lunar_variance",
          _variance,
          "For a fresh network, a batch's gradient has a mean cosine of at least {cos_with:+.2f} with the mean gradient "
          "with a baseline, and at most {cos_without:+.2f} without.",
          lambda f: f["cos_with"] > f["cos_without"] + 0.2),
    Claim("lunar.near_a_good_policy", "Section 4, what the measurement shows", "lunar_variance",
          _variance,
          "{agent_positive:.0%} of the course's agent's episodes end with a positive total reward (mean "
          "{agent_return:.0f}), though {agent_cut_off:.0%} of them are cut off at 300 steps rather than landed (sampled "
          "actions); the critic leaves it {agent_critic:.1%} of the variance (a fresh network "
          "{fresh_critic:.1%}), and even its best estimator's batches have a mean cosine of only {agent_best_cos:+.2f}.",
          lambda f: f["agent_positive"] > 0.8 and f["agent_cut_off"] > 0.5 and f["agent_critic"] < f["fresh_critic"]
          and f["agent_best_cos"] < f["fresh_critic_cos"]),
    Claim("lunar.untrained_start", "Section 5, a sanity check", "lunar_experiments", _first_batches,
          "An untrained policy scores {start:.0f} on average: the first batch of the {runs} stored runs, from {low:.0f} "
          "to {high:.0f}.",
          lambda f: -230 < f["start"] < -150 and f["high"] < -150),
    Claim("lunar.sanity_run_passes", "Section 5, a sanity check", "live:the notebook's sanity run (PolicyTrainer.train)",
          _sanity,
          "The sanity run reached a mean of {reward:.0f} over its last 10 episodes after {batches} batches of 16 "
          "episodes: past -150 within 12 batches.",
          lambda f: f["reward"] >= -150 and f["batches"] <= 12 and f["episodes"] <= 12 * 16),
    Claim("lunar.seeds_end_apart", "Section 6, one run can mislead", "lunar_experiments", _seed_spread,
          "The seeds of one experiment end up to {span:.0f} points apart ({widest}: {low:.0f} to {high:.0f}), more than "
          "the gap between two experiments' means ({closest}: {gap:.0f}).",
          lambda f: f["span"] >= 20 and f["span"] > f["gap"]),
    Claim("lunar.good_runs_clear_100", "Sections 6 and 7, the yardsticks", "lunar_experiments", _bars,
          "The course's full-size runs: cpg's best mean reward {cpg:.0f} (bar {cpg_bar:g}), aac's {aac:.0f} "
          "(bar {aac_bar:g}): good runs get above 100.",
          lambda f: f["cpg"] > max(100, f["cpg_bar"]) and f["aac"] > max(100, f["aac_bar"])),
    Claim("lunar.aac_beats_the_baseline", "Section 7, the experiments", "lunar_experiments", _experiments_figures,
          "Over {seeds} seeds of {episodes} episodes the actor-critic ends at a mean of {aac:.0f}, above the batch-mean "
          "baseline ({bpg:.0f}) and the baseline with entropy ({cpg:.0f}), and above bpg on every seed.",
          lambda f: f["aac_above_bpg"] and f["aac"] > f["cpg"]),
    Claim("lunar.untrained_critic_acts_like_vpg", "Section 7, the critic panels", "lunar_experiments", _critic_start,
          "In the first batch the untrained critic leaves a mean advantage of {adv:+.0f}, and aac's policy loss starts "
          "where vpg's does ({aac_loss_p:.0f} and {vpg_loss_p:.0f}); the value loss then falls from {loss_v_first:,.0f} to "
          "{loss_v_last:,.0f} (the last 50 batches), not to zero.",
          lambda f: f["adv"] < -50 and abs(f["aac_loss_p"] - f["vpg_loss_p"]) < 0.1 * abs(f["vpg_loss_p"])
          and 0 < f["loss_v_last"] < f["loss_v_first"] / 10),
    Claim("lunar.uncentred_critic_loses", "Section 7, the critic panels", "lunar_experiments", _experiments_figures,
          "With one critic step per batch the mean advantage stays at {one_step_adv:+.0f} to the end (with the critic's "
          "extra steps {aac_adv:+.0f}), and the actor-critic ends at {one_step:.0f}, below every seed of bpg.",
          lambda f: f["one_step_adv"] > 10 and abs(f["aac_adv"]) < 5 and f["one_step_max"] < f["bpg_min"]),
    Claim("lunar.lands_in_minutes", "Section 8, the course's agent, and the summary", "lunar_training", _lander,
          "The course's trainer passed the bar in {wall_s:.0f} s ({cpu_s:.0f} s of CPU time) on the machine that "
          "trained it.",
          lambda f: f["wall_s"] < 300),
    Claim("lunar.course_agent_solves", "Section 8, the course's agent", "lunar_training", _lander,
          "Over {episodes} new landscapes the course's agent scores a mean of {mean:.0f} with a standard deviation "
          "of {std:.0f}: mean minus deviation {margin:.0f}, at least 200, so it solves LunarLander.",
          lambda f: f["episodes"] >= 100 and f["margin"] >= 200),
    Claim("lunar.greedy_beats_sampled", "Section 8, the course's agent", "lunar_training", _lander,
          "Flying its most probable actions, the agent scores {mean:.0f} on average; sampling its actions, as in "
          "training, {sampled:.0f}.",
          lambda f: f["mean"] - f["sampled"] > 50),
    Claim("lunar.student_run_greedy_above_training", "Section 8, your agent", "lunar_student_run", _student,
          "The course's timed run of Section 8's cell passed the bar after {episodes:,} episodes: its training mean "
          "(sampled actions) was {training:.0f}, and the same weights flying their most probable actions scored "
          "{greedy:.0f} ± {std:.0f}.",
          lambda f: f["solved"] and f["greedy"] - f["training"] > 50),
)
