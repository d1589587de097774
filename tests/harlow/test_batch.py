"""The batched Harlow evolution computes what the one-agent notebook code computes: the same
forward pass, the same gradients, the same RMSprop, the same scores in distribution, and a
genetic algorithm with the same operators, deterministic from a seed."""

import numpy as np
import pytest
import torch

from course_admin.harlow import batch as hb
from course_admin.harlow import bench, solutions
from course_utils import harlow
from course_utils.harlow import scoring as hs
from course_utils.harlow.env import VectorHarlowEnv


def discounted_returns(rewards, gamma):
    """Q_t = r_t + gamma * Q_(t+1) along the last axis (rows of rewards, one gamma per row), float64."""
    rewards = np.asarray(rewards, dtype=np.float64)
    gamma = np.asarray(gamma, dtype=np.float64)
    returns, running = np.empty_like(rewards), np.zeros(rewards.shape[:-1])
    for t in range(rewards.shape[-1] - 1, -1, -1):
        running = rewards[..., t] + gamma * running
        returns[..., t] = running
    return returns


def _agents(n, seed=0):
    torch.manual_seed(seed)
    agents = [harlow.ActorCritic() for _ in range(n)]
    with torch.no_grad():
        for agent in agents:
            for p in agent.parameters():
                p.add_(0.3 * torch.randn_like(p))  # larger weights than at init: stronger gradients
    return agents


def _trajectory(P, T, seed=0):
    rng = np.random.default_rng(seed)
    inputs = torch.zeros(P, T, 5)
    inputs[:, :, :2] = torch.from_numpy(rng.integers(0, 10, (P, T, 2)).astype(np.float32))
    actions = torch.from_numpy(rng.integers(0, 2, (P, T)))
    rewards = np.where(rng.random((P, T)) < 0.5, 1.0, -1.0).astype(np.float32)
    inputs[:, 1:, 2] = torch.from_numpy(rewards[:, :-1])
    inputs[:, 1:, 3:] = torch.nn.functional.one_hot(actions[:, :-1], 2).float()
    return inputs, actions, rewards


def a2c_losses(params: dict[str, torch.Tensor], inputs: torch.Tensor, actions: torch.Tensor, rewards: np.ndarray, hypers):
    """Per-pair A2C losses (P,) with autograd, for one episode of T trials replayed with
    given inputs (P, T, 5) and actions (P, T): the formula of ``harlow.train_evaluate_agent``
    (autograd's answer, to test the hand-written backward pass against)."""
    net = hs._BatchedNet(params)
    P, T = actions.shape
    state = net.initial_state(P)
    values, logits = [], []
    for t in range(T):
        v, lg, state = net(inputs[:, t], state)
        values.append(v)
        logits.append(lg)
    values, logits = torch.stack(values, 1), torch.stack(logits, 1)
    log_probs = torch.log_softmax(logits, dim=2)  # (P, T, 2)
    chosen = log_probs.gather(2, actions.unsqueeze(2)).squeeze(2)
    entropy = -(log_probs.exp() * log_probs).sum(2)
    advantage = torch.from_numpy(discounted_returns(rewards, hypers[:, 1])).float() - values
    h = torch.from_numpy(hypers.astype(np.float32))
    actor = -(chosen * advantage.detach()).mean(1)
    critic = advantage.pow(2).mean(1)
    return actor + h[:, 2] * critic - h[:, 3] * entropy.mean(1)


def test_stack_and_unstack_round_trip():
    agents = _agents(3)
    agents[1].gamma = 0.7
    params, hypers = hs.stack_agents(agents)
    assert params["rnn.weight_hh"].shape == (3, 80, 20) and hypers.shape == (3, 4) and hypers[1, 1] == 0.7
    back = hb.unstack_agent(params, hypers, 1)
    assert back.hyperparameters() == pytest.approx(agents[1].hyperparameters())
    assert all(torch.equal(p, q) for p, q in zip(back.parameters(), agents[1].parameters(), strict=True))


