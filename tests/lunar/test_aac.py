"""The course's actor-critic (``course_admin.lunar.aac``): deterministic training, GAE, evaluation; the
pretrained agent the student package loads (``course_utils.lunar.evaluation``) and its curve."""

import json

import pytest
import torch
from torch import nn

from course_admin.lunar.aac import (
    CHECKPOINT,
    DEFAULT_AAC,
    FAST_EVAL_THRESHOLD,
    ActorCriticNet,
    evaluate,
    gae_advantages,
    train_aac,
)
from course_admin.lunar.episodes import collect_episodes
from course_admin.lunar.solutions import Episode
from course_utils import checkpoints
from course_utils.lunar import evaluation
from course_utils.lunar.env import EVAL_SEEDS, make_env_for
from course_utils.lunar.evaluation import TRAINING_CURVE, PretrainedLander, load_pretrained
from course_utils.lunar.harness import greedy_policy


def _course_net() -> ActorCriticNet:
    """The checkpoint in the course's own network (instructor side)."""
    net = ActorCriticNet()
    net.load_state_dict(checkpoints.load_checkpoint(CHECKPOINT))
    return net.eval()


def test_aac_training_is_deterministic_and_bootstraps_only_on_truncation():
    config = dict(total_steps=2 * 4 * 32, num_envs=4, rollout_steps=32, minibatches=2, epochs=1)
    net1, curve1 = train_aac(config, progress=False, log_every=1, workers=1)
    net2, _ = train_aac(config, progress=False, log_every=1, workers=2)  # worker processes: same result
    for a, b in zip(net1.state_dict().values(), net2.state_dict().values(), strict=True):
        assert torch.equal(a, b)
    assert curve1["steps"] == [128, 256]
    # GAE: with lambda=1 and gamma=1 the advantage is the reward-to-go minus V, cut at episode ends.
    rewards = torch.tensor([[1.0], [1.0], [1.0]])
    values = torch.zeros(3, 1)
    next_values = torch.tensor([[0.0], [0.0], [5.0]])  # step 1 terminated; step 2 truncated with V=5
    ends = torch.tensor([[0.0], [1.0], [1.0]])
    adv = gae_advantages(rewards, values, next_values, ends, 1.0, 1.0)
    assert adv.view(-1).tolist() == [2.0, 1.0, 6.0]


def test_pretrained_agent_lands_on_fixed_seeds():
    """Fast version of the claim: 10 fixed evaluation seeds, greedy actions. The episode the
    notebook animates ("This landing", the first seed) ends at rest on the ground (the +100 of
    a landing, not the -100 of a crash) before the time limit."""
    net = load_pretrained()
    returns = evaluation.evaluate(net, EVAL_SEEDS[:10])
    assert returns.mean() >= FAST_EVAL_THRESHOLD
    env = make_env_for(net)
    obs, _ = env.reset(seed=EVAL_SEEDS[0])
    policy, total = greedy_policy(net), 0.0
    while True:
        obs, reward, terminated, truncated, _ = env.step(policy(obs))
        total += reward
        if terminated or truncated:
            break
    assert terminated and not truncated and reward == 100 and total >= 200


@pytest.mark.slow
def test_pretrained_agent_solves_lunar_lander_over_100_episodes():
    net = load_pretrained()
    returns = evaluation.evaluate(net, EVAL_SEEDS)
    assert len(returns) == 100 and returns.mean() - returns.std() >= 200  # the bar (solve.BAR)
    curve = json.loads(TRAINING_CURVE.read_text())
    assert curve["evaluation"]["deterministic_mean"] == pytest.approx(returns.mean(), abs=1e-6)


