"""Tutorial 1: the Harlow environment, the win-stay lose-shift baseline, the LSTM A2C agent,
its train-then-evaluate loop, the one-agent genetic algorithm, and the evolved agent."""

import copy
import random

import numpy as np
import pytest
import torch
from gymnasium.utils.env_checker import check_env

from course_utils import checkpoints, harlow


def test_env_follows_gymnasium_api():
    env = harlow.HarlowExperimentEnv()
    check_env(env, skip_render_check=True)
    obs, info = env.reset(seed=3)
    assert obs.shape == (2,) and obs.dtype == np.float32
    assert sorted(obs.tolist()) == sorted([info["rewarded_digit"], info["punished_digit"]])
    assert info["rewarded_digit"] != info["punished_digit"]
    obs, reward, terminated, truncated, info = env.step(0)
    assert (terminated, truncated) == (False, False) and reward in (1.0, -1.0)


def test_reward_follows_the_digit_not_the_side():
    env = harlow.HarlowExperimentEnv()
    obs, info = env.reset(seed=0)
    sides = []
    for _ in range(200):
        side = int(np.flatnonzero(obs == info["rewarded_digit"])[0])
        sides.append(side)
        obs, reward, _, _, step_info = env.step(side)
        assert reward == 1.0 and step_info["correct"] and step_info["rewarded_side"] == side
        assert step_info["rewarded_digit"] == info["rewarded_digit"]  # same task until reset
    assert 0.35 < np.mean(sides) < 0.65  # the rewarded digit moves between sides at random
    obs, reward, _, _, _ = env.step(1 - int(np.flatnonzero(obs == info["rewarded_digit"])[0]))
    assert reward == -1.0


def test_env_is_seedable_and_tasks_are_uniform_pairs():
    def run(seed):
        env = harlow.HarlowExperimentEnv()
        return [env.reset(seed=seed)[0].tolist()] + [env.step(0)[0].tolist() for _ in range(20)]

    assert run(1) == run(1) and run(1) != run(2)
    env = harlow.HarlowExperimentEnv()
    env.reset(seed=0)
    pairs = {(i["rewarded_digit"], i["punished_digit"]) for i in (env.reset()[1] for _ in range(2000))}
    assert len(pairs) == 90  # every ordered pair of different digits appears


@pytest.mark.parametrize("action", [-1, 2, 0.5, "left", True, None, torch.tensor([0, 1])])
def test_bad_action_says_what_is_allowed(action):
    env = harlow.HarlowExperimentEnv()
    env.reset(seed=0)
    with pytest.raises(ValueError, match="0 \\(left\\) or 1 \\(right\\)|single 0 or 1"):
        env.step(action)


def test_step_before_reset_and_bad_digits_are_explained():
    with pytest.raises(RuntimeError, match="reset"):
        harlow.HarlowExperimentEnv().step(0)
    env = harlow.HarlowExperimentEnv()
    with pytest.raises(ValueError, match="two different digits"):
        env.reset(options={"digits": (3, 3)})
    obs, info = env.reset(options={"digits": (7, 2)})
    assert (info["rewarded_digit"], info["punished_digit"]) == (7, 2)
    assert env.step(np.int64(0))[1] in (1.0, -1.0) and env.step(torch.tensor(1))[1] in (1.0, -1.0)


def test_win_stay_lose_shift_is_at_chance():
    """It ignores the digits, so on average it earns nothing; it is deterministic from a seed."""
    env = harlow.HarlowExperimentEnv()
    totals = harlow.run_dummy_agent(env, num_trials=100, seed=42)
    assert len(totals) == 101 and totals[0] == 0 and harlow.run_dummy_agent(env, 100, seed=42) == totals
    assert all(abs(b - a) == 1 for a, b in zip(totals, totals[1:], strict=False))
    finals = [harlow.run_dummy_agent(env, 100, seed=s)[-1] for s in range(200)]
    assert abs(np.mean(finals)) < 3  # chance: sd of one run is 10, of the mean of 200 runs 0.7


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
    torch.save(harlow.agent_state(agent), tmp_path / "a.pt")
    back = harlow.agent_from_state(torch.load(tmp_path / "a.pt", weights_only=True))
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


def test_evaluate_individual_leaves_the_agent_unchanged():
    torch.manual_seed(0)
    env = harlow.HarlowExperimentEnv()
    env.reset(seed=0)
    agent = harlow.ActorCritic()
    agent.learning_rate = 0.01
    before = copy.deepcopy(agent.state_dict())
    total, scores = harlow.evaluate_individual(env, agent, num_tasks=3, num_gradient_steps=2, num_evaluation_trials=5)
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
    children = [harlow.create_new_agent(a, b) for _ in range(300)]
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
    child = harlow.create_new_agent(a, b)
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


def test_update_population_keeps_size_and_adds_scored_offspring():
    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    env = harlow.HarlowExperimentEnv()
    env.reset(seed=0)
    small = {"num_tasks": 2, "num_gradient_steps": 1, "num_evaluation_trials": 4}
    population, best = harlow.create_initial_population(env, population_size=6, **small)
    parents = harlow.select_parents(population, tournament_size=3, parents_size=2)
    top3 = sorted(population, key=lambda x: x[1], reverse=True)[:3]
    assert all(any(p is t for t in top3) for p in parents)
    new, new_best = harlow.update_population(env, torch.optim.RMSprop, population, parents, best, 2, **small)
    assert len(new) == 6
    newcomers = [ind for ind in new if not any(ind[0] is old[0] for old in population)]
    assert len(newcomers) == 2
    assert new_best == max(best, *(s for _, s in newcomers))


def test_evolved_agent_is_registered_and_loads():
    entry = checkpoints.read_registry()[harlow.CHECKPOINT]
    assert entry["command"] == "course train harlow"
    agent = harlow.load_evolved_agent()
    assert agent.hyperparameters() == pytest.approx(harlow.load_history()["best_hyperparameters"])
    assert agent.hyperparameters() != harlow.DEFAULT_HYPERPARAMETERS


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


def test_accuracy_by_trial_groups_attempts():
    curve = harlow.accuracy_by_trial([1, 2, 1, 2, 3], [True, True, False, True, False])
    assert curve.accuracy.tolist() == [0.5, 1.0, 0.0] and curve.counts.tolist() == [2, 2, 1]
