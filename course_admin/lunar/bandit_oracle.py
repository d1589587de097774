"""The oracle of tutorial 3's score-function exercise (``score_function.SCORE_FUNCTION``): the
estimator on a case's samples (``terms``), the exact gradient, what each typical mistake gives
(``mistakes``), and ``figures``, all a judge needs of one case.

Instructor code: ``terms(...).mean(0)`` is the exercise's answer. The student package's judge
(``course_utils.lunar.checks.bandit_judge``) reads these figures for the check cell's cases from
``assets/lunar_expected.json`` (``reference.make_expected`` stores them) and, in the grader, which
hands ``figures`` to the judge (``hidden_cases.ORACLES``), computes them here for the hidden cases.

Shapes: ``K`` actions, ``S`` samples. Everything here is float64.
"""

from __future__ import annotations

import numpy as np

from course_utils.lunar.checks.bandit import _score_cases, draw, policy
from course_utils.lunar.checks.bandit_judge import SIGMAS


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


def figures(case: dict) -> dict:
    """What the judge needs of ``case``: the ``exact`` gradient (K,), the ``margin`` of ``SIGMAS``
    standard errors of the estimate (K,), and the typical ``mistakes`` as [values (K,), hint] pairs."""
    actions, rewards = draw(case)
    margin = SIGMAS * standard_error(terms(case["theta"], actions, rewards, baseline_value(case)))
    return {"exact": exact_gradient(case["theta"], case["mu"]).tolist(), "margin": margin.tolist(),
            "mistakes": [[value.tolist(), hint] for value, hint in mistakes(case)]}


def stored_figures() -> list[dict]:
    """``figures`` of the check cell's cases (``bandit._score_cases``), each with the case's ``key``:
    the ``"score_function"`` section of ``assets/lunar_expected.json``."""
    from course_utils.lunar.checks.bandit_judge import case_key

    return [{"key": case_key(case), **figures(case)} for case in _score_cases()]