def test_batched_forward_equals_each_agent():
    agents = _agents(4)
    params, _ = hs.stack_agents(agents)
    net = hs._BatchedNet(params)
    inputs, _, _ = _trajectory(4, 6)
    state = net.initial_state(4)
    states = [agent.initial_state() for agent in agents]
    for t in range(6):
        values, logits, state = net(inputs[:, t], state)
        for k, agent in enumerate(agents):
            with torch.no_grad():
                value, logit, states[k] = agent(inputs[k, t], states[k])
            torch.testing.assert_close(values[k], value, atol=1e-5, rtol=1e-5)
            torch.testing.assert_close(logits[k], logit, atol=1e-5, rtol=1e-5)


def test_hand_written_gradients_equal_each_agents_autograd_gradients():
    """Summing the pairs' losses gives each pair exactly its own gradient; the hand-written
    backward pass equals autograd on the notebook's nn.Module loss."""
    agents = _agents(5, seed=1)
    for k, agent in enumerate(agents):
        agent.gamma, agent.value_cost, agent.entropy_cost = 0.6 + 0.08 * k, 0.1 + 0.15 * k, 0.01 * k
    params, hypers = hs.stack_agents(agents)
    inputs, actions, rewards = _trajectory(5, 6, seed=2)
    net = hs._BatchedNet(params)
    net.cache = []
    state, values, logits = net.initial_state(5), [], []
    for t in range(6):
        v, lg, state = net(inputs[:, t], state)
        values.append(v)
        logits.append(lg)
    grads = net.a2c_backward(torch.stack(values, 1), torch.stack(logits, 1), actions, rewards, hypers)
    for k, agent in enumerate(agents):
        state, vs, log_probs, entropies = agent.initial_state(), [], [], []
        for t in range(6):
            v, lg, state = agent(inputs[k, t], state)
            dist = torch.distributions.Categorical(logits=lg)
            vs.append(v)
            log_probs.append(dist.log_prob(actions[k, t]))
            entropies.append(dist.entropy())
        advantage = torch.from_numpy(discounted_returns(rewards[k].tolist(), agent.gamma)).float() - torch.stack(vs)
        loss = (
            -(torch.stack(log_probs) * advantage.detach()).mean()
            + agent.value_cost * advantage.pow(2).mean()
            - agent.entropy_cost * torch.stack(entropies).mean()
        )
        agent.zero_grad()
        loss.backward()
        for name, p in agent.named_parameters():
            torch.testing.assert_close(grads[name][k], p.grad, atol=2e-5, rtol=1e-4, msg=name)
    # and the autograd version of the batched loss agrees too
    leaves = {n: p.clone().requires_grad_(True) for n, p in params.items()}
    auto = torch.autograd.grad(a2c_losses(leaves, inputs, actions, rewards, hypers).sum(), list(leaves.values()))
    for (name, _), g in zip(leaves.items(), auto, strict=True):
        torch.testing.assert_close(grads[name], g, atol=2e-5, rtol=1e-4, msg=name)


def test_batched_rmsprop_equals_torch_rmsprop_per_pair():
    torch.manual_seed(0)
    weights = torch.randn(3, 7)
    lrs = torch.tensor([[0.001], [0.003], [0.01]])
    flat, square_avg = weights.clone(), torch.zeros(3, 7)
    mine = [torch.nn.Parameter(weights[k].clone()) for k in range(3)]
    optimizers = [torch.optim.RMSprop([p], lr=float(lrs[k]), eps=1e-5) for k, p in enumerate(mine)]
    for _ in range(4):
        grad = torch.randn(3, 7)
        hs.rmsprop_step(flat, square_avg, grad, lrs)
        for k, (p, opt) in enumerate(zip(mine, optimizers, strict=True)):
            p.grad = grad[k].clone()
            opt.step()
    for k in range(3):
        torch.testing.assert_close(flat[k], mine[k].detach())


