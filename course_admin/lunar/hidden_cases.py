"""Tutorial 3's hidden cases: the inputs each exercise is graded on, kept out of the student's package
(``course_utils.checking.HIDDEN_CASES``), and the oracle its judge needs for them (``ORACLES``).
Other sizes, seeds and values than the public cases of ``course_utils.lunar.checks``, of the same
kinds. A batch is ``"stored"`` (the public one) or ``{"seed", "lengths"}``: episodes of those
lengths made from that seed."""

from __future__ import annotations

import numpy as np

from course_admin.lunar import bandit_oracle
from course_admin.lunar.solutions import Episode
from course_utils.lunar.checks.agents import distribution_cases, lunar_step, toy_step
from course_utils.lunar.harness import Experience

BATCHES = [
    {"seed": 111, "lengths": [37, 12, 55, 23, 41]},
    {"seed": 212, "lengths": [64, 29]},
]
"""The batches several loss exercises are graded on."""


def policy_net() -> list[dict]:
    return [
        {"env": "lunar", "n_obs": 8, "n_actions": 4, "seed": 16, "batch": 9},
        {"env": "toy", "n_obs": 5, "n_actions": 3, "seed": 12, "batch": 6, "hidden": [9, 7]},
        {"env": "toy", "n_obs": 12, "n_actions": 6, "seed": 13, "batch": 4, "hidden": [20]},
        {"env": "lunar", "n_obs": 8, "n_actions": 4, "seed": 17, "batch": 5, "hidden": [24, 18, 14, 10]},
    ]


def agent_distribution() -> list[dict]:
    return distribution_cases([("lunar", 8, 4, seed) for seed in range(10, 14)] + [("toy", 5, 3, 14), ("toy", 6, 7, 15)],
                              seed=41)


def agent_step() -> dict:
    return {
        "episodes": [lunar_step(15, 2), lunar_step(31, 3), toy_step(6, 5, 19, 4), toy_step(2, 3, 23, 0)],
        "sampling": {**toy_step(4, 6, 22, None), "steps": 90},
    }


def calc_qvals() -> list[tuple[list[float], float, str]]:
    rng = np.random.default_rng(7007)
    return [
        ([2.0, -1.0, 0.5, 4.0], 0.8, "rewards [2, -1, 0.5, 4] with gamma 0.8"),
        ([0.0, 5.0], 0.3, "rewards [0, 5] with gamma 0.3"),
        ([7.5], 0.5, "a one-step episode"),
        (np.round(rng.normal(0, 3, 57), 3).tolist(), 0.95, "57 random rewards, gamma 0.95"),
        (np.round(rng.normal(-1, 5, 230), 3).tolist(), 0.99, "230 random rewards, gamma 0.99"),
    ]


def _qvals(rewards: list[float], gamma: float) -> list[float]:
    """The reference ``Episode.calc_qvals(gamma)`` of an episode with these rewards."""
    experiences = [Experience(None, None, r, t == len(rewards) - 1) for t, r in enumerate(rewards)]
    return Episode(float(sum(rewards)), experiences).calc_qvals(gamma)


def from_episodes() -> list[dict]:
    rng = np.random.default_rng(909)
    cases = []
    for gamma, n_obs, lengths in ((0.8, 6, (5, 1, 12)), (0.95, 8, (20, 7))):
        episodes = []
        for length in lengths:
            rewards = np.round(rng.normal(0, 2, length), 3).tolist()
            states = np.round(rng.normal(0, 1, (length, n_obs)), 4).tolist()
            episodes.append({
                "states": states,
                "actions": rng.integers(0, 4, length).tolist(),
                "rewards": rewards,
                "qvals": np.round(_qvals(rewards, gamma), 6).tolist(),
                "q_vals_undiscounted": np.round(_qvals(rewards, 1.0), 6).tolist(),
            })
        cases.append({"gamma": gamma, "episodes": episodes})
    return cases


