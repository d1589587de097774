"""Rollouts of many LunarLanders in worker processes: whole episodes (``course_utils.lunar.rollouts``) and
the course trainer's rollouts (``course_admin.lunar.rollouts``)."""

import numpy as np
import pytest
import torch
from torch import nn

from course_admin.lunar.aac import ActorCriticNet
from course_admin.lunar.rollouts import KEYS, AACRolloutCollector, AACShard
from course_utils.lunar.rollouts import RolloutCollector, split


class MainEngineNet(nn.Module):
    """Always fires the main engine (logits favour action 2 by 50) and values every state at 7."""

    def __init__(self, in_features: int = 8):
        super().__init__()
        self.bias = nn.Parameter(torch.tensor([0.0, 0.0, 50.0, 0.0]))

    def forward(self, x):
        return self.bias.expand(x.shape[0], 4), torch.full((x.shape[0],), 7.0)


def test_rollouts_are_identical_with_one_or_two_worker_processes():
    spec = (ActorCriticNet, dict(hidden=(16, 16)))
    torch.manual_seed(0)
    net = ActorCriticNet(hidden=(16, 16))
    rollouts = []
    for workers in (1, 2):
        with AACRolloutCollector([5, 6, 7, 8, 9], spec, generator_seed=3, shards=2, workers=workers) as collector:
            rollouts.append([collector.collect(net, 150) for _ in range(2)])
    for a, b in zip(*rollouts, strict=True):
        assert a["states"].shape == (150, 5, 8) and a["actions"].dtype == torch.long
        for key in (*KEYS, "last_value"):
            assert torch.equal(a[key], b[key]), key
        assert a["finished"] == b["finished"]
    assert len(rollouts[0][0]["finished"]) + len(rollouts[0][1]["finished"]) >= 5  # random play: every lander came down


def test_rollout_bootstraps_the_value_at_time_limits_only():
    """From seed 20 the main engine alone climbs until step 300 (truncated: V(final) = 7 is
    kept); from seed 12 it leaves the screen at step 79 (terminated: no value after it)."""
    with AACRolloutCollector([20, 12], (MainEngineNet, {}), shards=1, workers=1) as collector:
        roll = collector.collect(MainEngineNet(), 300)
    assert (roll["actions"] == 2).all()
    assert roll["ends"][:, 0].nonzero().view(-1).tolist() == [299] and roll["terms"][299, 0] == 0
    assert roll["final_values"][299, 0] == 7 and roll["final_values"][:299, 0].abs().sum() == 0
    assert roll["terms"][78, 1] == 1 and roll["final_values"][:, 1].abs().sum() == 0
    assert (roll["values"] == 7).all() and (roll["last_value"] == 7).all()
    assert roll["finished"][0][:2] == (78, 1) and roll["finished"][0][3] == 79
    assert (299, 0) in [f[:2] for f in roll["finished"]]


def test_rollout_collector_rejects_bad_sizes_and_reports_a_failing_worker():
    assert split(5, 2) == [range(0, 2), range(2, 5)]
    with pytest.raises(ValueError, match="shards must be an integer from 1 to num_envs"):
        split(2, 3)
    with pytest.raises(ValueError, match="workers must be a positive integer"):
        RolloutCollector([1, 2], (MainEngineNet, {}), workers=0)
    with pytest.raises(ValueError, match="workers=1 .in this process. or workers=2"):
        RolloutCollector([1, 2, 3], (MainEngineNet, {}), shards=2, workers=3)
    with pytest.raises(RuntimeError, match="A rollout worker failed: .*unexpected keyword"):
        RolloutCollector([1, 2], (MainEngineNet, {"no_such_argument": 1}), shards=2, workers=2)