def test_vector_env_draws_uniform_tasks_and_pays_the_digit():
    env = VectorHarlowEnv(5000, np.random.default_rng(0))
    assert np.all(env.rewarded != env.punished)
    assert len(set(zip(env.rewarded.tolist(), env.punished.tolist(), strict=True))) == 90
    obs = env.observation()
    side = np.where(obs[:, 0] == env.rewarded, 0, 1)
    rewards, correct = env.step(side)
    assert np.all(rewards == 1) and np.all(correct)
    assert 0.45 < env.rewarded_side.mean() < 0.55
    rewards, _ = env.step(1 - np.where(env.observation()[:, 0] == env.rewarded, 0, 1))
    assert np.all(rewards == -1)


def test_train_evaluate_pairs_returns_scores_and_every_trial():
    params, hypers = hs.stack_agents(_agents(3))
    before = {n: p.clone() for n, p in params.items()}
    scores, correct = hs.train_evaluate_pairs(params, hypers, np.random.default_rng(0), num_gradient_steps=2)
    assert scores.shape == (3,) and correct.shape == (3, 2 * 6 + 20)
    np.testing.assert_array_equal(scores, 2 * correct[:, -20:].sum(1) - 20)
    assert all(torch.equal(before[n], p) for n, p in params.items())  # training worked on a copy


def _welch(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return (a.mean() - b.mean()) / np.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b))


def _one_agent_scores(agent, num_tasks, seed):
    torch.manual_seed(seed)
    env = harlow.HarlowExperimentEnv()
    env.reset(seed=seed)
    return solutions.evaluate_individual(env, agent, torch.optim.RMSprop, num_tasks=num_tasks)[1]


def _batched_scores(agent, num_tasks, seed):
    params, hypers = hs.stack_agents([agent])
    return hs.evaluate_population(params, hypers, np.random.default_rng(seed), num_tasks)[0]


def test_batched_scores_match_the_notebook_loop_in_distribution():
    """The evolved agent learns a lot in its 25 gradient steps (about 0 without them, about
    17.6 of 20 with them), so its mean score tests the whole training loop."""
    agent = harlow.load_evolved_agent()
    slow = _one_agent_scores(agent, 24, seed=0)
    fast = _batched_scores(agent, 400, seed=0)
    # The scores are skewed (about half the tasks end at 20), so a small sample underestimates its
    # spread: measure the difference in standard errors of the large batched sample's spread.
    z = (np.mean(slow) - np.mean(fast)) / (np.std(fast, ddof=1) / np.sqrt(len(slow)))
    assert abs(z) < 4 and abs(np.mean(slow) - np.mean(fast)) < 2.5, (np.mean(slow), np.mean(fast))
    no_training = hs.evaluate_population(*hs.stack_agents([agent]), np.random.default_rng(1), 400, num_gradient_steps=0)
    assert abs(np.mean(slow) - no_training.mean()) / (np.std(fast, ddof=1) / np.sqrt(len(slow))) > 8  # tells a broken loop apart


@pytest.mark.slow
@pytest.mark.parametrize("which", ["evolved", "newbie"])
def test_batched_scores_match_the_notebook_loop_in_distribution_full(which):
    agent = harlow.load_evolved_agent() if which == "evolved" else harlow.ActorCritic()
    slow = _one_agent_scores(agent, 200, seed=1)
    fast = _batched_scores(agent, 2000, seed=1)
    assert abs(_welch(slow, fast)) < 4, (np.mean(slow), np.mean(fast))


