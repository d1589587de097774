"""Tutorial 2's A2C agent and loss."""


import numpy as np
import torch

from course_utils import colour
from course_utils.colour.agent import a2c_loss
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
