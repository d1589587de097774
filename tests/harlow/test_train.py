"""Tutorial 1's evolved agent, its history, and the notebook's claims about it."""


import numpy as np
import pytest
import torch

from course_utils import checkpoints, harlow
from course_utils.harlow.agent import DEFAULT_HYPERPARAMETERS
from course_utils.harlow.train import CHECKPOINT


def test_evolved_agent_is_registered_and_loads():
    entry = checkpoints.read_registry()[CHECKPOINT]
    assert entry["command"] == "course train harlow"
    agent = harlow.load_evolved_agent()
    assert agent.hyperparameters() == pytest.approx(harlow.load_history()["best_hyperparameters"])
    assert agent.hyperparameters() != DEFAULT_HYPERPARAMETERS


def test_history_covers_the_full_evolution_and_the_notebook_claim():
    """Notebook: the mean population score climbs from about 55 to about 175 of 200."""
    history = harlow.load_history()
    assert history["generation"] == list(range(801))
    assert history["settings"]["population_size"] == 50 and history["num_tasks"] == 10
    assert history["settings"]["new_per_generation"] == 5
    assert 45 < np.mean(history["mean"][:10]) < 65 and 165 < np.mean(history["mean"][-10:]) < 185
    assert all(b >= m for b, m in zip(history["best"], history["mean"], strict=True))


def test_notebook_claim_evolved_agent_learns_new_tasks_far_better_than_a_newbie():
    """Notebook: on the same 50 tasks the newbie scores about 4.5 of 20, the evolved agent about 18.6."""
    scores = harlow.newbie_vs_evolved(num_tasks=50, seed=0)
    assert 3.0 < scores["newbie"].mean() < 6.0 and 17.5 < scores["evolved"].mean() < 19.5
    assert scores["evolved"].mean() - scores["newbie"].mean() > 10


def test_notebook_claim_agents_start_at_chance_and_evolved_learns_faster():
    """Notebook: both agents are at about 50% on a problem's first 6 trials; on the evaluation
    trials the evolved agent is right about 93% of the time, the newbie about 60%."""
    torch.manual_seed(42)  # the notebook's newbie: set_seed(42), then ActorCritic()
    newbie = harlow.agent_accuracy_by_trial(harlow.ActorCritic(), num_problems=200, seed=0)
    evolved = harlow.agent_accuracy_by_trial(harlow.load_evolved_agent(), num_problems=200, seed=0)
    assert len(evolved.accuracy) == 25 * 6 + 20 and evolved.counts[0] == 200
    for curve in (newbie, evolved):
        assert 0.4 < curve.accuracy[:6].mean() < 0.6
    assert 0.9 < evolved.accuracy[-20:].mean() < 0.96 and 0.55 < newbie.accuracy[-20:].mean() < 0.65
