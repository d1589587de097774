import copy

import numpy as np
import pytest
import torch
from gymnasium.utils.env_checker import check_env

from course_utils import colour
from course_utils.checks import reference_returns


def test_env_follows_gymnasium_api():
    env = colour.ColourEnv()
    check_env(env, skip_render_check=True)
    obs, info = env.reset(seed=3)
    assert obs.shape == (6,) and obs.dtype == np.float32
    assert set(info["colours"]) <= set(colour.MODE_COLOURS[1])
    obs, reward, terminated, truncated, info = env.step(0)
    assert (terminated, truncated) == (False, False)
    assert reward == colour.COLOUR_REWARDS[info["chosen"]]
    assert info["max_reward"] == max(colour.COLOUR_REWARDS[c] for c in info["colours"])


def test_env_is_seedable():
    def pairs(seed):
        env = colour.ColourEnv()
        env.reset(seed=seed)
        return [env.step(0)[4]["colours"] for _ in range(30)]

    assert pairs(1) == pairs(1)
    assert pairs(1) != pairs(2)


@pytest.mark.parametrize("mode", [1, 2])
def test_modes_draw_their_own_colours(mode):
    env = colour.ColourEnv(mode=mode)
    env.reset(seed=0)
    seen = {c for _ in range(200) for c in env.step(1)[4]["colours"]}
    assert seen == set(colour.MODE_COLOURS[mode])


@pytest.mark.parametrize("mode", [0, 3, "1", 1.5, True, None])
def test_bad_mode_says_what_is_allowed(mode):
    with pytest.raises(ValueError, match=r"mode must be 1 .* or 2"):
        colour.ColourEnv(mode=mode)
    env = colour.ColourEnv()
    with pytest.raises(ValueError, match="mode must be"):
        env.reset(options={"mode": mode})


@pytest.mark.parametrize("action", [-1, 2, 0.5, "left", True, torch.tensor([0, 1])])
def test_bad_action_says_what_is_allowed(action):
    env = colour.ColourEnv()
    env.reset(seed=0)
    with pytest.raises(ValueError, match="must be"):
        env.step(action)


def test_step_before_reset_is_explained():
    with pytest.raises(RuntimeError, match="reset"):
        colour.ColourEnv().step(0)


def test_returns_match_the_recursive_definition():
    rewards = torch.rand(100)
    assert torch.allclose(
        colour.returns_to_go(rewards, 0.91),
        torch.tensor(reference_returns(rewards.tolist(), 0.91), dtype=torch.float32),
        atol=1e-5,
    )


def test_replay_memory_keeps_no_graphs_and_stays_small():
    memory = colour.ReplayMemory(250)
    colour.train_agent(
        colour.ColourEnv(), colour.ActorCritic(), 1, 300, replay=memory, replay_mode="write", rng=0, progress=False
    )
    assert len(memory) == 250
    for experience in memory.slots:
        for tensor in experience:
            assert tensor.grad_fn is None and not tensor.requires_grad
    assert memory.nbytes() <= 20e6
    assert memory.nbytes() == 250 * 100 * (9 * 4 + 8 + 4 + 4)


def test_fresh_experience_gives_plain_a2c_gradient():
    """The importance ratio is exactly 1 on fresh experience: the loss is the reference A2C loss."""
    torch.manual_seed(0)
    agent = colour.ActorCritic()
    env = colour.ColourEnv()
    env.reset(seed=0)
    experience = colour.run_trials(env, agent, 100, np.random.default_rng(0)).experience()
    values, logits = agent(experience.inputs)
    log_probs = torch.log_softmax(logits, -1)
    q = torch.tensor(reference_returns(experience.rewards.tolist(), agent.gamma), dtype=torch.float32)
    adv = q - values
    chosen = log_probs.gather(-1, experience.actions[:, None]).squeeze(-1)
    entropy = -(log_probs.exp() * log_probs).sum(-1).mean()
    expected = -(chosen * adv.detach()).mean() + 0.4 * adv.pow(2).mean() - 0.001 * entropy
    assert torch.allclose(colour.a2c_loss(agent, experience), expected, atol=1e-5)


