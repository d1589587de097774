"""The gradient-variance measurement (``course_admin.lunar.variance``, ``course train lunar-variance``),
its stored summary the notebook shows (``course_utils.lunar.variance``) and the claims the notebook
makes from it (Section 4's "What the measurement shows", Section 3's truncation paragraph, the Think!
model answer): the stored result here, the measurement at the fast size, and with ``--run-slow`` at
full size, where it must give the stored result."""

import numpy as np
import pytest
import torch

from course_admin.lunar import variance
from course_utils.claims import claim
from course_utils.lunar import variance as shown
from course_utils.lunar.variance import ESTIMATORS, POLICIES

TOTAL, TO_GO, BATCH_MEAN, CRITIC = ESTIMATORS
FRESH, AGENT = POLICIES


def _episode(rewards, length_state=8):
    t = len(rewards)
    return variance.Episode(torch.zeros(t, length_state), torch.zeros(t, dtype=torch.long), np.array(rewards), False)


def test_step_weights_are_the_four_estimators():
    episodes = [_episode([1.0, 2.0]), _episode([-3.0])]
    weights = variance.step_weights(episodes, lambda states: np.full(len(states), 0.5))
    assert list(weights) == list(ESTIMATORS)
    assert weights[TOTAL].tolist() == [3.0, 3.0, -3.0]
    assert weights[TO_GO].tolist() == [3.0, 2.0, -3.0]
    assert weights[BATCH_MEAN].tolist() == pytest.approx([3.0 - 2 / 3, 2.0 - 2 / 3, -3.0 - 2 / 3])
    assert weights[CRITIC].tolist() == [2.5, 1.5, -3.5]


def test_total_variance_is_the_trace_of_the_covariance():
    rng = np.random.default_rng(0)
    g = rng.normal(size=(50, 3)) * np.array([1.0, 2.0, 3.0])
    assert variance.total_variance(g) == pytest.approx(np.trace(np.cov(g.T)))


def test_reference_cosines_leave_the_compared_batch_out():
    # Two batches pointing in opposite directions: each is compared with the other one only.
    g = {name: np.array([[1.0, 0.0], [-1.0, 0.0]]) for name in ESTIMATORS}
    for cosines in variance.reference_cosines(g).values():
        assert cosines.tolist() == pytest.approx([-1.0, -1.0])


def test_the_score_has_mean_zero_in_every_state():
    """Step 3 of the derivation, as the notebook prints it: the terms are large, their sum is rounding."""
    total, terms = shown.score_identity()
    assert len(terms) == 4 and min(terms) > 0.1
    assert total < 1e-12 * max(terms)


def test_measure_refuses_sizes_that_cannot_give_a_variance():
    with pytest.raises(ValueError, match="at least 2 batches"):
        variance.measure(torch.nn.Linear(8, 4), 1, 4, 4)


def _assert_the_notebooks_claims(stored: dict, full: bool):
    # Sections 3 and 4, as the notebook prints them
    for name in ("lunar.fresh_network_crashes_early", "lunar.baselines_cut_variance", "lunar.baselines_point_the_way",
                 "lunar.near_a_good_policy"):
        holds, figures = claim(name).check(stored)
        assert holds, (name, figures)
    if full:  # "far more" for the course's agent too: at the fast size (6 batches) its estimates are too noisy
        # for a factor (measured 0.178 vs 0.268 there, 0.195 vs 0.466 at full size)
        assert figures["agent_batch_mean"] < 0.5 * figures["agent_to_go"], figures
    text = shown.report(stored)
    assert all(policy in text for policy in POLICIES) and "cut off at 300 steps" in text


def _sizes(full: bool) -> dict:
    return dict(variance.FULL_SIZE if full else variance.FAST_SIZE)


def test_the_stored_measurement_is_the_notebooks_full_size_and_bears_out_its_claims():
    stored = shown.stored_variance()
    assert {k: stored[k] for k in ("batches", "episodes_per_batch", "critic_episodes", "seed")} == _sizes(full=True)
    assert list(stored["results"]) == list(POLICIES)
    for result in stored["results"].values():
        assert result["batches"] == 50 and len(result["lengths"]) == len(result["returns"]) == 50 * 16
        assert all(len(result["estimators"][name]["cosines"]) == 50 for name in ESTIMATORS)
    _assert_the_notebooks_claims(stored, full=True)
    assert stored["results"][AGENT]["truncated"] > 0  # the course's agent does meet the time limit sometimes


def test_the_stored_measurement_is_plotted_per_policy():
    import matplotlib

    matplotlib.use("Agg")
    fig = shown.plot_variance(shown.stored_variance())
    left, right = fig.axes[:2]
    assert len(left.patches) == len(ESTIMATORS) * len(POLICIES)
    assert len(right.collections) >= len(ESTIMATORS) * len(POLICIES)


def test_the_notebooks_claims_hold_at_the_fast_size():
    sizes = _sizes(full=False)
    results = variance.run_variance_experiment(**sizes, progress=False)
    assert len(results[FRESH].gradients[TOTAL]) == sizes["batches"]
    _assert_the_notebooks_claims(variance.summary(results, **sizes), full=False)


@pytest.mark.slow
def test_the_measurement_at_full_size_gives_the_stored_result():
    """``course train lunar-variance`` again: the same episodes, gradients and summary as stored."""
    sizes = _sizes(full=True)
    fresh = variance.summary(variance.run_variance_experiment(**sizes, progress=False), **sizes)
    stored = shown.stored_variance()
    for policy in POLICIES:
        mine, theirs = fresh["results"][policy], stored["results"][policy]
        assert mine["lengths"] == theirs["lengths"] and mine["truncated"] == theirs["truncated"]
        for name in ESTIMATORS:
            assert mine["estimators"][name]["variance"] == pytest.approx(theirs["estimators"][name]["variance"], rel=1e-6)


def test_the_notebook_states_the_stored_sizes():
    import json

    from course_utils.paths import SOLUTIONS

    stored = shown.stored_variance()
    cells = json.loads((SOLUTIONS / "03_policy_gradients.ipynb").read_text())["cells"]
    text = " ".join(" ".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown").split())
    assert f"played {stored['batches']} batches of {stored['episodes_per_batch']} episodes" in text


def test_the_notebooks_identity_is_stored_not_computed(monkeypatch):
    """The student package computes no grad log pi(a|s) (Exercise 5's answer on a network): the identity
    the notebook prints is the course's computation, stored at release time."""

    def refuse(*args, **kwargs):
        raise AssertionError("the student package took a gradient")

    monkeypatch.setattr(torch.autograd, "grad", refuse)
    total, terms = shown.score_identity()
    monkeypatch.undo()
    course_total, course_terms = variance.score_identity()
    assert total == pytest.approx(course_total) and terms == pytest.approx(course_terms)
