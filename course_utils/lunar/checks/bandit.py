"""The softmax bandit of tutorial 3's exercise 5 (``score_function``): its cases, the samples each
case draws from its own seed, and the call of the student's estimator on them. Shared by the
check (``score_function``) and its judge (``bandit_judge``), which the grader's drive cannot read.

Shapes: ``K`` actions, ``S`` samples; tensors are float32 (actions: long).
"""

from __future__ import annotations

import numpy as np
import torch

from course_utils.checking import attempt

_PUBLIC = {"theta": [0.5, -0.5, 1.0, 0.0], "mu": [6.0, 5.0, 7.0, 5.5], "noise": 1.0}
"""The check cell's bandit: rewards around 6, all positive, as the level of LunarLander's returns is
far from 0 (there negative): without a baseline every sample pushes its own action up."""


def _score_cases() -> list[dict]:
    """Bandits (``theta``, ``mu``, ``noise``), the number of ``samples``, the ``baseline`` (a number or
    ``"value"``) and the ``seed`` of the draws."""
    return [
        {**_PUBLIC, "samples": 4000, "baseline": 0.0, "seed": 1, "what": "the 4-action bandit without a baseline"},
        {**_PUBLIC, "samples": 4000, "baseline": 6.0, "seed": 2, "what": "the 4-action bandit with b = 6"},
        {**_PUBLIC, "samples": 4000, "baseline": "value", "seed": 3,
         "what": "the 4-action bandit with b = J(theta), computed from theta"},
    ]


def policy(theta) -> np.ndarray:
    """softmax(theta) in float64: the probability of each action, (K,)."""
    z = np.asarray(theta, dtype=float)
    p = np.exp(z - z.max())
    return p / p.sum()


def draw(case: dict) -> tuple[np.ndarray, np.ndarray]:
    """The case's sampled actions (S,) int and rewards (S,) float64, from its seed."""
    rng = np.random.default_rng(case["seed"])
    pi = policy(case["theta"])
    actions = rng.choice(len(pi), size=case["samples"], p=pi)
    rewards = np.asarray(case["mu"], dtype=float)[actions] + case["noise"] * rng.standard_normal(case["samples"])
    return actions, rewards


def inputs(case: dict, actions: np.ndarray | None = None, rewards: np.ndarray | None = None) -> tuple:
    """What the answer is called with: ``theta`` (K,) float32 that requires grad, ``actions`` (S,)
    long, ``rewards`` (S,) float32 and the baseline (a float, or for ``"value"`` the 0-dim tensor
    ``sum_k softmax(theta)_k mu_k``, attached to ``theta``). Other draws than the case's may be given."""
    if actions is None:
        actions, rewards = draw(case)
    theta = torch.tensor(case["theta"], dtype=torch.float32, requires_grad=True)
    if case["baseline"] == "value":
        baseline = (torch.softmax(theta, dim=-1) * torch.tensor(case["mu"], dtype=torch.float32)).sum()
    else:
        baseline = float(case["baseline"])
    return theta, torch.as_tensor(actions, dtype=torch.long), torch.as_tensor(rewards, dtype=torch.float32), baseline


def baseline_text(case: dict) -> str:
    return "baseline=J(theta)" if case["baseline"] == "value" else f"baseline={case['baseline']:g}"


def call(score_function_gradient, case: dict, actions=None, rewards=None):
    """The answer on ``case`` (or on other draws of it): what came back, or ``records.error``."""
    return attempt(
        f"score_function_gradient(theta, actions, rewards, {baseline_text(case)})",
        score_function_gradient,
        *inputs(case, actions, rewards),
    )