def test_training_curve_records_a_solved_run():
    """The stored run stopped at its first evaluation that passed the bar, and that evaluation
    is the stored evaluation of the checkpoint (the same network and seeds)."""
    curve = json.loads(TRAINING_CURVE.read_text())
    solve = curve["solve"]
    assert solve["solved"] and solve["steps"] == curve["steps"][-1]
    scores = [e["score"] for e in solve["evaluations"]]
    assert scores[-1] >= 200 and all(s < 200 for s in scores[:-1])
    ev = curve["evaluation"]
    assert ev["deterministic_mean"] - ev["deterministic_std"] == pytest.approx(scores[-1], abs=0.01)
    assert curve["evaluation"]["deterministic_mean"] >= 200
    assert len(curve["steps"]) == len(curve["mean_reward"]) == len(curve["wall_s"])


def test_notebook_description_of_the_final_agent_matches_its_training():
    """The notebook describes the course's agent: 16 envs, rollouts of 256 steps, gamma 0.999, GAE 0.98,
    4 passes of minibatches of 64, ratio clipped to [0.8, 1.2], 64-64 tanh networks, bootstrapping at truncation."""
    cfg = DEFAULT_AAC
    assert (cfg["num_envs"], cfg["rollout_steps"], cfg["gamma"], cfg["gae_lambda"]) == (16, 256, 0.999, 0.98)
    assert cfg["epochs"] == 4 and cfg["num_envs"] * cfg["rollout_steps"] // cfg["minibatches"] == 64 and cfg["clip"] == 0.2
    assert tuple(cfg["hidden"]) == (64, 64) and cfg["bootstrap_truncated"] and not cfg["time_feature"]
    curve = json.loads(TRAINING_CURVE.read_text())
    assert curve["config"] == {**cfg, "hidden": list(cfg["hidden"])}
    net = _course_net()
    assert isinstance(net.policy[1], nn.Tanh) and net.hidden == (64, 64)


def test_the_student_package_loads_the_checkpoint_into_a_network_that_only_flies():
    """``load_pretrained`` (student package): the checkpoint's policy, frozen (no parameters, no
    gradient, action scores only: no answer to the network exercises), giving the course network's
    action scores bit for bit, and so its greedy returns."""
    frozen, course = load_pretrained(), _course_net()
    assert isinstance(frozen, PretrainedLander) and list(frozen.parameters()) == []
    states = torch.randn(64, 8)
    scores = frozen(states)
    assert not scores.requires_grad and torch.equal(scores, course(states)[0])
    seeds = EVAL_SEEDS[:6]
    assert evaluation.evaluate(frozen, seeds).tolist() == evaluate(course, seeds, deterministic=True).tolist()


@pytest.mark.slow
def test_course_train_lunar_reproduces_the_registry(tmp_path):
    """Training is deterministic: retraining gives the registered checkpoint bit for bit (~5 min of CPU)."""
    from course_admin.lunar.solve import train_until_solved

    net, result = train_until_solved(progress=False)
    curve = result["curve"]
    entry = checkpoints.save_checkpoint(net.state_dict(), "lunar_aac", "course train lunar", tmp_path / "r.json", tmp_path)
    assert entry["sha256"] == checkpoints.read_registry()["lunar_aac"]["sha256"]
    stored = json.loads(TRAINING_CURVE.read_text())
    assert curve["episodes"] == stored["episodes"] and curve["mean_reward"] == stored["mean_reward"]


@pytest.mark.parametrize("deterministic", [True, False])
def test_evaluate_plays_the_episodes_collect_episodes_plays(deterministic):
    """One stepping loop (``episodes.play_together``): ``evaluate``'s totals are the total rewards
    of the episodes ``collect_episodes`` builds from the same seeds and action generator."""
    torch.manual_seed(1)
    net = ActorCriticNet(hidden=(16, 16))
    seeds = [3, 4, 5]
    totals = evaluate(net, seeds, deterministic=deterministic, sample_seed=7)
    generator = torch.Generator().manual_seed(7)
    episodes = collect_episodes(net, seeds, generator, deterministic, episode_type=Episode)
    assert totals.tolist() == [episode.total_reward for episode in episodes]
