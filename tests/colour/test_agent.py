"""Tutorial 2's A2C agent and its training step (the student's actor term fused with the critic's
and the entropy's terms)."""


import numpy as np
import pytest
import torch

from course_admin.colour import solutions
from course_utils import colour
from course_utils.claims import claim
from course_utils.colour.agent import RHO_MAX, importance_ratios
from course_utils.colour.training import _gradient_step, run_trials


def _fresh(seed=0, n=100):
    torch.manual_seed(seed)
    agent = colour.ActorCritic()
    env = colour.ColourEnv()
    env.reset(seed=seed)
    return agent, run_trials(env, agent, n, np.random.default_rng(seed)).experience()


def _written_out_loss(agent, experience, rho=None):
    """The A2C loss written out here: actor + 0.4 * critic - 0.001 * entropy, the actor's term
    weighed by ``rho`` (T,) (1 when None)."""
    values, logits = agent(experience.inputs)
    log_probs = torch.log_softmax(logits, -1)
    q, running = torch.zeros(len(experience.rewards)), 0.0
    for t in reversed(range(len(experience.rewards))):  # Q_t = r_t + gamma * Q_{t+1}
        running = float(experience.rewards[t]) + agent.gamma * running
        q[t] = running
    adv = q - values
    chosen = log_probs.gather(-1, experience.actions[:, None]).squeeze(-1)
    weight = torch.ones_like(chosen) if rho is None else rho
    entropy = -(log_probs.exp() * log_probs).sum(-1).mean()
    return -(weight * chosen * adv.detach()).mean() + 0.4 * adv.pow(2).mean() - 0.001 * entropy


def _step(agent, experience, actor_loss_fn=solutions.replay_actor_loss, **kwargs):
    """The step's loss and the gradient it left on the agent's weights."""
    loss = _gradient_step(agent, torch.optim.SGD(agent.parameters(), lr=0.0), experience, actor_loss_fn, **kwargs)
    return loss, torch.cat([p.grad.reshape(-1) for p in agent.parameters()])


def _written_out_grad(agent, experience, rho=None):
    agent.zero_grad()
    loss = _written_out_loss(agent, experience, rho)
    loss.backward()
    return float(loss.detach()), torch.cat([p.grad.reshape(-1) for p in agent.parameters()])


def test_fresh_experience_gives_the_plain_a2c_loss_and_gradient():
    """With the solution's actor term, on fresh experience (every ratio 1), the step's loss and
    gradient are the A2C loss written out."""
    agent, experience = _fresh()
    want_loss, want_grad = _written_out_grad(agent, experience)
    loss, grad = _step(agent, experience)
    assert loss == pytest.approx(want_loss, abs=1e-5)
    assert torch.allclose(grad, want_grad, atol=1e-5)


def test_the_step_hands_the_actor_term_what_the_exercise_promises():
    agent, experience = _fresh(n=20)
    seen = []

    def actor(log_pi, mu, advantage, rho_max):
        seen.append((log_pi.shape, log_pi.requires_grad, mu.requires_grad, advantage.requires_grad, rho_max))
        return solutions.replay_actor_loss(log_pi, mu, advantage, rho_max)

    _step(agent, experience, actor)
    assert seen == [((20,), True, False, True, RHO_MAX)]


def test_importance_ratio_is_1_on_fresh_experience_and_matters_on_stale():
    agent, experience = _fresh()
    assert torch.allclose(importance_ratios(agent, experience), torch.ones(100), atol=1e-5)
    stale = experience._replace(probs=experience.probs * 0.5)  # as if an older policy had acted
    assert torch.allclose(importance_ratios(agent, stale), torch.full((100,), 2.0), atol=1e-4)
    with_ratio, with_grad = _step(agent, stale)
    want_loss, want_grad = _written_out_grad(agent, stale, torch.full((100,), 2.0))
    assert with_ratio == pytest.approx(want_loss, abs=1e-5) and torch.allclose(with_grad, want_grad, atol=1e-5)
    _, without_grad = _step(agent, stale, importance_ratio=False)  # the ablation: every ratio 1
    assert torch.allclose(without_grad, _written_out_grad(agent, stale)[1], atol=1e-5)
    assert not torch.allclose(without_grad, with_grad, atol=1e-3)


def test_importance_ratio_is_capped():
    """A ratio of 1000 counts as RHO_MAX: the step equals the one of a ratio of exactly RHO_MAX."""
    agent, experience = _fresh()
    huge = experience._replace(probs=importance_ratios(agent, experience) * experience.probs / 1000)
    at_cap = experience._replace(probs=experience.probs / RHO_MAX)
    assert _step(agent, huge)[0] == pytest.approx(_step(agent, at_cap)[0], abs=1e-5)
    below_cap = experience._replace(probs=experience.probs * 2 / RHO_MAX)  # a ratio of 5 counts as 5
    assert _step(agent, huge)[0] != pytest.approx(_step(agent, below_cap)[0], abs=1e-5)


def test_replayed_step_leaves_the_agent_and_matches_the_stored_value():
    """The notebook's replayed step: the solution's actor term gives the stored loss and gradient
    norm; a wrong one does not; the agent is not changed."""
    from course_utils.colour.expected import replayed_step as stored

    mode2 = colour.load_agent("mode2")
    before = [p.detach().clone() for p in mode2.parameters()]
    one_step = colour.evaluate_agent(colour.ColourEnv(), colour.load_agent("mode1"), mode=1, num_trials=100,
                                     rng=0).experience()
    step = colour.replayed_step(mode2, one_step, solutions.replay_actor_loss)
    assert all(torch.equal(a, b) for a, b in zip(before, mode2.parameters(), strict=True))
    assert step["rho_max"] > 1 > step["rho_min"]
    assert step["loss"] == pytest.approx(stored()["loss"], rel=1e-4)
    assert step["grad_norm"] == pytest.approx(stored()["grad_norm"], rel=1e-4)

    def no_cap(log_pi, mu, advantage, rho_max):
        return -((log_pi.detach().exp() / mu) * log_pi * advantage.detach()).mean()

    wrong = colour.replayed_step(mode2, one_step, no_cap)
    if step["capped"] > 0:
        assert wrong["loss"] != pytest.approx(stored()["loss"], rel=1e-4)


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
