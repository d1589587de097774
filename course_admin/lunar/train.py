"""``course train lunar``: the course's lander trained until it passes the bar, evaluated, and
saved (the checkpoint ``lunar_aac`` and the training curve ``assets/lunar_training.json``)."""

from __future__ import annotations

import json

from course_admin.lunar.aac import CHECKPOINT, TRAINING_CURVE, evaluate
from course_admin.lunar.solve import train_until_solved
from course_utils.checkpoints import save_checkpoint
from course_utils.lunar.env import EVAL_SEEDS


def train_and_register(progress: bool = True) -> None:
    """``course train lunar``: train the course's lander until it passes the bar, evaluate it
    (greedy and sampled actions on the 100 evaluation seeds), save the checkpoint and the curve."""
    net, result = train_until_solved(progress=progress)
    if not result["solved"]:
        raise RuntimeError(f"The lander did not pass the bar within {result['steps']} steps; nothing was saved. "
                           "Check aac.DEFAULT_AAC against the registered training curve (assets/lunar_training.json).")
    curve = result.pop("curve")
    det = evaluate(net, EVAL_SEEDS, deterministic=True)
    sampled = evaluate(net, EVAL_SEEDS, deterministic=False)
    curve["evaluation"] = {
        "seeds": [EVAL_SEEDS[0], EVAL_SEEDS[-1]],
        "deterministic_mean": float(det.mean()),
        "deterministic_std": float(det.std()),
        "sampled_mean": float(sampled.mean()),
        "sampled_std": float(sampled.std()),
        "deterministic_returns": [round(float(x), 3) for x in det],
    }
    entry = save_checkpoint(net.state_dict(), CHECKPOINT, "course train lunar")
    TRAINING_CURVE.write_text(json.dumps(curve, indent=1) + "\n")
    print(f"wrote assets/checkpoints/{entry['file']} ({entry['size']} bytes) and {TRAINING_CURVE.name}")
    print(f"solved after {result['steps']} steps, {curve['episodes'][-1]} episodes: {result['wall_s']:.0f} s wall, "
          f"{result['cpu_s']:.0f} s CPU (every process, evaluations included)")
    print(f"evaluation over {len(det)} episodes: argmax {det.mean():.1f} ± {det.std():.1f}, "
          f"sampled {sampled.mean():.1f} ± {sampled.std():.1f}")
