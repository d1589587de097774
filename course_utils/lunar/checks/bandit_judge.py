"""The judge of tutorial 3's score-function exercise (``score_function.SCORE_FUNCTION``): a numpy
oracle of the estimator on a case's samples (``terms``), the exact gradient, what each typical
mistake gives (``mistakes``), and the check cell's report of the estimate and the baseline.

Apart from the drive because the oracle computes what the exercise asks: the grader judges in its
own process, and its child that drives the student's function cannot read this module
(``grading.drive_apart.JUDGE_ONLY``). The student's check cell imports it to judge there.

Shapes: ``K`` actions, ``S`` samples. Everything here is float64.
"""

from __future__ import annotations

import numpy as np
import torch

from course_utils.check_helpers import close_arrays, tensor_of
from course_utils.checking import Problem, fmt, raise_if_error
from course_utils.lunar.checks.bandit import _PUBLIC, call, draw, policy

SIGMAS = 3.0
"""How many standard errors an estimate may be from the exact gradient, per component."""

RTOL, ATOL = 1e-3, 1e-4
"""How close (``close_arrays``) an estimate must be to the estimator on the case's samples, or to
what a typical mistake gives: ``ATOL`` is scaled by the largest component compared with, when
that is above 1 (``_atol``)."""


def exact_gradient(theta, mu) -> np.ndarray:
    """dJ/dtheta of J = sum_k pi_k mu_k for pi = softmax(theta): pi_k (mu_k - J), (K,)."""
    pi, mu = policy(theta), np.asarray(mu, dtype=float)
    return pi * (mu - pi @ mu)


def baseline_value(case: dict) -> float:
    """The case's baseline as a number (``"value"``: J(theta))."""
    if case["baseline"] == "value":
        return float(policy(case["theta"]) @ np.asarray(case["mu"], dtype=float))
    return float(case["baseline"])


def terms(theta, actions: np.ndarray, rewards: np.ndarray, baseline: float) -> np.ndarray:
    """Each sample's term (r_i - b) grad log pi(a_i) = (r_i - b)(onehot(a_i) - pi), (S, K): their mean
    is the estimate, their spread its standard error."""
    pi = policy(theta)
    onehot = np.eye(len(pi))[actions]
    return (rewards - baseline)[:, None] * (onehot - pi)


def standard_error(samples: np.ndarray) -> np.ndarray:
    """The standard error (K,) of the mean of (S, K) terms."""
    return samples.std(axis=0, ddof=1) / np.sqrt(len(samples))


def mistakes(case: dict) -> list[tuple[np.ndarray, str]]:
    """(what the answer would return, the hint) for each typical mistake on ``case``'s samples."""
    actions, rewards = draw(case)
    theta, b = case["theta"], baseline_value(case)
    pi = policy(theta)
    right = terms(theta, actions, rewards, b).mean(0)
    found = [
        (-right, "the sign is flipped: this function returns the gradient of J itself, +mean((r - b) grad log pi(a)) "
                 "(a loss to minimise is its negative; this is not a loss)."),
        (right * len(rewards), "take the mean over the samples, not the sum."),
        ((pi[actions] * (rewards - b))[:, None] * (np.eye(len(pi))[actions] - pi),
         "you differentiated pi(a), not log pi(a): the score is grad log pi(a) = grad pi(a) / pi(a) "
         "(use torch.log_softmax, not torch.softmax)."),
        (-pi[None, :] * (rewards - b)[:, None],
         "the sampled action's one-hot is missing: grad log pi(a) = onehot(a) - pi. With autograd, pick "
         "log_softmax(theta)[a] for each sample (not the log-sum-exp alone, nor the sum over actions)."),
    ]
    found = [(f, h) if f.ndim == 1 else (f.mean(0), h) for f, h in found]
    if case["baseline"] == "value":
        # d/dtheta of mean((r - J(theta)) log pi(a)): the estimate minus mean(log pi(a)) * grad J
        log_pi = np.log(pi)[actions]
        found.append((right - log_pi.mean() * exact_gradient(theta, case["mu"]),
                      "the weight r - b let the gradient through: the estimator treats each sample's reward and "
                      "baseline as plain numbers, and here b = J(theta) is computed from theta (as an actor-critic's "
                      "value is): detach the weight."))
    if b != 0.0:
        found.append((terms(theta, actions, rewards, 0.0).mean(0),
                      "the baseline changed nothing: subtract it from the reward, (r - b) * log pi(a). "
                      "Applied to the log-probability (log pi(a) - b) it is a constant with no gradient."))
    return found


def _atol(b: np.ndarray) -> float:
    return ATOL * max(1.0, float(np.abs(b).max()))


def _hint(case: dict, estimate: np.ndarray) -> str:
    return next((hint for value, hint in mistakes(case) if close_arrays(estimate, value, RTOL, _atol(value))),
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
        actions, rewards = draw(case)
        exact = exact_gradient(case["theta"], case["mu"])
        margin = SIGMAS * standard_error(terms(case["theta"], actions, rewards, baseline_value(case)))
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
    """What the student's estimator does on the check's bandit (``score_function._PUBLIC``): its
    estimate from the first two public cases' samples beside the exact gradient, and the total
    variance (summed over the K components) of one estimate from ``batch_samples`` samples, over
    ``batches`` batches, without a baseline and with b = 6."""
    from course_utils.lunar.checks.bandit import _score_cases

    plain, with_b = _score_cases()[:2]
    exact = exact_gradient(_PUBLIC["theta"], _PUBLIC["mu"])
    lines = [f"exact gradient pi_k (mu_k - J):            {fmt(exact)}"]
    for case in (plain, with_b):
        actions, rewards = draw(case)
        estimate = _estimate(score_function_gradient, case)
        margin = SIGMAS * standard_error(terms(case["theta"], actions, rewards, baseline_value(case)))
        label = f"your estimate, {case['samples']} samples, b = {baseline_value(case):g}:"
        lines.append(f"{label:<43}{fmt(estimate)}  ({SIGMAS:g} standard errors: {fmt(margin)})")
    rng = np.random.default_rng(seed)
    variances = {}
    for case in (plain, with_b):
        estimates = []
        for _ in range(batches):
            small = {**case, "samples": batch_samples, "seed": int(rng.integers(2**31))}
            estimates.append(_estimate(score_function_gradient, small))
        variances[baseline_value(case)] = float(np.var(np.stack(estimates), axis=0, ddof=1).sum())
    without, with_baseline = variances[baseline_value(plain)], variances[baseline_value(with_b)]
    change = "lowers" if with_baseline < without else "raises"
    lines.append(f"variance of one estimate from {batch_samples} samples (over {batches} batches, summed over the "
                 f"{len(exact)} actions):")
    lines.append(f"  without a baseline: {without:.4g}")
    lines.append(f"  with b = {baseline_value(with_b):g}:          {with_baseline:.4g}  (the baseline {change} it to "
                 f"{with_baseline / without:.0%} of that)")
    return "\n".join(lines)
