"""Tutorial 2's claims. Its results are computed live in the notebook (the pretrained agents
evaluated, the Section 3 runs), so its claims are checked by the tests that run them at the
notebook's size (``tests/colour``), with the figures and conditions declared here; see
``course_utils.claims``."""

from __future__ import annotations

from course_utils.claims import Claim


def _mode2(curves: dict) -> dict:
    replay, plain = curves["replay"], curves["no replay"]
    ablation = curves["replay without the importance ratio"]
    return {"replay_mode1": replay.mode1[-1], "plain_mode1": plain.mode1[-1], "replay_mode2": replay.mode2[-1],
            "plain_mode2": plain.mode2[-1], "side_bias": ablation.side_bias(), "ablation_mode1": ablation.mode1[-1],
            "ablation_mode2": ablation.mode2[-1], "ablation_reaches": ablation.steps_to_reach(0.9)}


def _forgetting(evaluations: dict) -> dict:
    """``evaluations``: {"mode1_on_1", "mode2_on_1", "mode2_on_2"}: ``evaluate_agent`` results of the
    pretrained mode-1 and mode-2 agents (the notebook's Section 2)."""
    from course_utils.colour.training import accuracy, pair_accuracy

    before, after = pair_accuracy(evaluations["mode1_on_1"]), pair_accuracy(evaluations["mode2_on_1"])
    drops = {pair: before[pair] - after[pair] for pair in before}
    worst = max(drops, key=drops.get)
    return {"worst": worst, "before": before[worst], "after": after[worst], "drop": drops[worst],
            "mode1_before": accuracy(evaluations["mode1_on_1"]), "mode1_after": accuracy(evaluations["mode2_on_1"]),
            "mode2": accuracy(evaluations["mode2_on_2"])}


def _mode1_agent(evaluations: dict) -> dict:
    """``evaluations``: {"mode1_on_1", "mode1_on_2"}: ``evaluate_agent`` results of the pretrained
    mode-1 agent on both modes (the notebook's Section 2)."""
    from course_utils.colour.training import accuracy, pair_accuracy

    pairs, on_2 = pair_accuracy(evaluations["mode1_on_1"]), pair_accuracy(evaluations["mode1_on_2"])
    return {"mode1": accuracy(evaluations["mode1_on_1"]), "red_green": pairs["red/green"],
            "red_yellow": pairs["red/yellow"], "yellow_green": pairs["yellow/green"], "green_blue": on_2["green/blue"]}


def _memory_sizes(sizes: dict) -> dict:
    """``sizes``: {"graph": bytes of one step's stored autograd graph, "kept": bytes of its experience}."""
    return {"graph_kb": sizes["graph"] / 1e3, "kept_kb": sizes["kept"] / 1e3, "times": sizes["graph"] / sizes["kept"]}


def _speed(curves: dict) -> dict:
    replay, plain = curves["replay"], curves["no replay"]
    every = replay.steps[1] - replay.steps[0]
    return {"replay_reach": replay.steps_to_reach(0.9), "plain_reach": plain.steps_to_reach(0.9), "every": every}


def _no_speed(f: dict) -> bool:
    if f["plain_reach"] is None:  # without replay mode 2 never reached 90%: nothing for replay to beat
        return True
    return f["replay_reach"] is not None and f["replay_reach"] >= f["plain_reach"] - 2 * f["every"]


CLAIMS = (
    Claim("colour.mode1_agent", "Section 2, the agent on mode 1", "live:colour.evaluate_agent of the pretrained mode-1 agent",
          _mode1_agent,
          "On mode 1 the agent picks the better colour in {mode1:.1%} of trials, and its mistakes are between colours "
          "whose rewards are close: red/green {red_green:.1%} right, red/yellow {red_yellow:.1%}, yellow/green "
          "{yellow_green:.1%}. On mode 2 it picks the unknown blue over green in only {green_blue:.1%} of those trials.",
          lambda f: f["mode1"] >= 0.95 and f["red_green"] >= max(f["red_yellow"], f["yellow_green"])
          and f["green_blue"] < 0.5),
    Claim("colour.graph_outweighs_experience", "Section 3, what the memory keeps", "live:colour.graph_nbytes",
          _memory_sizes,
          "One step's autograd graph saves {graph_kb:.1f} kB (the weights not counted); its experience is "
          "{kept_kb:.1f} kB, {times:.0f} times less.",
          lambda f: f["times"] >= 5),
    Claim("colour.logits_run_apart", "Section 3, the ablation", "live:colour.logit_gap of the replaying agents",
          lambda gaps: dict(gaps),
          "On the remembered trials the actor's two logits end {without:.0f} apart (median) without the ratio, "
          "{with_ratio:.1f} with it.",
          lambda f: f["with_ratio"] <= 20 and f["without"] >= 10 * f["with_ratio"]),
    Claim("colour.replay_buys_no_speed", "Section 3, the model answer of the Think! on replay's cost",
          "live:colour.compare_on_mode2", _speed,
          "On mode 2, replay reaches 90% after {replay_reach} steps and no replay after {plain_reach}: replay buys no "
          "speed.",
          _no_speed),
    Claim("colour.replay_keeps_mode1", "Section 3, the curves", "live:colour.compare_on_mode2", _mode2,
          "With replay and its importance ratio the agent ends mode 2 at {replay_mode1:.0%} right on mode 1, "
          "against {plain_mode1:.0%} without replay, and learns mode 2 as well ({replay_mode2:.0%}).",
          lambda f: f["replay_mode1"] >= 0.9 and f["replay_mode1"] >= f["plain_mode1"] + 0.03 and f["replay_mode2"] >= 0.9
          and f["plain_mode2"] >= 0.9),
    Claim("colour.without_ratio_collapses", "Section 3, the ablation", "live:colour.compare_on_mode2", _mode2,
          "Without the importance ratio the agent picks the same side {side_bias:.0%} of the time and ends at "
          "{ablation_mode1:.0%} (mode 1) and {ablation_mode2:.0%} (mode 2) right.",
          lambda f: f["side_bias"] >= 0.8 and max(f["ablation_mode1"], f["ablation_mode2"]) <= 0.65
          and f["ablation_reaches"] is None),
    Claim("colour.forgets_red_yellow", "Section 2, forgetting", "live:colour.evaluate_agent of the pretrained agents",
          _forgetting,
          "Mode-2 training leaves {mode2:.0%} right on mode 2, and mode 1 falls from {mode1_before:.1%} to "
          "{mode1_after:.1%}; the pair that suffers most is {worst}, from {before:.1%} to {after:.1%}.",
          lambda f: f["worst"] == "red/yellow" and f["drop"] >= 0.10 and f["mode1_after"] <= f["mode1_before"] - 0.03
          and f["mode2"] >= 0.95),
)
