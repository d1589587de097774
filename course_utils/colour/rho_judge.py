"""The judge's oracle for tutorial 2's replay actor loss (``checks.ACTOR``): what a right answer and
each typical wrong one give on a case, in NumPy, so that a wrong answer's hint can name its mistake.

The right answer, for T trials with log-probabilities ``log_pi`` (T,) under the current policy,
stored acting probabilities ``mu`` (T,), advantages ``A`` (T,) and a cap ``c``::

    rho  = min(exp(log_pi) / mu, c)          (detached: a weight, not something to train)
    loss = -mean(rho * log_pi * A)           (A detached: the critic learns from its own loss)
    d loss / d log_pi = -rho * A / T,        d loss / d A = 0.

Apart from the drive because it computes what the exercise asks: the grader judges in its own
process, and the child that drives the student's loss cannot read this module
(``grading.drive_apart.JUDGE_ONLY``). The student's check cell imports it to judge there.
"""

from __future__ import annotations

import numpy as np

from course_utils.check_helpers import close


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


HINTS = {
    "no cap": "rho is never capped. Cap the ratio itself, rho = min(pi / mu, rho_max) (torch.clamp(ratio, "
              "max=rho_max)); capping log pi changes nothing, since log pi is never above 0.",
    "inverted": "the ratio is upside down: rho = pi / mu, the current policy's probability over the one that "
                "acted (mu, stored in the memory), not mu / pi.",
    "inverted, no cap": "the ratio is upside down and never capped: rho = min(pi / mu, rho_max).",
    "cap in log space": "you capped log(pi / mu) at rho_max, which caps rho at exp(rho_max). Cap the ratio itself: "
                        "min(pi / mu, rho_max).",
    "log ratio": "your weight is log(pi / mu): exponentiate the log-ratio to get rho = pi / mu.",
    "no ratio": "your loss does not weigh the trials by rho at all: multiply each trial's -log pi * A by "
                "rho = min(pi / mu, rho_max).",
    "sign": "the sign is flipped: minimise -mean(rho * log pi * A), so that actions with a positive advantage "
            "become more likely.",
    "sum": "average over the trials (mean), do not sum them.",
    "cap below": "you took the larger of the ratio and the cap (max, or clamp(min=...)): rho = min(pi / mu, rho_max) "
                 "keeps the ratios below the cap and cuts those above it (torch.clamp(ratio, max=rho_max)).",
}


def loss_hint(case: dict, got: float) -> str:
    """The hint for a loss of ``got`` on ``case`` where the right answer differs."""
    for name, value in wrong_losses(case).items():
        if close(got, value, 1e-4):
            return HINTS[name]
    return "loss = -mean(min(pi / mu, rho_max) * log_pi * advantage), with pi = exp(log_pi)."


def grad_hint(case: dict, got: np.ndarray) -> str:
    """The hint for a gradient with respect to log_pi of ``got`` where the right one differs."""
    if got.shape == right_grad(case).shape and np.allclose(got, undetached_rho_grad(case), rtol=1e-4, atol=1e-6):
        return ("rho is not detached: the gradient also flows through pi = exp(log_pi) inside the ratio. rho is a "
                "weight, not something to train: compute it from log_pi.detach().")
    return "the gradient should be -rho * advantage / T per trial: only log_pi carries it, rho and the advantage are detached."
