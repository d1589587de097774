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


CLAIMS = (
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
)
