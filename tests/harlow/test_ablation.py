"""What did evolution find? The notebook's Sections 4 and 5: every agent learns the same tasks in
one batched run, and the ablation's claims (it is not just a bigger learning rate; the
hyperparameters carry the larger part of the gain; only weights and hyperparameters together reach
the evolved agent) hold at the notebook's fast and full sizes."""

import numpy as np
import pytest
import torch

from course_utils import harlow
from course_utils.claims import claim
from course_utils.harlow import ablation
from course_utils.harlow.agent import DEFAULT_HYPERPARAMETERS, NEWBIE_SEED


def test_the_newbie_is_one_agent_from_its_seed_and_leaves_torch_alone():
    torch.manual_seed(0)
    before = torch.random.get_rng_state()
    first, second = harlow.make_newbie(), harlow.make_newbie(seed=NEWBIE_SEED)
    assert torch.equal(torch.random.get_rng_state(), before)
    assert all(torch.equal(p, q) for p, q in zip(first.parameters(), second.parameters(), strict=True))
    assert first.hyperparameters() == DEFAULT_HYPERPARAMETERS
    other = harlow.make_newbie(seed=NEWBIE_SEED + 1)
    assert not torch.equal(first.actor.weight, other.actor.weight)


def test_with_hyperparameters_copies_and_refuses_unknown_names():
    newbie = harlow.make_newbie()
    fast = ablation.with_hyperparameters(newbie, learning_rate=0.003)
    assert fast.learning_rate == 0.003 and newbie.learning_rate == DEFAULT_HYPERPARAMETERS["learning_rate"]
    assert torch.equal(fast.actor.weight, newbie.actor.weight) and fast.actor.weight is not newbie.actor.weight
    with pytest.raises(ValueError, match="Unknown hyperparameters.*learning_rate"):
        ablation.with_hyperparameters(newbie, lr=0.003)


def test_ablation_agents_swap_exactly_one_part():
    newbie, evolved = harlow.make_newbie(), harlow.load_evolved_agent()
    agents = harlow.ablation_agents(newbie, evolved)
    mixed = agents["newbie weights + evolved hyperparameters"]
    assert torch.equal(mixed.rnn.weight_hh, newbie.rnn.weight_hh) and mixed.hyperparameters() == evolved.hyperparameters()
    mixed = agents["evolved weights + newbie hyperparameters"]
    assert torch.equal(mixed.rnn.weight_hh, evolved.rnn.weight_hh) and mixed.hyperparameters() == DEFAULT_HYPERPARAMETERS
    only_lr = [name for name in agents if name.startswith("newbie, learning rate")]
    assert len(only_lr) == len(ablation.LEARNING_RATES) + 1 and any("the evolved one" in n for n in only_lr)
    for name in only_lr:
        hypers = agents[name].hyperparameters()
        assert {k: v for k, v in hypers.items() if k != "learning_rate"} == {
            k: v for k, v in DEFAULT_HYPERPARAMETERS.items() if k != "learning_rate"}
        assert torch.equal(agents[name].rnn.weight_hh, newbie.rnn.weight_hh)


def test_same_tasks_gives_every_agent_the_same_digits_and_consistent_figures():
    newbie = harlow.make_newbie()
    results = harlow.same_tasks({"a": newbie, "b": newbie}, num_tasks=6, seed=3)
    for r in results.values():
        assert r.scores.shape == (6,) and r.correct.shape == (6, 25 * 6 + 20)
        # the score is the evaluation trials' rewards: +1 right, -1 wrong
        assert np.array_equal(r.scores, 2 * r.correct[:, -20:].sum(1) - 20)
        curve = r.accuracy_by_trial()
        assert np.isclose(20 * (2 * curve.accuracy[-20:].mean() - 1), r.mean)
    with pytest.raises(ValueError, match="at least 2"):
        harlow.same_tasks({"a": newbie}, num_tasks=1)


def _notebook_results(monkeypatch, fast: bool):
    """Section 4's one sample, as the notebook makes it at the given size."""
    monkeypatch.setenv("COURSE_FAST", "1" if fast else "0")
    num_tasks = harlow.SIZES.comparison_tasks
    agents = harlow.ablation_agents(harlow.make_newbie(seed=42), harlow.load_evolved_agent())
    return harlow.same_tasks(agents, num_tasks=num_tasks, seed=0)


def _assert_the_notebooks_claims(results, margin):
    for name in ("harlow.evolved_learns_fast", "harlow.not_just_the_learning_rate", "harlow.both_parts_needed",
                 "harlow.learns_across_trials_not_within"):  # Sections 4 and 5, as the notebook prints them
        holds, figures = claim(name).check(results)
        assert holds, (name, figures)
    # at full size the gaps are wider than the claims need
    assert figures["lr_gap"] > margin and figures["evolved"] - max(figures["hyper_only"], figures["weights_only"]) > margin


def test_notebook_claims_of_the_ablation_at_fast_size(monkeypatch):
    _assert_the_notebooks_claims(_notebook_results(monkeypatch, fast=True), margin=1.0)


@pytest.mark.slow
def test_notebook_claims_of_the_ablation_at_full_size(monkeypatch):
    _assert_the_notebooks_claims(_notebook_results(monkeypatch, fast=False), margin=2.0)


def test_plot_ablation_labels_every_agent():
    results = harlow.same_tasks({"x": harlow.make_newbie(), "newbie, learning rate 0.01": harlow.make_newbie()},
                                num_tasks=2, seed=0)
    ax = harlow.plot_ablation(results)
    assert {t.get_text() for t in ax.get_yticklabels()} == {"x", "newbie, learning rate 0.01"}
    assert "per task" in ax.get_xlabel()
