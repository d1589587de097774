"""Tutorial 3's optional, ungraded exercises: bootstrapping at truncation, and GAE.

The course's own trainer (``aac.train_aac``) uses both; the notebook lets a student write them
and check them here. Nothing later in the notebook needs them. Each check runs the student's
function on a few cases, compares it with the course's answer, and when it differs names the
typical mistake that fits (``BOOTSTRAP_HINTS``, ``GAE_HINTS``), using the same ``verdict`` as
the graded checks (a message, True or False; never an exception that stops "Run all").

Shapes: ``T`` steps of one episode or one environment's rollout.
"""

from __future__ import annotations

import numpy as np
import torch

from course_utils.checking import Problem, call_student, fmt, verdict
from course_utils.lunar.aac import gae_advantages

BOOTSTRAP_HINTS = {
    "bootstraps_termination": "a terminated episode (landed or crashed) has no future: start from 0 there, and from "
                              "last_value only when the episode was truncated.",
    "never_bootstraps": "when the episode was truncated, start the backward sum from last_value (the critic's value of "
                        "the state the time limit cut it off in) instead of 0.",
    "undiscounted_value": "last_value is one step after the last reward: it is discounted by gamma like every later "
                          "reward (q_T-1 = r_T-1 + gamma * last_value).",
    "value_added_everywhere": "add last_value once, at the end, and let the backward recursion discount it: "
                              "step t gets gamma^(T - t) * last_value, not last_value.",
}
"""Named hints of ``check_bootstrapped_qvals``: the mistake each describes."""

GAE_HINTS = {
    "no_episode_mask": "stop the recursion where an episode ends: multiply the advantage carried back by (1 - ends[t]), "
                       "or advantages of one episode leak into the one before it.",
    "lambda_ignored": "the advantage carried back from step t + 1 is weighted by gamma * lam, not by gamma alone "
                      "(lam = 1 gives the bootstrapped return minus v, lam = 0 the one-step TD error).",
    "wrong_td_error": "the TD error is delta_t = r_t + gamma * next_values[t] - values[t]: check each term "
                      "(with lam = 0 the advantage is exactly delta_t).",
    "forward_order": "go backwards, from the last step to the first: A_t needs A_t+1.",
}
"""Named hints of ``check_gae``: the mistake each describes."""


# --------------------------------------------------------------------------------------------
# Bootstrapping at truncation
# --------------------------------------------------------------------------------------------


def bootstrapped_reference(rewards, gamma: float, truncated: bool, last_value: float) -> np.ndarray:
    """The course's answer: q_t = sum_k gamma^k r_t+k + gamma^(T - t) * last_value if truncated."""
    rewards = np.asarray(rewards, dtype=float)
    steps = np.arange(len(rewards))
    powers = gamma ** (steps[None, :] - steps[:, None])
    discounted = (np.triu(powers) * rewards[None, :]).sum(1)
    return discounted + (gamma ** (len(rewards) - steps) * last_value if truncated else 0.0)


def _bootstrap_cases() -> list[dict]:
    rng = np.random.default_rng(3)
    return [
        dict(rewards=[1.0, 2.0, 3.0], gamma=0.5, truncated=True, last_value=8.0),
        dict(rewards=[1.0, 2.0, 3.0], gamma=0.5, truncated=False, last_value=8.0),
        dict(rewards=list(rng.normal(0, 3, 12).round(3)), gamma=0.9, truncated=True, last_value=-20.0),
        dict(rewards=list(rng.normal(0, 3, 7).round(3)), gamma=0.99, truncated=False, last_value=50.0),
    ]


def _bootstrap_hint(got: np.ndarray, case: dict) -> str:
    r, g, v = case["rewards"], case["gamma"], case["last_value"]
    plain = bootstrapped_reference(r, g, False, 0.0)
    candidates = {
        "bootstraps_termination": bootstrapped_reference(r, g, True, v),
        "never_bootstraps": plain,
        "undiscounted_value": plain + g ** (len(r) - 1 - np.arange(len(r))) * v,
        "value_added_everywhere": plain + v,
    }
    want = bootstrapped_reference(**case)
    for name, values in candidates.items():
        if np.allclose(got, values, atol=1e-4) and not np.allclose(values, want, atol=1e-4):
            return BOOTSTRAP_HINTS[name]
    return "work backwards from the end: running = (last_value if truncated else 0), then running = r_t + gamma * running."