def test_where_fork_is_missing_the_workers_are_spawned_and_give_the_same_rollouts(monkeypatch):
    """Windows and (by default) macOS have no ``fork``: the collector starts its workers with
    ``spawn``, which re-imports the package in each worker, and plays exactly the same games."""
    from course_utils.lunar import rollouts

    spec = (ActorCriticNet, dict(hidden=(8,)))
    torch.manual_seed(1)
    net = ActorCriticNet(hidden=(8,))
    with AACRolloutCollector([3, 4, 5], spec, generator_seed=2, shards=2, workers=1) as local:
        expected = local.collect(net, 60)
    monkeypatch.setattr(rollouts.mp, "get_all_start_methods", lambda: ["spawn"])
    with AACRolloutCollector([3, 4, 5], spec, generator_seed=2, shards=2, workers=2) as spawned:
        assert [type(p).__name__ for p in spawned.processes] == ["SpawnProcess", "SpawnProcess"]
        got = spawned.collect(net, 60)
    for key in (*KEYS, "last_value"):
        assert torch.equal(got[key], expected[key]), key


def test_numpy_collection_matches_the_torch_network_it_mirrors():
    """The NumPy rollout of an ActorCriticNet: log-probabilities and values are the torch
    network's at the recorded states, and actions follow its probabilities."""

    torch.manual_seed(3)
    net = ActorCriticNet(hidden=(16, 16))
    with torch.no_grad():
        net.policy[-1].bias.copy_(torch.tensor([1.5, 0.0, -1.0, 0.5]))  # a clearly uneven policy
    shard = AACShard(list(range(6)), (ActorCriticNet, dict(hidden=(16, 16))), generator_seed=0)
    assert shard.twin is not None
    roll = shard.collect(net.state_dict(), 400)
    states = torch.as_tensor(roll["states"]).reshape(-1, 8)
    actions = torch.as_tensor(roll["actions"]).reshape(-1)
    with torch.no_grad():
        logits, values = net(states)
    log_probs = torch.log_softmax(logits, -1)
    assert np.allclose(roll["logps"].reshape(-1), log_probs.gather(1, actions[:, None]).squeeze(1).numpy(), atol=1e-5)
    assert np.allclose(roll["values"].reshape(-1), values.numpy(), atol=1e-5)
    expected = log_probs.exp().mean(0).numpy()
    seen = np.bincount(actions.numpy(), minlength=4) / len(actions)
    assert np.abs(seen - expected).max() < 0.03  # 2400 draws: about 4 standard errors
    shard.close()


@pytest.mark.parametrize("workers", [1, 2])
def test_play_episodes_plays_each_seed_to_its_end_as_one_environment_would(workers):
    """Whole episodes, one per seed: the transitions of a single ``make_env()`` played with the
    same actions, each episode stopped at its end (a crash, or the 300-step limit) and in seed order."""
    from course_utils.lunar.env import MAX_EPISODE_STEPS, make_env

    torch.manual_seed(3)
    falling = nn.Linear(8, 4)  # crashes within 65 steps from seeds 6 and 7, hovers to the limit from 5
    seeds = [5, 6, 7]
    with RolloutCollector(range(3), falling, shards=2, workers=workers) as collector:
        played = collector.play_episodes(falling, seeds, deterministic=True)
    for seed, (states, actions, rewards) in zip(seeds, played, strict=True):
        env = make_env()
        state, _ = env.reset(seed=seed)
        for s, a, r in zip(states, actions, rewards, strict=True):
            assert np.array_equal(s, state)
            assert a == int(falling(torch.as_tensor(state)).argmax())
            state, reward, terminated, truncated, _ = env.step(int(a))
            assert r == reward
        assert (terminated or truncated) and truncated == (len(actions) == MAX_EPISODE_STEPS)
    assert sorted(len(actions) for _, actions, _ in played) == [64, 65, MAX_EPISODE_STEPS]


