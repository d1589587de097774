"""The oracle behind the hints of tutorial 2's replay actor loss (``course_utils.colour.checks.ACTOR``),
instructor side: what a right answer and each typical wrong one give on a case, in NumPy, so that a
wrong answer's hint can name its mistake; and the cases themselves, with those values attached
(``with_hints``), as the judge reads them.

The right answer, for T trials with log-probabilities ``log_pi`` (T,) under the current policy,
stored acting probabilities ``mu`` (T,), advantages ``A`` (T,) and a cap ``c``::

    rho  = min(exp(log_pi) / mu, c)          (detached: a weight, not something to train)
    loss = -mean(rho * log_pi * A)           (A detached: the critic learns from its own loss)
    d loss / d log_pi = -rho * A / T,        d loss / d A = 0.

It computes what the exercise asks, so the student package does not hold it: the public cases, their
hint values attached, are stored in ``assets/colour_expected.json`` at release time
(``course_admin.colour.expected``), and the hidden ones carry theirs (``hidden_cases``).
"""

from __future__ import annotations

import numpy as np

from course_utils.colour.checks import HINTS


def _arrays(case: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    return (np.asarray(case["log_pi"], dtype=float), np.asarray(case["mu"], dtype=float),
            np.asarray(case["advantage"], dtype=float), float(case["rho_max"]))


def ratios(case: dict) -> np.ndarray:
    """The uncapped importance ratios pi / mu of a case (T,)."""
    log_pi, mu, _, _ = _arrays(case)
    return np.exp(log_pi) / mu


def right_loss(case: dict) -> float:
    """The loss a right answer gives."""
    log_pi, _, advantage, cap = _arrays(case)
    return float(-np.mean(np.minimum(ratios(case), cap) * log_pi * advantage))


def right_grad(case: dict) -> np.ndarray:
    """d loss / d log_pi of a right answer (T,)."""
    _, _, advantage, cap = _arrays(case)
    return -np.minimum(ratios(case), cap) * advantage / len(advantage)


def undetached_rho_grad(case: dict) -> np.ndarray:
    """d loss / d log_pi when rho = min(exp(log_pi) / mu, c) is left in the graph: below the cap,
    rho's own derivative (rho itself, since d exp(log_pi) / d log_pi = exp(log_pi)) adds
    rho * log_pi * A."""
    log_pi, _, advantage, cap = _arrays(case)
    rho = ratios(case)
    own = np.where(rho < cap, rho, 0.0)
    return -(np.minimum(rho, cap) + own * log_pi) * advantage / len(advantage)


def wrong_losses(case: dict) -> dict[str, float]:
    """The loss each typical mistake gives on ``case``, by the hint that names it."""
    log_pi, mu, advantage, cap = _arrays(case)
    rho = ratios(case)

    def loss(weight):
        return float(-np.mean(weight * log_pi * advantage))

    return {
        "no cap": loss(rho),
        "inverted": loss(np.minimum(mu / np.exp(log_pi), cap)),
        "inverted, no cap": loss(mu / np.exp(log_pi)),
        "cap in log space": loss(np.exp(np.minimum(np.log(rho), cap))),
        "log ratio": loss(np.minimum(np.log(rho), cap)),
        "no ratio": loss(np.ones_like(rho)),
        "sign": -loss(np.minimum(rho, cap)),
        "sum": float(-np.sum(np.minimum(rho, cap) * log_pi * advantage)),
        "cap below": loss(np.maximum(rho, cap)),
    }


def with_hints(case: dict) -> dict:
    """``case`` with what the judge's hints compare a wrong answer with: ``ratios`` (the uncapped
    pi / mu, (T,)), ``wrong_losses`` (the loss of each typical mistake as [name of its hint in
    ``checks.HINTS``, loss] pairs, in the order the judge tries them) and ``undetached_grad``
    (d loss / d log_pi when rho is left in the graph, (T,))."""
    assert set(wrong_losses(case)) == set(HINTS)
    return {**case, "hints": {"ratios": [round(float(r), 6) for r in ratios(case)],
                              "wrong_losses": [[k, round(v, 8)] for k, v in wrong_losses(case).items()],
                              "undetached_grad": [round(float(g), 8) for g in undetached_rho_grad(case)]}}


def actor_case(rhos, log_pi, advantage, rho_max: float, what: str) -> dict:
    """A case whose ratios pi / mu are ``rhos``: mu = exp(log_pi) / rho, rounded; with its hints."""
    log_pi = np.round(np.asarray(log_pi, dtype=float), 4)
    mu = np.round(np.exp(log_pi) / np.asarray(rhos, dtype=float), 6)
    return with_hints({"log_pi": log_pi.tolist(), "mu": mu.tolist(), "advantage": np.round(advantage, 4).tolist(),
                       "rho_max": rho_max, "what": what})


def random_actor_case(seed: int, size: int, rho_max: float, what: str) -> dict:
    """``size`` trials like a replayed step of the agent: two actions, mu and pi anywhere in (0.02, 0.98)."""
    rng = np.random.default_rng(seed)
    pi, mu = rng.uniform(0.02, 0.98, size), rng.uniform(0.02, 0.98, size)
    return actor_case(pi / mu, np.log(pi), rng.normal(0.0, 0.5, size), rho_max, what)


def public_cases() -> list[dict]:
    """The check cell's cases. The ratios pi / mu lie below 1, between 1 and the cap, above the cap,
    and (with a cap of 2) above exp(cap), so that each typical mistake gives another loss. The small
    cap comes first: there a cap put on log(pi / mu) and no cap at all differ, so the first case
    that fails names the mistake."""
    return [
        actor_case([3.0, 50.0, 0.8, 1.5, 9.0], [-0.3, -0.02, -0.9, -0.4, -0.1], [1.0, 0.4, -0.7, 0.9, -0.3],
                   2.0, "5 replayed trials, cap 2"),
        actor_case([0.5, 1.0, 2.0, 15.0, 0.1, 40.0], [-0.1, -0.7, -1.2, -0.05, -2.3, -0.2],
                   [0.8, -0.5, 1.5, 0.3, -1.1, 0.6], 10.0, "6 replayed trials, cap 10"),
        actor_case([1.0] * 4, [-0.2, -1.6, -0.5, -0.05], [0.5, -1.0, 2.0, -0.25], 10.0,
                   "4 fresh trials (mu = pi, so every rho is 1)"),
        random_actor_case(3, 100, 10.0, "100 replayed trials like the agent's, cap 10"),
    ]
