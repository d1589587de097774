"""Tutorial 2's A2C agent and loss."""


import numpy as np
import pytest
import torch

from course_utils import colour
from course_utils.claims import claim
from course_utils.colour.agent import RHO_MAX, a2c_loss, importance_ratios
from course_utils.colour.training import run_trials


def test_fresh_experience_gives_plain_a2c_gradient():
    """The importance ratio is exactly 1 on fresh experience: the loss is the reference A2C loss."""
    torch.manual_seed(0)
    agent = colour.ActorCritic()
    env = colour.ColourEnv()
    env.reset(seed=0)
    experience = run_trials(env, agent, 100, np.random.default_rng(0)).experience()
    values, logits = agent(experience.inputs)
    log_probs = torch.log_softmax(logits, -1)
    q, running = torch.zeros(100), 0.0
    for t in reversed(range(100)):  # Q_t = r_t + gamma * Q_{t+1}, written out
        running = float(experience.rewards[t]) + agent.gamma * running
        q[t] = running
    adv = q - values
    chosen = log_probs.gather(-1, experience.actions[:, None]).squeeze(-1)
    entropy = -(log_probs.exp() * log_probs).sum(-1).mean()
    expected = -(chosen * adv.detach()).mean() + 0.4 * adv.pow(2).mean() - 0.001 * entropy
    assert torch.allclose(a2c_loss(agent, experience), expected, atol=1e-5)


def _fresh(seed=0, n=100):
    torch.manual_seed(seed)
    agent = colour.ActorCritic()
    env = colour.ColourEnv()
    env.reset(seed=seed)
    return agent, run_trials(env, agent, n, np.random.default_rng(seed)).experience()


def test_returns_fn_drives_the_loss():
    """The student's discounted_returns is what the loss uses when it is passed."""
    from course_admin.colour import solutions

    agent, experience = _fresh()
    default = a2c_loss(agent, experience)
    assert torch.allclose(a2c_loss(agent, experience, returns_fn=solutions.discounted_returns), default, atol=1e-6)
    calls = []

    def zeros(rewards, gamma):
        calls.append((len(rewards), gamma))
        return np.zeros(len(rewards))

    assert not torch.allclose(a2c_loss(agent, experience, returns_fn=zeros), default)
    assert calls == [(100, agent.gamma)]
    with pytest.raises(ValueError, match="one return per reward"):
        a2c_loss(agent, experience, returns_fn=lambda rewards, gamma: np.zeros(3))


def test_importance_ratio_is_1_on_fresh_experience_and_matters_on_stale():
    agent, experience = _fresh()
    assert torch.allclose(importance_ratios(agent, experience), torch.ones(100), atol=1e-5)
    assert torch.allclose(a2c_loss(agent, experience, importance_ratio=False), a2c_loss(agent, experience), atol=1e-6)
    stale = experience._replace(probs=experience.probs * 0.5)  # as if an older policy had acted
    assert torch.allclose(importance_ratios(agent, stale), torch.full((100,), 2.0), atol=1e-4)
    assert not torch.allclose(a2c_loss(agent, stale), a2c_loss(agent, stale, importance_ratio=False))


def test_importance_ratio_is_capped():
    """A ratio of 1000 counts as RHO_MAX: the actor term equals the one of a ratio of exactly RHO_MAX."""
    agent, experience = _fresh()
    huge = experience._replace(probs=importance_ratios(agent, experience) * experience.probs / 1000)
    at_cap = experience._replace(probs=experience.probs / RHO_MAX)
    assert torch.allclose(a2c_loss(agent, huge), a2c_loss(agent, at_cap), atol=1e-5)
    below_cap = experience._replace(probs=experience.probs * 2 / RHO_MAX)  # a ratio of 5 counts as 5
    assert not torch.allclose(a2c_loss(agent, huge), a2c_loss(agent, below_cap))


def test_a_stored_graph_is_many_times_the_experience():
    agent, experience = _fresh()
    assert colour.graph_nbytes(agent, experience) >= 5 * experience.nbytes()
    assert colour.graph_nbytes(agent, experience) < 100 * experience.nbytes()  # weights not counted
    # the notebook's step: the mode-1 agent's 100 trials
    agent = colour.load_agent("mode1")
    one_step = colour.evaluate_agent(colour.ColourEnv(), agent, mode=1, num_trials=100, rng=0).experience()
    holds, figures = claim("colour.graph_outweighs_experience").check(
        {"graph": colour.graph_nbytes(agent, one_step), "kept": one_step.nbytes()})
    assert holds, figures