def test_offspring_operators_match_the_notebook_ones():
    """Layers come whole from one parent, plus noise; each hyperparameter is clamped to its
    own range (the reference's bug clamped the value and entropy costs with gamma)."""
    a, b = harlow.ActorCritic(), harlow.ActorCritic()
    a.learning_rate, a.gamma, a.value_cost, a.entropy_cost = 0.0099, 0.985, 0.3, 0.002
    b.learning_rate, b.gamma, b.value_cost, b.entropy_cost = 0.0002, 0.62, 0.68, 0.045
    params, hypers = hs.stack_agents([a, b])
    K = 400
    children, child_hypers = hb.make_offspring(
        params, hypers, np.zeros(K, int), np.ones(K, int), np.random.default_rng(0), torch.Generator().manual_seed(0)
    )
    for j, name in enumerate(hb.HYPER_NAMES):
        noise, low, high = harlow.HYPER_MUTATION[name]
        values = child_hypers[:, j]
        assert values.min() >= low and values.max() <= high
        assert np.minimum(abs(values - hypers[0, j]), abs(values - hypers[1, j])).max() <= 5 * noise
        assert 0.4 < np.mean(abs(values - hypers[0, j]) < abs(values - hypers[1, j])) < 0.6
    for layer in hb.LAYERS:
        names = [n for n in params if n.startswith(layer)]
        from_a = [max(float((children[n][k] - params[n][0]).abs().max()) for n in names) < 0.15 for k in range(K)]
        from_b = [max(float((children[n][k] - params[n][1]).abs().max()) for n in names) < 0.15 for k in range(K)]
        assert all(x != y for x, y in zip(from_a, from_b, strict=True)) or layer == "critic", layer
        noise = torch.cat([(children[names[0]][k] - params[names[0]][0 if from_a[k] else 1]).flatten() for k in range(K)])
        assert abs(float(noise.std()) - harlow.PARAMETER_NOISE) < 0.002


def test_evolution_is_deterministic_from_a_seed():
    small = {
        "population_size": 8,
        "generations": 6,
        "new_per_generation": 2,
        "tournament_size": 4,
        "parents_size": 2,
        "num_tasks": 2,
        "final_candidates": 2,
        "final_tasks": 3,
        "num_gradient_steps": 3,
        "progress": False,
    }
    first, second = hb.evolve(seed=3, **small), hb.evolve(seed=3, **small)
    assert first["mean"] == second["mean"] and first["best_hyperparameters"] == second["best_hyperparameters"]
    assert len(first["generation"]) == 7 and first["settings"]["population_size"] == 8
    assert hb.evolve(seed=4, **small)["mean"] != first["mean"]
    for p, q in zip(first["agent"].parameters(), second["agent"].parameters(), strict=True):
        assert torch.equal(p, q)


def test_bench_reports_both_paths():
    result = bench.bench_harlow(slow_individuals=1, num_tasks=1)
    assert result["benchmark"] == "harlow" and result["speedup"] > 1
    assert {"batched_s_per_individual", "one_agent_s_per_individual", "batched_cpu_s_per_individual"} <= set(result)


def test_given_digits_fix_the_tasks():
    env = VectorHarlowEnv(3, np.random.default_rng(0), digits=(np.array([1, 2, 3]), np.array([4, 5, 6])))
    assert env.rewarded.tolist() == [1, 2, 3] and env.punished.tolist() == [4, 5, 6]
    with pytest.raises(ValueError, match="two different digits"):
        VectorHarlowEnv(1, np.random.default_rng(0), digits=(np.array([1]), np.array([1])))


def test_scored_population_is_the_notebooks_form_and_deterministic():
    first = harlow.scored_population(size=3, num_tasks=2, seed=5)
    second = harlow.scored_population(size=3, num_tasks=2, seed=5)
    assert len(first) == 3 and all(isinstance(a, harlow.ActorCritic) and -40 <= s <= 40 for a, s in first)
    assert [s for _, s in first] == [s for _, s in second]
    assert all(
        torch.equal(p, q)
        for (a, _), (b, _) in zip(first, second, strict=True)
        for p, q in zip(a.parameters(), b.parameters(), strict=True)
    )
