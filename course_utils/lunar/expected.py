"""Expected values for tutorial 3's checks, ``assets/lunar_expected.json``: inputs and the
reference implementations' outputs for ``calc_qvals``, ``from_episodes`` and the losses,
all drawn from one seed (``make_expected``), and the fixed test batch rebuilt from the file
(``expected_batch``).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch

from course_utils.lunar.harness import Experience
from course_utils.lunar.solutions import (
    AACPolicyGradientLoss,
    ActionEntropyLoss,
    BaselinePolicyGradientLoss,
    Episode,
    TrainBatch,
    VanillaPolicyGradientLoss,
)
from course_utils.paths import ASSETS

EXPECTED_FILE = ASSETS / "lunar_expected.json"


def make_expected(seed: int = 42) -> dict:
    """Inputs and expected outputs of calc_qvals and the losses, from the reference code.

    Everything comes from ``seed``: 100 integer rewards in [-10, 10) for calc_qvals (gamma
    0.9); a fixed batch of 4 synthetic episodes (random lengths 20-60, rewards, actions),
    its q-values (gamma 0.9), action scores from a standard normal and state values for the
    AAC loss. Regenerate the file with ``python -c "from course_utils.lunar import expected;
    expected.write_expected()"`` (a test checks it matches this function).
    """
    rng = np.random.default_rng(seed)
    rewards = rng.integers(-10, 10, 100).astype(float)
    qvals = Episode(float(rewards.sum()), [Experience(None, None, float(r), False) for r in rewards]).calc_qvals(0.9)
    episodes = []
    for _ in range(4):
        length = int(rng.integers(20, 61))
        ep_rewards = np.round(rng.normal(-1.0, 5.0, length), 3)
        ep_actions = rng.integers(0, 4, length)
        states = np.round(rng.normal(0.0, 1.0, (length, 8)), 3).astype(np.float32)
        experiences = [
            Experience(torch.as_tensor(s), int(a), float(r), t == length - 1)
            for t, (s, a, r) in enumerate(zip(states, ep_actions, ep_rewards, strict=True))
        ]
        episodes.append(Episode(float(ep_rewards.sum()), experiences))
    batch = TrainBatch.from_episodes(episodes, 0.9)
    n = len(batch)
    action_scores = torch.as_tensor(np.round(rng.normal(0.0, 1.0, (n, 4)), 4), dtype=torch.float32)
    state_values = torch.as_tensor(np.round(rng.normal(-5.0, 10.0, n), 3), dtype=torch.float32)
    vpg, _ = VanillaPolicyGradientLoss()(batch, action_scores)
    bpg, info = BaselinePolicyGradientLoss()(batch, action_scores)
    ent, _ = ActionEntropyLoss(4, 1.0)(batch, action_scores)
    aac, aac_info = AACPolicyGradientLoss(1.0)(batch, (action_scores, state_values.view(-1, 1)))
    return {
        # Stored in the file as written before the move to course_utils.lunar.expected (kept so the file stays the same).
        "how": "course_utils.lunar.make_expected(seed=42); write with course_utils.lunar.write_expected()",
        "calc_qvals": {"gamma": 0.9, "rewards": rewards.tolist(), "qvals": [round(q, 6) for q in qvals]},
        "batch": {
            "gamma": 0.9,
            "episodes": [
                {
                    "states": [[float(x) for x in e.state] for e in ep.experiences],
                    "actions": [e.action for e in ep.experiences],
                    "rewards": [e.reward for e in ep.experiences],
                }
                for ep in episodes
            ],
            "q_vals": [round(float(q), 6) for q in batch.q_vals],
            "action_scores": action_scores.tolist(),
            "state_values": state_values.tolist(),
        },
        "losses": {
            "vpg": round(vpg.item(), 6),
            "bpg": round(bpg.item(), 6),
            "baseline": round(info["baseline"], 6),
            "entropy_beta1": round(ent.item(), 6),
            "aac_delta1": round(aac.item(), 6),
            "aac_loss_p": round(aac_info["loss_p"], 6),
            "aac_loss_v": round(aac_info["loss_v"], 6),
        },
    }


def write_expected(path: Path = EXPECTED_FILE) -> None:
    """Regenerate ``assets/lunar_expected.json`` from ``make_expected()``."""
    path.write_text(json.dumps(make_expected(), indent=None, separators=(",", ":")) + "\n")


def load_expected(path: Path = EXPECTED_FILE) -> dict:
    return json.loads(path.read_text())


def expected_batch(expected: dict | None = None) -> tuple[list[Episode], TrainBatch, torch.Tensor, torch.Tensor]:
    """The fixed test batch from the expected file: (episodes, batch, action_scores (N, 4), state_values (N,))."""
    data = (expected or load_expected())["batch"]
    episodes = []
    for ep in data["episodes"]:
        length = len(ep["rewards"])
        experiences = [
            Experience(torch.tensor(s, dtype=torch.float32), a, r, t == length - 1)
            for t, (s, a, r) in enumerate(zip(ep["states"], ep["actions"], ep["rewards"], strict=True))
        ]
        episodes.append(Episode(float(sum(ep["rewards"])), experiences))
    batch = TrainBatch.from_episodes(episodes, data["gamma"])
    return episodes, batch, torch.tensor(data["action_scores"]), torch.tensor(data["state_values"])
