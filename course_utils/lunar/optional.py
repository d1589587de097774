"""Tutorial 3's optional, ungraded exercises: bootstrapping at truncation, and GAE.

The course's own trainer (``course_admin.lunar.aac``) uses both; the notebook lets a student write
them and check them here. Nothing later in the notebook needs them. Each check runs the student's
function on a few cases, compares it with the course's answer, and when it differs names the
typical mistake that fits (``BOOTSTRAP_HINTS``, ``GAE_HINTS``), using the same ``verdict`` as
the graded checks (a message, True or False; never an exception that stops "Run all").

The cases, the course's answers and what each typical mistake returns are stored data (the
``"optional"`` section of ``assets/lunar_expected.json``, written at release time by
``course_admin.lunar.optional_reference``): this module computes no return and no advantage.

Shapes: ``T`` steps of one episode or one environment's rollout.
"""

from __future__ import annotations

import numpy as np

from course_utils.checking import Problem, call_student, fmt, verdict
from course_utils.lunar.expected import load_expected

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


def _cases(exercise: str) -> list[dict]:
    """The stored cases of ``exercise`` (``"bootstrap"`` or ``"gae"``), each with ``expected`` and
    ``mistakes``."""
    return load_expected()["optional"][exercise]


_BOOTSTRAP_ARGS = ("rewards", "gamma", "truncated", "last_value")
_GAE_ARGS = ("rewards", "values", "next_values", "ends", "gamma", "lam")


def _hint(got: np.ndarray, case: dict, hints: dict[str, str], default: str) -> str:
    """The hint of the first typical mistake whose stored output ``got`` matches (and which differs
    from the answer), else ``default``."""
    want = np.asarray(case["expected"])
    for name, values in case["mistakes"].items():
        values = np.asarray(values)
        if np.allclose(got, values, atol=1e-4) and not np.allclose(values, want, atol=1e-4):
            return hints[name]
    return default


def check_bootstrapped_qvals(bootstrapped_qvals) -> bool:
    """Check ``bootstrapped_qvals(rewards, gamma, truncated, last_value)``: prints a verdict (with a
    named hint from ``BOOTSTRAP_HINTS`` when a typical mistake fits) and returns whether it passed."""

    def check():
        for case in _cases("bootstrap"):
            what = f"bootstrapped_qvals({ {k: case[k] for k in _BOOTSTRAP_ARGS} })"
            got = np.asarray(call_student(what, bootstrapped_qvals, list(case["rewards"]), case["gamma"],
                                          case["truncated"], case["last_value"]), dtype=float).reshape(-1)
            want = np.asarray(case["expected"])
            if got.shape != want.shape:
                raise Problem(f"for {what}: expected {len(want)} values (one per step), got {got.size}.")
            if not np.allclose(got, want, atol=1e-4):
                hint = _hint(got, case, BOOTSTRAP_HINTS, "work backwards from the end: running = (last_value if "
                             "truncated else 0), then running = r_t + gamma * running.")
                raise Problem(f"for {what}: expected {fmt(want)}, got {fmt(got)}. Hint: {hint}")

    return verdict("bootstrapped_qvals (optional)", check)


# --------------------------------------------------------------------------------------------
# Generalised advantage estimation
# --------------------------------------------------------------------------------------------


def check_gae(gae) -> bool:
    """Check ``gae(rewards, values, next_values, ends, gamma, lam)``: prints a verdict (with a named
    hint from ``GAE_HINTS`` when a typical mistake fits) and returns whether it passed."""

    def check():
        for case in _cases("gae"):
            what = f"gae(...) with lam={case['lam']:g} on {len(case['rewards'])} steps"
            got = np.asarray(call_student(what, gae, *(list(case[k]) for k in _GAE_ARGS[:4]),
                                          case["gamma"], case["lam"]), dtype=float).reshape(-1)
            want = np.asarray(case["expected"])
            if got.shape != want.shape:
                raise Problem(f"for {what}: expected {len(want)} advantages (one per step), got {got.size}.")
            if not np.allclose(got, want, atol=1e-4):
                hint = _hint(got, case, GAE_HINTS, "A_t = delta_t + gamma * lam * (1 - ends[t]) * A_t+1, computed "
                             "from the last step backwards.")
                raise Problem(f"for {what}: expected {fmt(want)}, got {fmt(got)}. Hint: {hint}")

    return verdict("gae (optional)", check)