@pytest.mark.parametrize("numpy_forward", [True, False])
def test_sampled_episodes_draw_the_actions_one_forward_per_step_would(numpy_forward, monkeypatch):
    """``play_episodes`` samples each step's actions for the environments still playing with one
    forward and one draw from the shard's generator: the episodes are those of that plain loop
    (``torch.multinomial`` per step from a generator seeded as the shard's, gymnasium's own
    LunarLander), to the last bit, with the torch forward (a network ``numpy_scores`` does not
    know) and with the NumPy scores alike (their float rounding tips none of these draws)."""
    from gymnasium.envs.box2d.lunar_lander import LunarLander

    from course_utils.lunar import rollouts
    from course_utils.lunar.env import MAX_EPISODE_STEPS
    from course_utils.lunar.rollouts import Shard

    if not numpy_forward:
        monkeypatch.setattr(rollouts, "numpy_scores", lambda net: None)
    torch.manual_seed(4)
    net = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4))
    seeds = [11, 12, 13, 14]
    shard = Shard(range(4), net, generator_seed=9)
    played = shard.play_episodes(net.state_dict(), seeds)
    assert (shard.fast is not None) == numpy_forward
    shard.close()
    generator = torch.Generator().manual_seed(9)
    envs = [LunarLander() for _ in seeds]
    obs = np.stack([env.reset(seed=seed)[0] for env, seed in zip(envs, seeds, strict=True)])
    trails = [([], [], []) for _ in seeds]
    active, t = list(range(4)), 0
    while active:
        with torch.no_grad():
            probs = torch.log_softmax(net(torch.from_numpy(obs[active])), -1).exp()
        actions = torch.multinomial(probs, 1, generator=generator).view(-1).tolist()
        t += 1
        for i, action in zip(list(active), actions, strict=True):
            trails[i][0].append(obs[i].copy())
            trails[i][1].append(action)
            o, reward, terminated, _, _ = envs[i].step(action)
            trails[i][2].append(reward)
            obs[i] = o
            if terminated or t >= MAX_EPISODE_STEPS:
                active.remove(i)
    for (states, actions, rewards), (s, a, r) in zip(played, trails, strict=True):
        assert np.array_equal(states, np.stack(s)) and actions.tolist() == a and rewards.tolist() == r
    assert len({len(a) for _, a, _ in trails}) > 1  # the episodes ended at different steps


def test_a_shard_draws_what_torch_multinomial_draws_from_its_generator():
    """``Shard._draw`` takes the generator's exponential draws a block at a time: over several
    blocks, with 1 to 8 rows a step, each action is the one ``torch.multinomial`` would have drawn
    from a generator seeded as the shard's; and a NaN or infinite probability is refused as torch refuses it."""
    from course_utils.lunar.rollouts import DRAW_BLOCK, Shard

    shard = Shard(range(2), MainEngineNet(), generator_seed=5)
    generator = torch.Generator().manual_seed(5)
    rng = np.random.default_rng(0)
    drawn = 0
    while drawn < 3 * DRAW_BLOCK:
        n = int(rng.integers(1, 9))
        probs = torch.softmax(torch.from_numpy(rng.normal(0.0, 3.0, (n, 4)).astype(np.float32)), -1)
        expected = torch.multinomial(probs, 1, generator=generator).view(-1).tolist()
        assert shard._draw(probs.numpy()).tolist() == expected
        drawn += probs.numel()
    for bad in (np.nan, np.inf):
        probs = np.full((2, 4), 0.25, dtype=np.float32)
        probs[1, 2] = bad
        with pytest.raises(RuntimeError, match="probability tensor contains"):
            torch.multinomial(torch.from_numpy(probs), 1)
        with pytest.raises(RuntimeError, match="probability tensor contains"):
            shard._draw(probs)
    shard.close()


