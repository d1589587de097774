"""Tutorial 2's training loop, evaluation, and the notebook's claims on the pretrained agents."""

import copy

import pytest
import torch

from course_admin.colour import solutions
from course_utils import colour
from course_utils.claims import claim
from course_utils.runtime import set_seed

ACTOR = solutions.replay_actor_loss


def test_replay_memory_keeps_no_graphs_and_stays_small():
    memory = solutions.ReplayMemory(250)
    colour.train_agent(
        colour.ColourEnv(), colour.ActorCritic(), 1, 300, replay=memory, replay_mode="write", rng=0, progress=False,
        actor_loss_fn=ACTOR,
    )
    assert len(memory) == 250
    for experience in memory.slots:
        for tensor in experience:
            assert tensor.grad_fn is None and not tensor.requires_grad
    assert sum(e.nbytes() for e in memory.slots) <= 20e6
    assert sum(e.nbytes() for e in memory.slots) == 250 * 100 * (9 * 4 + 8 + 4 + 4)


def test_training_is_deterministic_for_a_seed():
    def weights(seed):
        torch.manual_seed(seed)
        agent = colour.ActorCritic()
        colour.train_agent(colour.ColourEnv(), agent, 1, 20, rng=seed, progress=False, actor_loss_fn=ACTOR)
        return torch.cat([p.flatten() for p in agent.parameters()])

    assert torch.equal(weights(0), weights(0))
    assert not torch.equal(weights(0), weights(1))


def test_replay_mode_needs_a_memory():
    with pytest.raises(ValueError, match="needs a replay memory"):
        colour.train_agent(colour.ColourEnv(), colour.ActorCritic(), 1, 1, replay_mode="read", progress=False,
                           actor_loss_fn=ACTOR)
    with pytest.raises(ValueError, match="replay_mode must be"):
        colour.train_agent(
            colour.ColourEnv(), colour.ActorCritic(), 1, 1, replay=solutions.ReplayMemory(), replay_mode="wrote", progress=False,
            actor_loss_fn=ACTOR,
        )
    with pytest.raises(TypeError, match="needs actor_loss_fn"):
        colour.train_agent(colour.ColourEnv(), colour.ActorCritic(), 1, 1, progress=False, actor_loss_fn=None)


def test_play_pairs_uses_the_given_pairs():
    pairs = [("red", "blue"), ("yellow", "green"), ("green", "red")]
    trials = colour.play_pairs(colour.ActorCritic(), pairs, rng=0)
    assert trials.shown == pairs
    with pytest.raises(ValueError, match="Unknown colours"):
        colour.play_pairs(colour.ActorCritic(), [("red", "purple")])


@pytest.fixture(scope="module")
def evaluations():
    env = colour.ColourEnv()
    agents = {name: colour.load_agent(name) for name in ("mode1", "mode2", "replay")}
    return {
        (name, mode): colour.evaluate_agent(env, agent, mode=mode, num_trials=5000, rng=1)
        for name, agent in agents.items()
        for mode in (1, 2)
    }


def test_claim_mode1_agent_is_nearly_perfect_and_prefers_green_to_blue(evaluations):
    holds, figures = claim("colour.mode1_agent").check({"mode1_on_1": evaluations["mode1", 1],
                                                        "mode1_on_2": evaluations["mode1", 2]})
    assert holds, figures


def test_claim_mode2_training_forgets_red_vs_yellow(evaluations):
    result = {"mode1_on_1": evaluations["mode1", 1], "mode2_on_1": evaluations["mode2", 1],
              "mode2_on_2": evaluations["mode2", 2]}
    holds, figures = claim("colour.forgets_red_yellow").check(result)
    assert holds, figures


def test_claim_replay_keeps_mode1_above_85_percent(evaluations):
    assert colour.accuracy(evaluations["replay", 1]) >= 0.85
    assert colour.pair_accuracy(evaluations["replay", 1])["red/yellow"] >= 0.85
    assert colour.accuracy(evaluations["replay", 2]) >= 0.90


def test_claims_hold_at_fast_mode_size():
    """What the notebook trains live in fast mode (400 steps per mode) still shows replay working."""
    set_seed(1)
    env, memory, agent = colour.ColourEnv(), solutions.ReplayMemory(250), colour.ActorCritic()
    colour.train_agent(env, agent, 1, 400, replay=memory, replay_mode="write", rng=1, progress=False, actor_loss_fn=ACTOR)
    plain = copy.deepcopy(agent)
    colour.train_agent(env, plain, 2, 400, rng=11, progress=False, actor_loss_fn=ACTOR)
    colour.train_agent(env, agent, 2, 400, replay=memory, replay_mode="read", rng=11, progress=False, actor_loss_fn=ACTOR)
    with_replay = colour.evaluate_agent(env, agent, 1, 3000, rng=1)
    without = colour.evaluate_agent(env, plain, 1, 3000, rng=1)
    assert colour.accuracy(with_replay) >= 0.85
    assert colour.pair_accuracy(with_replay)["red/yellow"] > colour.pair_accuracy(without)["red/yellow"] + 0.1


def test_train_agent_uses_the_actor_term_for_every_step_and_reports_each_step():
    """The student's replay_actor_loss drives training: it is called for each new and replayed step."""
    calls, steps = [], []

    def actor(log_pi, mu, advantage, rho_max):
        calls.append(len(log_pi))
        return ACTOR(log_pi, mu, advantage, rho_max)

    memory, agent = solutions.ReplayMemory(4), colour.ActorCritic()
    colour.train_agent(colour.ColourEnv(), agent, 1, 3, num_trials=20, replay=memory, replay_mode="write", rng=0,
                       progress=False, actor_loss_fn=actor, after_step=lambda step, a: steps.append((step, a is agent)))
    assert calls == [20] * 3 and steps == [(1, True), (2, True), (3, True)]
    colour.train_agent(colour.ColourEnv(), agent, 2, 2, num_trials=20, replay=memory, replay_mode="read", rng=0,
                       progress=False, actor_loss_fn=actor)
    assert calls == [20] * 7  # 2 new steps, each followed by a replayed one
