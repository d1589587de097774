"""Tutorial 1's evolved agent, its history, and the notebook's claims about it."""


import numpy as np
import pytest

from course_utils import checkpoints, harlow
from course_utils.harlow.agent import DEFAULT_HYPERPARAMETERS
from course_utils.harlow.pretrained import CHECKPOINT


def test_evolved_agent_is_registered_and_loads():
    entry = checkpoints.read_registry()[CHECKPOINT]
    assert entry["command"] == "course train harlow"
    agent = harlow.load_evolved_agent()
    assert agent.hyperparameters() == pytest.approx(harlow.load_history()["best_hyperparameters"])
    assert agent.hyperparameters() != DEFAULT_HYPERPARAMETERS


def test_history_covers_the_full_evolution_and_the_notebook_claim():
    """The saved run the notebook plots and prints: the population mean climbs from about 5.5 to
    about 17.5 per task (of 20) over 800 generations, and the hyperparameters moved as the
    notebook's ablation says (learning rate up several-fold, gamma down)."""
    history = harlow.load_history()
    assert history["generation"] == list(range(801))
    assert history["settings"]["population_size"] == 50 and history["num_tasks"] == 10
    assert history["settings"]["new_per_generation"] == 5
    assert 45 < np.mean(history["mean"][:10]) < 65 and 165 < np.mean(history["mean"][-10:]) < 185
    assert all(b >= m for b, m in zip(history["best"], history["mean"], strict=True))
    per_task = harlow.per_task(history)
    assert 4.5 < per_task[:10].mean() < 6.5 and 16.5 < per_task[-10:].mean() < 18.5
    best = history["best_hyperparameters"]
    assert best["learning_rate"] > 3 * DEFAULT_HYPERPARAMETERS["learning_rate"]
    assert best["gamma"] < DEFAULT_HYPERPARAMETERS["gamma"] - 0.15
