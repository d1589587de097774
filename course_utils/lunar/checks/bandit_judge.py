"""The judge of tutorial 3's score-function exercise (``score_function.SCORE_FUNCTION``): the
estimate must be within ``SIGMAS`` standard errors of the exact gradient and be the estimator on
the case's samples (the course's answer's record), else a hint names the typical mistake; and the
check cell's report of the estimate and the baseline.

What it needs of a case (``figures``: the exact gradient, the margin of ``SIGMAS`` standard errors,
what each typical mistake returns) comes from stored data for the check cell's cases (the
``"score_function"`` section of ``assets/lunar_expected.json``) and, for the hidden cases, from the
course's oracle, which only the grader has and hands in (``checking.grader_oracle``): computing
them takes the estimator itself, the exercise's answer, which the student package does not ship.

Apart from the drive: the grader judges in its own process, and its child that drives the
student's function cannot read this module (``grading.drive_apart.JUDGE_ONLY``). The student's
check cell imports it to judge there.

Shapes: ``K`` actions, ``S`` samples. Everything here is float64.
"""

from __future__ import annotations

import json

import numpy as np
import torch

from course_utils.check_helpers import close_arrays, tensor_of
from course_utils.checking import Problem, fmt, grader_oracle, raise_if_error
from course_utils.lunar.checks.bandit import call
from course_utils.lunar.expected import load_expected

SIGMAS = 3.0
"""How many standard errors an estimate may be from the exact gradient, per component."""

RTOL, ATOL = 1e-3, 1e-4
"""How close (``close_arrays``) an estimate must be to the estimator on the case's samples, or to
what a typical mistake gives: ``ATOL`` is scaled by the largest component compared with, when
that is above 1 (``_atol``)."""

GRADE_ID = "test_score_function"
"""The exercise's grade id, under which the grader hands in the oracle that computes ``figures`` of
a case that is not stored."""


def case_key(case: dict) -> str:
    """A case's identity: its bandit, samples, baseline and seed (as JSON)."""
    return json.dumps({k: case[k] for k in ("theta", "mu", "noise", "samples", "baseline", "seed")}, sort_keys=True)


def figures(case: dict) -> dict:
    """``exact`` (K,), ``margin`` (K,) and ``mistakes`` ([values (K,), hint] pairs) of ``case``: stored
    for the check cell's cases, else from the course's oracle (in the grader)."""
    key = case_key(case)
    for stored in load_expected().get("score_function", []):
        if stored["key"] == key:
            return stored
    oracle = grader_oracle(GRADE_ID)
    if oracle is None:
        raise Problem("this case can only be judged by the course's grader.")
    return oracle(case)


def _atol(b: np.ndarray) -> float:
    return ATOL * max(1.0, float(np.abs(b).max()))


def _hint(case: dict, estimate: np.ndarray) -> str:
    found = ((np.asarray(value), hint) for value, hint in figures(case)["mistakes"])
    return next((hint for value, hint in found if close_arrays(estimate, value, RTOL, _atol(value))),
                "compare with the mean over samples of (r - b) * grad log pi(a), grad log pi(a) = onehot(a) - pi.")


def judge(got, expected, cases) -> None:
    """Each case's estimate: within ``SIGMAS`` standard errors of the exact gradient, and the
    estimator on the case's samples (the course's answer's record); a ``Problem`` with a hint if not."""
    for case, mine, reference in zip(cases, got, expected, strict=True):
        raise_if_error(mine)
        k = len(case["theta"])
        estimate = tensor_of("score_function_gradient's result", mine, (k,)).double().numpy()
        want = tensor_of("the course's estimate", reference, (k,)).double().numpy()
        if not np.all(np.isfinite(estimate)):
            raise Problem(f"on {case['what']} the estimate is {fmt(estimate)}: it should hold finite numbers.")
        known = figures(case)
        exact, margin = np.asarray(known["exact"]), np.asarray(known["margin"])
        if np.any(np.abs(estimate - exact) > margin + 1e-6):
            raise Problem(
                f"on {case['what']} ({case['samples']} samples), your estimate {fmt(estimate)} is not within "
                f"{SIGMAS:g} standard errors ({fmt(margin)}) of the exact gradient pi_k (mu_k - J) = {fmt(exact)}. "
                f"Hint: {_hint(case, estimate)}"
            )
        if not close_arrays(estimate, want, RTOL, _atol(want)):
            raise Problem(
                f"on {case['what']} your estimate {fmt(estimate)} is close to the exact gradient, but it is not the "
                f"estimator on these samples, {fmt(want)}. Hint: {_hint(case, estimate)}"
            )


def _estimate(score_function_gradient, case: dict, actions=None, rewards=None) -> np.ndarray:
    """The student's estimate on ``case`` (or other draws of it), as float64 numbers (K,)."""
    value = call(score_function_gradient, case, actions, rewards)
    raise_if_error(value)
    return torch.as_tensor(value).detach().double().numpy()


def report(score_function_gradient, batches: int = 400, batch_samples: int = 10, seed: int = 0) -> str:
    """What the student's estimator does on the check's bandit (``bandit._PUBLIC``): its
    estimate from the first two public cases' samples beside the exact gradient, and the total
    variance (summed over the K components) of one estimate from ``batch_samples`` samples, over
    ``batches`` batches, without a baseline and with b = 6."""
    from course_utils.lunar.checks.bandit import _score_cases

    plain, with_b = _score_cases()[:2]
    exact = np.asarray(figures(plain)["exact"])
    lines = [f"exact gradient pi_k (mu_k - J):            {fmt(exact)}"]
    for case in (plain, with_b):
        estimate = _estimate(score_function_gradient, case)
        margin = np.asarray(figures(case)["margin"])
        label = f"your estimate, {case['samples']} samples, b = {case['baseline']:g}:"
        lines.append(f"{label:<43}{fmt(estimate)}  ({SIGMAS:g} standard errors: {fmt(margin)})")
    rng = np.random.default_rng(seed)
    variances = {}
    for case in (plain, with_b):
        estimates = []
        for _ in range(batches):
            small = {**case, "samples": batch_samples, "seed": int(rng.integers(2**31))}
            estimates.append(_estimate(score_function_gradient, small))
        variances[case["baseline"]] = float(np.var(np.stack(estimates), axis=0, ddof=1).sum())
    without, with_baseline = variances[plain["baseline"]], variances[with_b["baseline"]]
    change = "lowers" if with_baseline < without else "raises"
    lines.append(f"variance of one estimate from {batch_samples} samples (over {batches} batches, summed over the "
                 f"{len(exact)} actions):")
    lines.append(f"  without a baseline: {without:.4g}")
    lines.append(f"  with b = {with_b['baseline']:g}:          {with_baseline:.4g}  (the baseline {change} it to "
                 f"{with_baseline / without:.0%} of that)")
    return "\n".join(lines)