def test_the_weights_go_to_the_workers_as_arrays_where_numpy_can_hold_them():
    """``_arrays``: what a pipe carries to the workers; the same numbers, sharing the tensors' memory,
    and a dtype NumPy has no type for (bfloat16) stays a tensor. A shard loads either."""
    from course_utils.lunar.rollouts import Shard, _arrays

    net = nn.Sequential(nn.Linear(8, 4), nn.BatchNorm1d(4))
    state = {k: v.detach().clone() for k, v in net.state_dict().items()}
    state["extra"] = torch.ones(2, dtype=torch.bfloat16)
    arrays = _arrays(state)
    assert isinstance(arrays["0.weight"], np.ndarray) and np.shares_memory(arrays["0.weight"], state["0.weight"].numpy())
    assert isinstance(arrays["1.num_batches_tracked"], np.ndarray) and arrays["1.num_batches_tracked"].dtype == np.int64
    assert isinstance(arrays["extra"], torch.Tensor)
    torch.manual_seed(3)
    other = nn.Sequential(nn.Linear(8, 4), nn.BatchNorm1d(4)).eval()
    with torch.no_grad():
        other[0].weight.add_(1.0)
    sent = _arrays(other.state_dict())
    shard = Shard(range(2), nn.Sequential(nn.Linear(8, 4), nn.BatchNorm1d(4)).eval(), generator_seed=1)
    shard.play_episodes(sent, [4, 5], deterministic=True)
    assert all(torch.equal(shard.net.state_dict()[k], other.state_dict()[k]) for k in sent)
    shard.close()


def test_play_episodes_refuses_more_seeds_than_environments():
    with RolloutCollector(range(2), MainEngineNet(), shards=2, workers=1) as collector:
        with pytest.raises(ValueError, match="3 seeds for 2 environments"):
            collector.play_episodes(MainEngineNet(), [1, 2, 3])
        assert len(collector.play_episodes(MainEngineNet(), [4])) == 1  # fewer seeds than shards is fine


def test_a_failing_network_in_a_worker_is_reported_and_every_worker_stops():
    import multiprocessing as mp

    class Broken(nn.Module):
        def forward(self, x):
            raise ValueError("my forward is broken")

    collector = RolloutCollector(range(2), Broken(), shards=2, workers=2)
    with pytest.raises(RuntimeError, match="A rollout worker failed: .*my forward is broken"):
        collector.play_episodes(Broken(), [1, 2])
    assert not [p for p in mp.active_children() if p.name == "lunar-rollout-shard"]



def test_a_shards_episodes_are_the_same_stepped_and_drawn_in_c_or_in_python(monkeypatch):
    """``Shard.play_episodes`` steps its landers with ``lander_step.stepper``'s choice and draws
    their actions with ``lander_step.drawer``'s: in C (which leaves near ties to torch, from the
    same draws) and in Python they play the same episodes, to the last bit (a network that crashes
    some landers and lets others hover to the step limit), and leave the generator in one place."""
    from course_utils.lunar import lander_step
    from course_utils.lunar.rollouts import Shard

    if lander_step.load() is None:
        pytest.skip(lander_step.why_not)
    c_draw, calls = lander_step.load().draw, []

    def sometimes_undecided(scores, noise, offset):
        # every seventh step left to torch as a near tie would be, whatever C decided
        calls.append(c_draw(scores, noise, offset))
        return None if len(calls) % 7 == 0 else calls[-1]

    monkeypatch.setattr(lander_step, "drawer", lambda: sometimes_undecided)
    torch.manual_seed(1)
    net = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4))
    played, draws = [], []
    for in_c in (True, False):
        shard = Shard(range(6), net, generator_seed=4)
        if not in_c:
            shard.play_step, shard.c_draw = lander_step.python_play_step, None
        played.append([shard.play_episodes(net.state_dict(), range(10 * k, 10 * k + 6)) for k in range(3)])
        draws.append((shard._used, shard._noise.tobytes(), shard.generator.get_state()))
        shard.close()
    assert draws[0][0] == draws[1][0] and draws[0][1] == draws[1][1] and torch.equal(draws[0][2], draws[1][2])
    assert len(calls) > 300 and sum(actions is not None for actions in calls) > 0.9 * len(calls)
    for batch_c, batch_py in zip(*played, strict=True):
        for (s1, a1, r1), (s2, a2, r2) in zip(batch_c, batch_py, strict=True):
            assert s1.tobytes() == s2.tobytes() and np.array_equal(a1, a2) and r1.tobytes() == r2.tobytes()
    assert sum(len(r) for batch in played[0] for _, _, r in batch) > 1000
