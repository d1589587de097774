"""Tutorial 1's LSTM A2C agent and its train-then-evaluate loop."""

import copy

import numpy as np
import pytest
import torch

from course_utils import harlow
from course_utils.harlow.agent import agent_from_state, agent_state


def test_agent_shapes_and_hyperparameters():
    agent = harlow.ActorCritic()
    value, logits, (h, c) = agent(torch.zeros(5), agent.initial_state())
    assert value.shape == () and logits.shape == (2,) and h.shape == c.shape == (20,)
    value, logits, _ = agent(torch.zeros(3, 5), (torch.zeros(3, 20), torch.zeros(3, 20)))
    assert value.shape == (3,) and logits.shape == (3, 2)
    assert agent.hyperparameters() == {"learning_rate": 0.00075, "gamma": 0.91, "value_cost": 0.4, "entropy_cost": 0.001}
    assert "gamma=0.91" in repr(agent)


def test_agent_state_round_trip_loads_with_weights_only(tmp_path):
    agent = harlow.ActorCritic()
    agent.learning_rate, agent.gamma = 0.003, 0.7
    torch.save(agent_state(agent), tmp_path / "a.pt")
    back = agent_from_state(torch.load(tmp_path / "a.pt", weights_only=True))
    assert back.hyperparameters() == pytest.approx(agent.hyperparameters())
    for p, q in zip(agent.parameters(), back.parameters(), strict=True):
        assert torch.equal(p, q)


def test_train_evaluate_agent_trains_and_scores():
    torch.manual_seed(0)
    env = harlow.HarlowExperimentEnv()
    env.reset(seed=0)
    agent = harlow.ActorCritic()
    before = copy.deepcopy(agent.state_dict())
    score = harlow.train_evaluate_agent(env, agent, num_gradient_steps=3, num_evaluation_trials=20)
    assert score in set(range(-20, 21, 2))
    assert any(not torch.equal(before[k], v) for k, v in agent.state_dict().items())  # it learned (changed)


def test_train_evaluate_agent_can_learn_a_task():
    """With a large learning rate and enough steps, the newbie learns one task well above chance."""
    torch.manual_seed(1)
    env = harlow.HarlowExperimentEnv()
    env.reset(seed=1)
    scores = []
    for _ in range(6):
        agent = harlow.ActorCritic()
        agent.learning_rate = 0.01
        scores.append(harlow.train_evaluate_agent(env, agent, num_gradient_steps=60))
    assert np.mean(scores) > 8, scores
