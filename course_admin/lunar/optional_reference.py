"""The expected values of tutorial 3's optional exercises (bootstrapping at truncation, GAE),
computed at release time with the course's answers: ``optional_expected`` is the ``"optional"``
section of ``assets/lunar_expected.json`` (``reference.make_expected``), which the student
package's checks read (``course_utils.lunar.optional``).

Each case is stored with the course's answer (``expected``) and the output of every typical
mistake the checks name (``mistakes``: the keys of ``BOOTSTRAP_HINTS`` and ``GAE_HINTS``), so the
checks compare and give their hints without computing a return or an advantage themselves.

Shapes: ``T`` steps of one episode or one environment's rollout.
"""

from __future__ import annotations

import numpy as np
import torch

from course_admin.lunar.aac import gae_advantages


def bootstrapped_reference(rewards, gamma: float, truncated: bool, last_value: float) -> np.ndarray:
    """The course's answer: q_t = sum_k gamma^k r_t+k + gamma^(T - t) * last_value if truncated."""
    rewards = np.asarray(rewards, dtype=float)
    steps = np.arange(len(rewards))
    powers = gamma ** (steps[None, :] - steps[:, None])
    discounted = (np.triu(powers) * rewards[None, :]).sum(1)
    return discounted + (gamma ** (len(rewards) - steps) * last_value if truncated else 0.0)


def bootstrap_cases() -> list[dict]:
    rng = np.random.default_rng(3)
    return [
        dict(rewards=[1.0, 2.0, 3.0], gamma=0.5, truncated=True, last_value=8.0),
        dict(rewards=[1.0, 2.0, 3.0], gamma=0.5, truncated=False, last_value=8.0),
        dict(rewards=list(rng.normal(0, 3, 12).round(3)), gamma=0.9, truncated=True, last_value=-20.0),
        dict(rewards=list(rng.normal(0, 3, 7).round(3)), gamma=0.99, truncated=False, last_value=50.0),
    ]


def bootstrap_mistakes(case: dict) -> dict[str, np.ndarray]:
    """What each typical mistake (``BOOTSTRAP_HINTS``) returns on ``case``."""
    r, g, v = case["rewards"], case["gamma"], case["last_value"]
    plain = bootstrapped_reference(r, g, False, 0.0)
    return {
        "bootstraps_termination": bootstrapped_reference(r, g, True, v),
        "never_bootstraps": plain,
        "undiscounted_value": plain + g ** (len(r) - 1 - np.arange(len(r))) * v,
        "value_added_everywhere": plain + v,
    }


def gae_reference(rewards, values, next_values, ends, gamma: float, lam: float) -> np.ndarray:
    """The course's answer for one environment (arrays of length T), from ``aac.gae_advantages``."""
    as_column = lambda x: torch.as_tensor(np.asarray(x, dtype=np.float64)).reshape(-1, 1)  # noqa: E731
    out = gae_advantages(as_column(rewards), as_column(values), as_column(next_values), as_column(ends), gamma, lam)
    return out.reshape(-1).numpy()


def gae_cases() -> list[dict]:
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


def gae_mistakes(case: dict) -> dict[str, np.ndarray]:
    """What each typical mistake (``GAE_HINTS``) returns on ``case``."""
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


def _floats(values) -> list[float]:
    return [round(float(x), 9) for x in np.asarray(values, dtype=float).reshape(-1)]


def optional_expected() -> dict:
    """The ``"optional"`` section of ``assets/lunar_expected.json``: for each exercise its cases,
    each with ``expected`` and ``mistakes`` (name -> output)."""
    def plain(case: dict) -> dict:
        return {k: (_floats(v) if isinstance(v, list) else float(v) if not isinstance(v, bool) else v)
                for k, v in case.items()}

    return {
        "bootstrap": [{**plain(case), "expected": _floats(bootstrapped_reference(**case)),
                       "mistakes": {name: _floats(out) for name, out in bootstrap_mistakes(case).items()}}
                      for case in bootstrap_cases()],
        "gae": [{**plain(case), "expected": _floats(gae_reference(**case)),
                 "mistakes": {name: _floats(out) for name, out in gae_mistakes(case).items()}}
                for case in gae_cases()],
    }