def check_bootstrapped_qvals(bootstrapped_qvals) -> bool:
    """Check ``bootstrapped_qvals(rewards, gamma, truncated, last_value)``: prints a verdict (with a
    named hint from ``BOOTSTRAP_HINTS`` when a typical mistake fits) and returns whether it passed."""

    def check():
        for case in _bootstrap_cases():
            what = f"bootstrapped_qvals({case})"
            got = np.asarray(call_student(what, bootstrapped_qvals, list(case["rewards"]), case["gamma"],
                                          case["truncated"], case["last_value"]), dtype=float).reshape(-1)
            want = bootstrapped_reference(**case)
            if got.shape != want.shape:
                raise Problem(f"for {what}: expected {len(want)} values (one per step), got {got.size}.")
            if not np.allclose(got, want, atol=1e-4):
                raise Problem(f"for {what}: expected {fmt(want)}, got {fmt(got)}. Hint: {_bootstrap_hint(got, case)}")

    return verdict("bootstrapped_qvals (optional)", check)


# --------------------------------------------------------------------------------------------
# Generalised advantage estimation
# --------------------------------------------------------------------------------------------


def gae_reference(rewards, values, next_values, ends, gamma: float, lam: float) -> np.ndarray:
    """The course's answer for one environment (arrays of length T), from ``aac.gae_advantages``."""
    as_column = lambda x: torch.as_tensor(np.asarray(x, dtype=np.float64)).reshape(-1, 1)  # noqa: E731
    out = gae_advantages(as_column(rewards), as_column(values), as_column(next_values), as_column(ends), gamma, lam)
    return out.reshape(-1).numpy()


def _gae_cases() -> list[dict]:
    rng = np.random.default_rng(5)
    cases = []
    for lam, n in ((0.0, 5), (1.0, 6), (0.9, 10), (0.5, 12)):
        rewards = rng.normal(0, 2, n).round(3)
        values = rng.normal(0, 4, n).round(3)
        ends = np.zeros(n)
        ends[[n // 2, n - 1]] = 1.0  # two episodes end in this stream
        following = np.append(values[1:], rng.normal(0, 4))
        next_values = np.where(ends.astype(bool), [0.0 if i == n // 2 else 3.0 for i in range(n)], following)
        cases.append(dict(rewards=list(rewards), values=list(values), next_values=list(next_values.round(3)),
                          ends=list(ends), gamma=0.9, lam=lam))
    return cases


def _gae_mistakes(case: dict) -> dict[str, np.ndarray]:
    r, v, nv, e = (np.asarray(case[k], dtype=float) for k in ("rewards", "values", "next_values", "ends"))
    g, lam = case["gamma"], case["lam"]

    def recursion(carry, delta, backwards=True):
        out, running = np.zeros(len(r)), 0.0
        order = range(len(r) - 1, -1, -1) if backwards else range(len(r))
        for t in order:
            running = delta[t] + carry(t) * running
            out[t] = running
        return out

    delta = r + g * nv - v
    return {
        "no_episode_mask": recursion(lambda t: g * lam, delta),
        "lambda_ignored": recursion(lambda t: g * (1.0 - e[t]), delta),
        "wrong_td_error": recursion(lambda t: g * lam * (1.0 - e[t]), r + g * nv - 0 * v),
        "forward_order": recursion(lambda t: g * lam * (1.0 - e[t]), delta, backwards=False),
    }


def check_gae(gae) -> bool:
    """Check ``gae(rewards, values, next_values, ends, gamma, lam)``: prints a verdict (with a named
    hint from ``GAE_HINTS`` when a typical mistake fits) and returns whether it passed."""

    def check():
        for case in _gae_cases():
            what = f"gae(...) with lam={case['lam']:g} on {len(case['rewards'])} steps"
            got = np.asarray(call_student(what, gae, *(list(case[k]) for k in ("rewards", "values", "next_values", "ends")),
                                          case["gamma"], case["lam"]), dtype=float).reshape(-1)
            want = gae_reference(**case)
            if got.shape != want.shape:
                raise Problem(f"for {what}: expected {len(want)} advantages (one per step), got {got.size}.")
            if not np.allclose(got, want, atol=1e-4):
                hint = next((GAE_HINTS[name] for name, values in _gae_mistakes(case).items()
                             if np.allclose(got, values, atol=1e-4) and not np.allclose(values, want, atol=1e-4)),
                            "A_t = delta_t + gamma * lam * (1 - ends[t]) * A_t+1, computed from the last step backwards.")
                raise Problem(f"for {what}: expected {fmt(want)}, got {fmt(got)}. Hint: {hint}")

    return verdict("gae (optional)", check)
