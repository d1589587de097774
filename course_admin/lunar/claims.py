"""Tutorial 3's claims that only the solution notebook makes: the figures Question 3's model answer
quotes (hidden markdown, graded by hand, not in the student's notebook), from the course's stored
experiments (``assets/lunar_experiments.json``). ``course_admin.claims`` audits them with the
notebook's claims (``course_utils.lunar.claims``)."""

from __future__ import annotations

from course_utils.claims import Claim


def _question3(stored: dict) -> dict:
    """Every figure Question 3's model answer quotes, from the stored runs (seed means unless named)."""
    import numpy as np

    from course_utils.lunar.experiments import final_rewards

    runs = stored["runs"]
    one_step = stored["ablations"]["aac, critic_steps=0"]

    def first(name, key):
        return float(np.mean([run[key][0] for run in runs[name]["runs"]]))

    def last(name, key):
        return float(np.mean([run[key][-1] for run in runs[name]["runs"]]))

    def last50(experiment, key):
        return [float(np.mean(run[key][-50:])) for run in experiment["runs"]]

    f = {"episodes": stored["max_episodes"], "seeds": ", ".join(map(str, stored["seeds"])),
         "start": float(np.mean([run["mean_reward"][0] for e in runs.values() for run in e["runs"]]))}
    for name, run in runs.items():
        finals = final_rewards(run)
        f |= {name: float(np.mean(finals)), f"{name}_low": min(finals), f"{name}_high": max(finals)}
    f |= {"vpg_loss_p_first": first("vpg", "loss_p"), "vpg_loss_p_last": last("vpg", "loss_p"),
          "bpg_baseline_first": first("bpg", "baseline"), "bpg_baseline_last": last("bpg", "baseline"),
          "cpg_baseline_last": last("cpg", "baseline"), "entropy_first": first("cpg", "loss_e"),
          "entropy_last": last("cpg", "loss_e"), "aac_adv_first": first("aac", "adv_m"),
          "aac_loss_v_first": first("aac", "loss_v"), "aac_loss_p_first": first("aac", "loss_p")}
    adv, loss_v = last50(runs["aac"], "adv_m"), last50(runs["aac"], "loss_v")
    one_adv, one_loss_v, one_finals = last50(one_step, "adv_m"), last50(one_step, "loss_v"), final_rewards(one_step)
    # rounded as printed, + 0.0: a mean in (-0.05, 0) prints +0.0, not -0.0
    f |= {"aac_adv_low": round(min(adv), 1) + 0.0, "aac_adv_high": round(max(adv), 1) + 0.0, "aac_loss_v_low": min(loss_v),
          "aac_loss_v_high": max(loss_v), "one_adv_low": min(one_adv), "one_adv_high": max(one_adv),
          "one_loss_v_low": min(one_loss_v), "one_loss_v_high": max(one_loss_v),
          "one_step": float(np.mean(one_finals)), "one_low": min(one_finals), "one_high": max(one_finals)}
    return f


def _question3_holds(f: dict) -> bool:
    ranked = sorted(("vpg", "epg", "bpg", "cpg", "aac"), key=f.get, reverse=True)
    return (ranked[0] == "aac" and f["aac_low"] > max(f[f"{n}_high"] for n in ("vpg", "epg", "bpg", "cpg"))
            and f["bpg_low"] > max(f["vpg_high"], f["epg_high"])
            and f["cpg_low"] < f["bpg_high"] and min(f["vpg_high"], f["epg_high"]) > max(f["vpg_low"], f["epg_low"])
            and f["vpg_loss_p_first"] < -100 < 0 < f["vpg_loss_p_last"]
            and f["bpg_baseline_first"] < -50 and f["bpg_baseline_last"] > 0 and f["cpg_baseline_last"] > 0
            and f["entropy_last"] > f["entropy_first"]
            and abs(f["aac_loss_p_first"] - f["vpg_loss_p_first"]) < 0.1 * abs(f["vpg_loss_p_first"])
            and max(abs(f["aac_adv_low"]), abs(f["aac_adv_high"])) < 5 and f["one_adv_low"] > 10
            and f["one_loss_v_low"] > f["aac_loss_v_high"] and f["one_high"] < f["bpg_low"])


CLAIMS = (
    Claim("lunar.question3_figures", "Questions, the model answer of Question 3", "lunar_experiments", _question3,
          "The course's runs ({episodes} episodes, seeds {seeds}): every run starts near {start:.0f}. Final mean "
          "rewards (lowest to highest seed): aac {aac:.0f} ({aac_low:.0f} to {aac_high:.0f}), cpg {cpg:.0f} "
          "({cpg_low:.0f} to {cpg_high:.0f}), bpg {bpg:.0f} ({bpg_low:.0f} to {bpg_high:.0f}), vpg {vpg:.0f} "
          "({vpg_low:.0f} to {vpg_high:.0f}), epg {epg:.0f} ({epg_low:.0f} to {epg_high:.0f}). The policy loss of vpg "
          "goes from {vpg_loss_p_first:.0f} (first batch) to {vpg_loss_p_last:+.0f} (last); the baseline from "
          "{bpg_baseline_first:.0f} to {bpg_baseline_last:+.0f} (bpg) and {cpg_baseline_last:+.0f} (cpg); the entropy "
          "loss of cpg from {entropy_first:.2f} to {entropy_last:.2f}. aac's first batch: mean advantage "
          "{aac_adv_first:.0f}, value loss {aac_loss_v_first:,.0f}, policy loss {aac_loss_p_first:.0f}. Over the "
          "last 50 batches, seed by seed: aac's mean advantage {aac_adv_low:+.1f} to {aac_adv_high:+.1f}, value loss "
          "{aac_loss_v_low:,.0f} to {aac_loss_v_high:,.0f}; with one critic step per batch {one_adv_low:+.0f} to "
          "{one_adv_high:+.0f} and {one_loss_v_low:,.0f} to {one_loss_v_high:,.0f}, ending at {one_step:.0f} "
          "({one_low:.0f} to {one_high:.0f}).",
          _question3_holds),
)
