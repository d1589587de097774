"""Tutorial 1's reference solutions (harvested from the solution notebook): the one-agent genetic algorithm."""

import copy
import functools
import random

import numpy as np
import torch

from course_admin.harlow import solutions
from course_utils import harlow


def test_evaluate_individual_leaves_the_agent_unchanged():
    torch.manual_seed(0)
    env = harlow.HarlowExperimentEnv()
    env.reset(seed=0)
    agent = harlow.ActorCritic()
    agent.learning_rate = 0.01
    before = copy.deepcopy(agent.state_dict())
    small = {"num_tasks": 3, "num_gradient_steps": 2, "num_evaluation_trials": 5}
    total, scores = solutions.evaluate_individual(env, agent, torch.optim.RMSprop, **small)
    assert len(scores) == 3 and total == sum(scores)
    assert all(torch.equal(before[k], v) for k, v in agent.state_dict().items())


def _parents():
    a, b = harlow.ActorCritic(), harlow.ActorCritic()
    a.learning_rate, a.gamma, a.value_cost, a.entropy_cost = 0.0099, 0.985, 0.3, 0.002
    b.learning_rate, b.gamma, b.value_cost, b.entropy_cost = 0.0002, 0.62, 0.68, 0.045
    return a, b


def test_offspring_clamp_each_hyperparameter_by_its_own_range():
    """The reference clamped value and entropy costs using the discount factor: here every
    hyperparameter stays near a parent's value and inside its own range."""
    random.seed(0)
    np.random.seed(0)
    a, b = _parents()
    children = [solutions.create_new_agent(a, b) for _ in range(300)]
    for name, (noise, low, high) in harlow.HYPER_MUTATION.items():
        values = np.array([getattr(child, name) for child in children])
        assert values.min() >= low and values.max() <= high
        near = np.minimum(abs(values - getattr(a, name)), abs(values - getattr(b, name)))
        assert near.max() <= 5 * noise, name
        assert 0.3 < np.mean(abs(values - getattr(a, name)) < abs(values - getattr(b, name))) < 0.7  # both parents
    assert np.mean([c.value_cost for c in children]) < 0.6  # the bug would give 0.7 (gamma clamped) for most


def test_offspring_take_each_layer_from_a_parent_plus_noise():
    random.seed(1)
    torch.manual_seed(1)
    a, b = _parents()
    before = copy.deepcopy(a.state_dict())
    child = solutions.create_new_agent(a, b)
    assert all(torch.equal(before[k], v) for k, v in a.state_dict().items())  # parents unchanged
    for layer in ("embedding", "rnn", "critic", "actor"):
        diffs = {
            parent_name: max(
                float((dict(child.named_parameters())[k] - p).detach().abs().max())
                for k, p in parent.named_parameters()
                if k.startswith(layer)
            )
            for parent_name, parent in (("a", a), ("b", b))
        }
        assert min(diffs.values()) < 0.2 < max(diffs.values()) or layer == "critic", (layer, diffs)  # noise sd 0.02


def test_update_population_keeps_size_and_adds_scored_offspring(monkeypatch):
    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    env = harlow.HarlowExperimentEnv()
    env.reset(seed=0)
    small = functools.partial(solutions.evaluate_individual, num_tasks=2, num_gradient_steps=1, num_evaluation_trials=4)
    monkeypatch.setattr(solutions, "evaluate_individual", small)  # the solution scores offspring with the defaults
    population = [(agent, small(env, agent, torch.optim.RMSprop)[0]) for agent in (harlow.ActorCritic() for _ in range(6))]
    best = max(score for _, score in population)
    parents = random.choices(sorted(population, key=lambda x: x[1], reverse=True)[:3], k=2)
    new, new_best = solutions.update_population(env, torch.optim.RMSprop, population, parents, best, 2)
    assert len(new) == 6
    newcomers = [ind for ind in new if not any(ind[0] is old[0] for old in population)]
    assert len(newcomers) == 2
    assert new_best == max(best, *(s for _, s in newcomers))