def test_training_is_deterministic_for_a_seed():
    def weights(seed):
        torch.manual_seed(seed)
        agent = colour.ActorCritic()
        colour.train_agent(colour.ColourEnv(), agent, 1, 20, rng=seed, progress=False)
        return torch.cat([p.flatten() for p in agent.parameters()])

    assert torch.equal(weights(0), weights(0))
    assert not torch.equal(weights(0), weights(1))


def test_replay_mode_needs_a_memory():
    with pytest.raises(ValueError, match="needs a replay memory"):
        colour.train_agent(colour.ColourEnv(), colour.ActorCritic(), 1, 1, replay_mode="read", progress=False)
    with pytest.raises(ValueError, match="replay_mode must be"):
        colour.train_agent(
            colour.ColourEnv(), colour.ActorCritic(), 1, 1, replay=colour.ReplayMemory(), replay_mode="wrote", progress=False
        )


def test_play_pairs_uses_the_given_pairs():
    pairs = [("red", "blue"), ("yellow", "green"), ("green", "red")]
    trials = colour.play_pairs(colour.ActorCritic(), pairs, rng=0)
    assert trials.shown == pairs
    with pytest.raises(ValueError, match="Unknown colours"):
        colour.play_pairs(colour.ActorCritic(), [("red", "purple")])


# -- the notebook's claims, on the pretrained (full-size) agents ---------------------------


@pytest.fixture(scope="module")
def evaluations():
    env = colour.ColourEnv()
    agents = {name: colour.load_agent(name) for name in ("mode1", "mode2", "replay")}
    return {
        (name, mode): colour.evaluate_agent(env, agent, mode=mode, num_trials=5000, rng=1)
        for name, agent in agents.items()
        for mode in (1, 2)
    }


def test_claim_mode1_agent_picks_better_colour_90_percent(evaluations):
    assert colour.accuracy(evaluations["mode1", 1]) >= 0.90


def test_claim_mode2_training_forgets_red_vs_yellow(evaluations):
    before, after = colour.pair_accuracy(evaluations["mode1", 1]), colour.pair_accuracy(evaluations["mode2", 1])
    drops = {pair: before[pair] - after[pair] for pair in before}
    assert max(drops, key=drops.get) == "red/yellow"
    assert drops["red/yellow"] >= 0.10
    assert colour.accuracy(evaluations["mode2", 1]) <= colour.accuracy(evaluations["mode1", 1]) - 0.03
    assert colour.accuracy(evaluations["mode2", 2]) >= 0.95  # while it did learn mode 2


def test_claim_replay_keeps_mode1_above_85_percent(evaluations):
    assert colour.accuracy(evaluations["replay", 1]) >= 0.85
    assert colour.pair_accuracy(evaluations["replay", 1])["red/yellow"] >= 0.85
    assert colour.accuracy(evaluations["replay", 2]) >= 0.90


def test_claims_hold_at_fast_mode_size():
    """What the notebook trains live in fast mode (400 steps per mode) still shows replay working."""
    from course_utils.runtime import set_seed

    set_seed(1)
    env, memory, agent = colour.ColourEnv(), colour.ReplayMemory(250), colour.ActorCritic()
    colour.train_agent(env, agent, 1, 400, replay=memory, replay_mode="write", rng=1, progress=False)
    plain = copy.deepcopy(agent)
    colour.train_agent(env, plain, 2, 400, rng=11, progress=False)
    colour.train_agent(env, agent, 2, 400, replay=memory, replay_mode="read", rng=11, progress=False)
    with_replay = colour.evaluate_agent(env, agent, 1, 3000, rng=1)
    without = colour.evaluate_agent(env, plain, 1, 3000, rng=1)
    assert colour.accuracy(with_replay) >= 0.85
    assert colour.pair_accuracy(with_replay)["red/yellow"] > colour.pair_accuracy(without)["red/yellow"] + 0.1


@pytest.mark.slow
def test_course_train_colour_reproduces_the_registry(tmp_path):
    from course_utils import checkpoints

    agents = colour.train_colour_agents(seed=1, progress=False)
    registry = checkpoints.read_registry()
    for name, agent in agents.items():
        entry = checkpoints.save_checkpoint(
            agent.state_dict(), f"colour_{name}", "course train colour", registry=tmp_path / "registry.json", bundled=tmp_path
        )
        assert entry["sha256"] == registry[f"colour_{name}"]["sha256"], name
