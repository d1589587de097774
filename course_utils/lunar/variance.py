"""How noisy is a policy-gradient estimate? The course's measurement, as stored, and the identity
behind every baseline.

The notebook's losses all have the form ``-mean_t(w_t * log pi(a_t | s_t))`` over the steps of a
batch of episodes; they differ in the weight ``w_t``. On average over batches the four weights
(``ESTIMATORS``) give the same gradient, but one batch's gradient scatters around that average by
very different amounts. The course measured it (``course train lunar-variance``,
``course_admin.lunar.variance``): the same policy, ``batches`` batches of ``episodes_per_batch``
episodes, every weight on the same batches, for a fresh network and for the course's trained
agent (``POLICIES``). This module reads what it stored (``stored_variance``, from
``assets/lunar_variance.json``) and shows it (``plot_variance``, ``report``).

Why stored: the measurement is the score-function estimator (Exercise 5) applied to a network,
with the course's actor-critic playing; the student package does not ship it.

Per policy the stored result holds the length and total reward of every episode measured, how
many the time limit cut off (``truncated``), how well the critic fitted (``critic_r2``) and per
estimator: ``variance`` (the total variance of a batch's gradient), ``relative`` (to the total
return's), ``mean_square`` and ``cosines`` (one per batch: the cosine of that batch's gradient
with the mean gradient of the other batches) with their mean ``cosine``. ``score_identity`` reads
the identity behind every baseline, as the course computed it in one state.
"""

from __future__ import annotations

import json

import numpy as np

from course_utils.lunar.env import MAX_EPISODE_STEPS
from course_utils.paths import ASSETS

ESTIMATORS = ("total return", "reward-to-go", "reward-to-go - batch mean", "reward-to-go - critic")
"""The four weights of ``log pi(a_t | s_t)`` compared: the episode's total reward at every step
(REINFORCE as Williams 1992 wrote it), the reward from step t on (causality), that minus the
batch's mean reward-to-go (the notebook's ``bpg`` baseline), and that minus a critic's v(s_t)
(the actor-critic's baseline)."""

POLICIES = ("a fresh network", "the course's agent")
"""The two policies measured: one that acts almost uniformly at random (as every run of the
notebook starts) and the course's trained agent."""

VARIANCE_RESULTS = ASSETS / "lunar_variance.json"
"""The measurement's summary, written by ``course train lunar-variance``."""


def stored_variance() -> dict:
    """The stored measurement: ``batches``, ``episodes_per_batch``, ``critic_episodes``, ``seed`` and
    ``results`` (policy name -> its numbers, see the module docstring)."""
    return json.loads(VARIANCE_RESULTS.read_text())


def plot_variance(stored: dict, fig=None):
    """Two panels: the total variance of each estimator relative to the total return's (log
    scale), and the cosine of each batch's gradient with the mean gradient (one dot per batch,
    a bar at the mean), for each policy. ``stored``: ``stored_variance()``."""
    import matplotlib.pyplot as plt

    results = stored["results"]
    if fig is None:
        fig, _ = plt.subplots(1, 2, figsize=(13, 4.5))
    left, right = fig.axes[:2]
    x = np.arange(len(ESTIMATORS))
    width = 0.8 / len(results)
    for i, (policy, result) in enumerate(results.items()):
        numbers = result["estimators"]
        offset = (i - (len(results) - 1) / 2) * width
        left.bar(x + offset, [numbers[e]["relative"] for e in ESTIMATORS], width, label=policy)
        for j, e in enumerate(ESTIMATORS):
            cosines = np.asarray(numbers[e]["cosines"])
            jitter = np.linspace(-width / 3, width / 3, len(cosines))
            right.scatter(x[j] + offset + jitter, cosines, s=6, alpha=0.4, color=f"C{i}")
            right.hlines(cosines.mean(), x[j] + offset - width / 2, x[j] + offset + width / 2, color=f"C{i}",
                         linewidth=2.5, label=policy if j == 0 else None)
    labels = [e.replace(" - ", "\n- ") for e in ESTIMATORS]
    left.set(yscale="log", title="variance of a batch's gradient\n(relative to the total-return weight)",
             ylabel="total variance (relative)", xticks=x)
    left.set_xticklabels(labels)
    left.legend()
    right.axhline(0, color="0.5", linewidth=0.8)
    right.set(title="cosine of each batch's gradient with the mean gradient", ylabel="cosine", ylim=(-1, 1), xticks=x)
    right.set_xticklabels(labels)
    right.legend(loc="lower right")
    fig.tight_layout()
    return fig


def report(stored: dict) -> str:
    """The measurement as lines of text: per policy, its episodes and each estimator's numbers."""
    lines = []
    for policy, result in stored["results"].items():
        k, n = result["batches"], len(result["lengths"])
        lines.append(f"{policy}: {k} batches of {n // k} episodes, {np.mean(result['lengths']):.0f} steps per episode on "
                     f"average, {result['truncated']} of {n} episodes cut off at {MAX_EPISODE_STEPS} steps, "
                     f"{np.mean(np.asarray(result['returns']) > 0):.0%} with a positive total reward; the critic "
                     f"explains {result['critic_r2']:.0%} of the reward-to-go's variance")
        for name in ESTIMATORS:
            s = result["estimators"][name]
            lines.append(f"  {name:>26}: total variance {s['variance']:9.3g} ({s['relative']:6.1%} of the total return's), "
                         f"cosine with the mean gradient {s['cosine']:+.2f}")
    return "\n".join(lines)


IDENTITY_FILE = ASSETS / "lunar_expected.json"
"""Where the identity's figures are stored (its ``"score_identity"`` section), written at release time
by ``course_admin.lunar.reference`` from ``course_admin.lunar.variance.score_identity``."""


def score_identity() -> tuple[float, list[float]]:
    """The identity behind every baseline, computed exactly in one state by the course (stored): for
    the first state of LunarLander's episode with seed 0, the norm of ``sum_a pi(a|s) grad log pi(a|s)``
    over the parameters of a fresh linear policy (observations (N, 8) -> action scores (N, 4), torch
    seeded with 0), and the norm of each of its terms, action by action, in float64.

    Why stored: each term is the score-function gradient (Exercise 5) of one action on a network,
    which the student package does not ship."""
    stored = json.loads(IDENTITY_FILE.read_text())["score_identity"]
    return float(stored["total"]), [float(n) for n in stored["terms"]]