def score_function() -> list[dict]:
    return [
        {"theta": [0.3, -1.2, 0.8], "mu": [-4.0, -2.5, -6.0], "noise": 0.5, "samples": 3000, "baseline": 0.0, "seed": 51,
         "what": "a 3-action bandit with negative rewards, without a baseline"},
        {"theta": [1.5, 0.0, -0.7, 0.2, 0.9], "mu": [10.0, 12.5, 9.0, 11.0, 10.5], "noise": 2.0, "samples": 5000,
         "baseline": 10.5, "seed": 52, "what": "a 5-action bandit with b = 10.5"},
        {"theta": [0.0, 0.4, -0.4, 1.1, -1.0, 0.6], "mu": [1.0, -1.0, 2.0, 0.0, 3.0, 0.5], "noise": 1.0, "samples": 4000,
         "baseline": "value", "seed": 63, "what": "a 6-action bandit with b = J(theta), computed from theta"},
        {"theta": [-0.2, 0.7, 0.1, 0.0], "mu": [3.0, 2.0, 4.0, 3.5], "noise": 0.0, "samples": 2500, "baseline": -1.5,
         "seed": 54, "what": "a 4-action bandit with exact rewards and b = -1.5"},
    ]


def pg_loss() -> list:
    return list(BATCHES)


def entropy_loss() -> list:
    batch = {"seed": 313, "lengths": [18, 44, 27]}
    return [
        ("max_entropy", 6),
        ("loss", 6, 1.0, batch),
        ("loss", 6, 0.35, batch),
        ("loss", 4, 1.0, BATCHES[1]),
        ("loss", 3, 1.0, {"uniform": 9}),
        ("loss", 3, 0.6, {"uniform": 5}),
    ]


def policy_trainer() -> list[dict]:
    return [
        {"seed": 17, "hidden": 24, "weight": 0.8, "lr": 0.02, "batch": {"seed": 414, "lengths": [22, 35, 18]}, "steps": 3},
        {"seed": 13, "hidden": 8, "weight": 0.2, "lr": 0.05, "batch": BATCHES[1], "steps": 2},
        {"seed": 15, "hidden": 10, "weight": 0.6, "lr": 0.03, "batch": BATCHES[0], "steps": 2, "values": True},
    ]


def aac_net() -> list[dict]:
    return [
        {"env": "lunar", "seed": 23, "rows": 9},
        {"env": [5, 3], "seed": 14, "rows": 6, "hidden": [9, 7]},
        {"env": [11, 6], "seed": 19, "rows": 4, "hidden": [20]},
        {"env": "lunar", "seed": 29, "rows": 5, "hidden": [24, 18, 14, 10]},
    ]


def aac_agent() -> list[dict]:
    return [{"seed": seed, "net": net, "value": value} for seed, net, value in ((27, 13, 1.5), (39, 18, -2.0), (51, 22, 0.5))]


def aac_loss() -> list[dict]:
    return [
        {"batch": BATCHES[0], "delta": 1.0},
        {"batch": BATCHES[0], "delta": 0.3},
        {"batch": {"seed": 515, "lengths": [31, 26, 47]}, "delta": 0.01},
    ]


HIDDEN = {
    "test_policy_net": policy_net,
    "test_agent_distribution": agent_distribution,
    "test_agent_step": agent_step,
    "test_calc_qvals": calc_qvals,
    "test_from_episodes": from_episodes,
    "test_score_function": score_function,
    "test_vpg_loss": pg_loss,
    "test_bpg_loss": pg_loss,
    "test_entropy_loss": entropy_loss,
    "test_policy_trainer": policy_trainer,
    "test_aac_net": aac_net,
    "test_aac_agent": aac_agent,
    "test_aac_loss": aac_loss,
}

ORACLES = {"test_score_function": bandit_oracle.figures}
"""What the judges need of a hidden case beyond the course's record, by grade id: the grader hands
them in (``course_utils.checking.ORACLES``)."""
