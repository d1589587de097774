"""Tutorial 3 (policy gradients on LunarLander): environment, reference implementations,
checks catching typical mistakes, vectorised collection, the pretrained agent, the benchmark."""

import json

import gymnasium as gym
import numpy as np
import pytest
import torch
from torch import nn

from course_utils import checks_lunar as C
from course_utils import lunar as L
from course_utils import lunar_rollouts as R

# ------------------------------------------------------------------------------------------
# Environment


def test_env_registered_with_course_limits():
    spec = gym.spec(L.ENV_ID)
    assert L.ENV_ID == "CourseLunarLander-v0"
    assert spec.max_episode_steps == 300 and spec.reward_threshold == 200
    env = L.make_env()
    obs, _ = env.reset(seed=0)
    assert obs.shape == (8,) and env.action_space.n == 4 == len(L.ACTIONS) and len(L.OBSERVATIONS) == 8
    steps = 0
    while True:  # hovering with the main engine lasts until the time limit or a crash
        _, _, terminated, truncated, _ = env.step(2 if steps % 2 else 0)
        steps += 1
        if terminated or truncated:
            break
    assert steps <= 300
    env.close()


def test_time_feature_appends_the_elapsed_fraction_of_the_limit():
    env = L.make_env(time_feature=True)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (9,) and obs[8] == 0
    for _ in range(3):
        obs, *_ = env.step(0)
    assert obs[8] == pytest.approx(3 / 300)
    net = L.ActorCriticNet(time_feature=True)
    assert L.make_env_for(net).observation_space.shape == (9,)
    assert L.make_env_for(L.ActorCriticNet()).observation_space.shape == (8,)


def test_make_vector_env_rejects_bad_sizes():
    with pytest.raises(ValueError, match="positive integer"):
        L.make_vector_env(0)


# ------------------------------------------------------------------------------------------
# Reference implementations against hand-computed values


def _episode(rewards):
    return L.Episode(sum(rewards), [L.Experience(torch.zeros(8), 0, r, i == len(rewards) - 1) for i, r in enumerate(rewards)])


def test_calc_qvals_by_hand():
    assert L.Episode(3.0, [L.Experience(None, None, 1.0, False)] * 3).calc_qvals(0.5) == [1.75, 1.5, 1.0]
    assert np.allclose(_episode([0.0, 0.0, 10.0]).calc_qvals(0.9), [8.1, 9.0, 10.0])


def test_losses_by_hand():
    # Two steps, actions 0 and 1, uniform scores: log pi = -log 4 for both.
    batch = L.TrainBatch(torch.zeros(2, 8), torch.tensor([0, 1]), torch.tensor([2.0, 4.0]), torch.tensor([6.0]))
    scores = torch.zeros(2, 4)
    log4 = np.log(4)
    vpg, info = L.VanillaPolicyGradientLoss()(batch, scores)
    assert vpg.item() == pytest.approx(3.0 * log4, rel=1e-6) and info["loss_p"] == pytest.approx(vpg.item())
    bpg, info = L.BaselinePolicyGradientLoss()(batch, scores)  # baseline 3: advantages -1, +1
    assert bpg.item() == pytest.approx(0.0, abs=1e-6) and info["baseline"] == pytest.approx(3.0)
    entropy = L.ActionEntropyLoss(4, beta=0.5)
    assert entropy.max_entropy == pytest.approx(1.3862944, rel=1e-6)
    assert entropy(batch, scores)[0].item() == pytest.approx(-0.5, rel=1e-6)
    values = torch.tensor([[1.0], [5.0]])  # advantages 1 and -1; value errors -1 and +1
    aac, info = L.AACPolicyGradientLoss(delta=2.0)(batch, (scores, values))
    assert info["loss_p"] == pytest.approx(0.0, abs=1e-6) and info["loss_v"] == pytest.approx(1.0)
    assert aac.item() == pytest.approx(2.0)


def test_train_batch_from_episodes_concatenates_in_order():
    batch = L.TrainBatch.from_episodes([_episode([1.0, 1.0]), _episode([3.0])], gamma=0.5)
    assert batch.q_vals.tolist() == [1.5, 1.0, 3.0]
    assert batch.total_rewards.tolist() == [2.0, 3.0] and batch.num_episodes == 2 and len(batch) == 3
    assert batch.states.shape == (3, 8) and batch.actions.dtype == torch.long


def test_expected_file_is_what_make_expected_produces():
    stored = L.load_expected()
    assert json.loads(json.dumps(L.make_expected())) == stored
    assert stored["losses"]["entropy_beta1"] > -1.0  # random scores are not uniform


def test_policy_trainer_reaches_the_sanity_target_in_few_batches():
    """The notebook's claim: REINFORCE with a baseline passes -150 (mean of 10 episodes) within a few batches."""
    torch.manual_seed(0)
    net = L.PolicyNet(8, 4, (128, 128))
    dataset = L.VectorBatchDataset(net, 16, 0.99, seed=0)
    trainer = L.PolicyTrainer(
        net, torch.optim.Adam(net.parameters(), lr=2e-3), [L.BaselinePolicyGradientLoss(), L.ActionEntropyLoss(4, 0.5)], dataset
    )
    data = trainer.train(target_reward=-150, running_mean_len=10, max_episodes=16 * 12, progress=False)
    assert data["mean_reward"][-1] >= -150
    assert data["episode_num"][-1] <= 16 * 12


# ------------------------------------------------------------------------------------------
# Checks accept the reference and catch typical mistakes


REFERENCE = {
    C.check_policy_net: L.PolicyNet,
    C.check_agent_distribution: L.PolicyAgent,
    C.check_agent_step: L.PolicyAgent,
    C.check_monitor_episode: L.monitor_episode,
    C.check_calc_qvals: L.Episode,
    C.check_from_episodes: L.TrainBatch,
    C.check_batch_generator: L.TrainBatchDataset,
    C.check_vpg_loss: L.VanillaPolicyGradientLoss,
    C.check_bpg_loss: L.BaselinePolicyGradientLoss,
    C.check_entropy_loss: L.ActionEntropyLoss,
    C.check_policy_trainer: L.PolicyTrainer,
    C.check_aac_net: L.AACPolicyNet,
    C.check_aac_agent: L.AACPolicyAgent,
    C.check_aac_loss: L.AACPolicyGradientLoss,
}


@pytest.mark.parametrize("check", list(REFERENCE), ids=lambda c: c.__name__)
def test_checks_accept_the_reference(check):
    assert check(REFERENCE[check], strict=True)


def _fails(check, candidate, *words):
    with pytest.raises(AssertionError) as info:
        check(candidate, strict=True)
    message = str(info.value)
    for word in words:
        assert word in message, message
    return message


class ReversedQvals(L.Episode):
    def calc_qvals(self, gamma):
        return super().calc_qvals(gamma)[::-1]


class UndiscountedQvals(L.Episode):
    def calc_qvals(self, gamma):
        return list(np.cumsum([e.reward for e in self.experiences][::-1])[::-1])


class ForwardQvals(L.Episode):
    def calc_qvals(self, gamma):
        out, running = [], 0.0
        for e in self.experiences:
            running = running * gamma + e.reward
            out.append(running)
        return out


def test_check_calc_qvals_catches_mistakes():
    _fails(C.check_calc_qvals, ReversedQvals, "reverse order")
    _fails(C.check_calc_qvals, UndiscountedQvals, "forgot the discount")
    _fails(C.check_calc_qvals, ForwardQvals, "END of the episode")
    _fails(C.check_calc_qvals, L.Episode.__base__, "Episode")  # object() takes no arguments


class NoBaseline(L.BaselinePolicyGradientLoss):
    def forward(self, batch, scores):
        loss, _ = L.VanillaPolicyGradientLoss()(batch, scores)
        return loss, dict(loss_p=loss.item(), baseline=batch.q_vals.mean().item())


class FlippedVanilla(L.VanillaPolicyGradientLoss):
    def forward(self, batch, scores):
        loss, info = super().forward(batch, scores)
        return -loss, info


class PositiveEntropy(L.ActionEntropyLoss):
    def forward(self, batch, scores):
        loss, info = super().forward(batch, scores)
        return -loss, info


class UnnormalisedEntropy(L.ActionEntropyLoss):
    def forward(self, batch, scores):
        loss, info = super().forward(batch, scores)
        return loss * self.max_entropy, info


class DetachedVanilla(L.VanillaPolicyGradientLoss):
    def forward(self, batch, scores):
        return super().forward(batch, scores.detach())


def test_loss_checks_catch_mistakes():
    _fails(C.check_bpg_loss, NoBaseline, "baseline was not subtracted")
    _fails(C.check_vpg_loss, FlippedVanilla, "sign is flipped")
    _fails(C.check_vpg_loss, DetachedVanilla, "no gradient")
    _fails(C.check_entropy_loss, PositiveEntropy, "sign is flipped")
    _fails(C.check_entropy_loss, UnnormalisedEntropy, "max_entropy")


class AACWithoutAdvantage(L.AACPolicyGradientLoss):
    def forward(self, batch, output):
        scores, values = output
        loss_p, _ = L.VanillaPolicyGradientLoss()(batch, scores)
        loss_v = ((values.reshape(-1) - batch.q_vals) ** 2).mean()
        return loss_p + self.delta * loss_v, {}


class AACNotDetached(L.AACPolicyGradientLoss):
    def forward(self, batch, output):
        scores, values = output
        values = values.reshape(-1)
        logp = torch.log_softmax(scores, -1).gather(1, batch.actions.view(-1, 1)).squeeze(1)
        loss_p = -((batch.q_vals - values) * logp).mean()
        return loss_p + self.delta * ((values - batch.q_vals) ** 2).mean(), {}


def test_aac_loss_check_catches_mistakes():
    _fails(C.check_aac_loss, AACWithoutAdvantage, "advantage q - v")
    _fails(C.check_aac_loss, AACNotDetached, "detach")


class ArgmaxAgent(L.PolicyAgent):
    def step(self):
        action = int(self.current_action_distribution().argmax())
        state, reward, terminated, truncated, _ = self.env.step(action)
        exp = L.Experience(self.curr_state, action, reward, terminated or truncated)
        self.curr_state = torch.as_tensor(state) if not (terminated or truncated) else self.reset() or self.curr_state
        return exp


class NextStateAgent(L.PolicyAgent):
    def step(self):
        exp = super().step()
        return exp._replace(state=self.curr_state)


class TerminatedOnlyAgent(L.PolicyAgent):
    def step(self):
        return super().step()


class SoftmaxNet(nn.Module):
    def __init__(self, in_features, out_actions, hidden_layers=(16,)):
        super().__init__()
        self.inner = L.PolicyNet(in_features, out_actions, hidden_layers)

    def forward(self, x):
        return torch.softmax(self.inner(x), -1)

    @classmethod
    def build_for_env(cls, env, **kw):
        return cls(env.observation_space.shape[0], env.action_space.n, **kw)


class UnnormalisedAgent(L.PolicyAgent):
    def current_action_distribution(self):
        return self.p_net(self.curr_state).detach()


def test_agent_and_net_checks_catch_mistakes():
    _fails(C.check_agent_step, ArgmaxAgent, "Sample the action")
    _fails(C.check_agent_step, NextStateAgent, "not the state the action was taken in")
    _fails(C.check_agent_distribution, UnnormalisedAgent, "sum to 1")
    _fails(C.check_policy_net, SoftmaxNet, "probabilities")


class NoZeroGrad(L.TrainerLoop):
    def train_batch(self, batch):
        output = self.model(batch.states)
        total, losses = 0.0, {}
        for loss_fn in self.loss_fns:
            loss, info = loss_fn(batch, self.loss_input(loss_fn, output))
            total, losses = total + loss, {**losses, **info}
        total.backward()
        self.optimizer.step()
        return total.item(), losses


class NoStep(L.TrainerLoop):
    def train_batch(self, batch):
        output = self.model(batch.states)
        loss, info = self.loss_fns[0](batch, output)
        return loss.item(), info


def test_trainer_check_catches_mistakes():
    _fails(C.check_policy_trainer, NoZeroGrad, "zero_grad")
    _fails(C.check_policy_trainer, NoStep, "sum of all loss")


def test_monitor_episode_check_catches_a_missing_render():
    def no_frames(p_net, seed=0, agent_type=L.PolicyAgent):
        frames, n, total = L.monitor_episode(p_net, seed, agent_type)
        return frames[:1], n, total

    _fails(C.check_monitor_episode, no_frames, "one frame per step")


def test_unimplemented_exercise_gets_a_friendly_message():
    class Todo(L.Episode):
        def calc_qvals(self, gamma):
            raise NotImplementedError()

    _fails(C.check_calc_qvals, Todo, "not implemented yet")


# ------------------------------------------------------------------------------------------
# Vectorised collection


def test_collect_episodes_matches_single_env_play():
    """One batched forward for many environments gives exactly the single-env transitions."""
    torch.manual_seed(3)
    net = nn.Linear(8, 4)
    seeds = [5, 6, 7]
    episodes = L.collect_episodes(net, seeds, deterministic=True)
    for seed, episode in zip(seeds, episodes, strict=True):
        env = L.make_env()
        state, _ = env.reset(seed=seed)
        for exp in episode.experiences:
            assert np.array_equal(exp.state.numpy(), state)
            action = int(net(torch.as_tensor(state)).argmax())
            assert exp.action == action
            state, reward, terminated, truncated, _ = env.step(action)
            assert exp.reward == reward and exp.is_done == (terminated or truncated)
        assert episode.experiences[-1].is_done
        assert episode.total_reward == pytest.approx(sum(e.reward for e in episode.experiences))


@pytest.mark.parametrize("time_feature", [False, True])
def test_vector_env_matches_gymnasium_sync_vector_env_through_resets_and_time_limits(time_feature):
    """The lean vector env gives exactly what gymnasium's SyncVectorEnv over ``make_env()``
    gives (same-step autoreset): observations, rewards, flags and final observations, across
    crashes, landings and 300-step truncations."""
    n = 4
    lean = L.make_vector_env(n, time_feature)
    sync = gym.vector.SyncVectorEnv(
        [lambda: L.make_env(time_feature=time_feature) for _ in range(n)], autoreset_mode=gym.vector.AutoresetMode.SAME_STEP
    )
    assert lean.single_observation_space.shape == sync.single_observation_space.shape == (8 + time_feature,)
    obs_a, _ = lean.reset(seed=[20, 10, 12, 13])
    obs_b, _ = sync.reset(seed=[20, 10, 12, 13])
    assert np.array_equal(obs_a, obs_b)
    rng = np.random.default_rng(0)
    seen = {"terminated": 0, "truncated": 0}
    for _ in range(700):
        actions = rng.integers(0, 4, n)
        actions[:2] = 2  # main engine only: from seeds 20 and 10 the lander climbs until the time limit
        a = lean.step(actions)
        b = sync.step(actions)
        for x, y in zip(a[:4], b[:4], strict=True):
            assert np.array_equal(x, y)
        done = a[2] | a[3]
        assert np.array_equal(a[4].get("_final_obs", np.zeros(n, bool)), done)
        for i in np.flatnonzero(done):
            assert np.array_equal(a[4]["final_obs"][i], b[4]["final_obs"][i])
        seen["terminated"] += int(a[2].sum())
        seen["truncated"] += int(a[3].sum())
    assert seen["terminated"] > 5 and seen["truncated"] >= 2  # seed 10 is both at step 300
    lean.close()
    sync.close()


def test_vector_env_rejects_a_wrong_number_of_seeds():
    envs = L.make_vector_env(2)
    with pytest.raises(ValueError, match="one per environment"):
        envs.reset(seed=[1, 2, 3])


def test_aac_training_is_deterministic_and_bootstraps_only_on_truncation():
    config = dict(total_steps=2 * 4 * 32, num_envs=4, rollout_steps=32, minibatches=2, epochs=1)
    net1, curve1 = L.train_aac(config, progress=False, log_every=1, workers=1)
    net2, _ = L.train_aac(config, progress=False, log_every=1, workers=2)  # worker processes: same result
    for a, b in zip(net1.state_dict().values(), net2.state_dict().values(), strict=True):
        assert torch.equal(a, b)
    assert curve1["steps"] == [128, 256]
    # GAE: with lambda=1 and gamma=1 the advantage is the reward-to-go minus V, cut at episode ends.
    rewards = torch.tensor([[1.0], [1.0], [1.0]])
    values = torch.zeros(3, 1)
    next_values = torch.tensor([[0.0], [0.0], [5.0]])  # step 1 terminated; step 2 truncated with V=5
    ends = torch.tensor([[0.0], [1.0], [1.0]])
    adv = L.gae_advantages(rewards, values, next_values, ends, 1.0, 1.0)
    assert adv.view(-1).tolist() == [2.0, 1.0, 6.0]


# ------------------------------------------------------------------------------------------
# Rollouts on several cores (lunar_rollouts)


class MainEngineNet(nn.Module):
    """Always fires the main engine (logits favour action 2 by 50) and values every state at 7."""

    def __init__(self, in_features: int = 8):
        super().__init__()
        self.bias = nn.Parameter(torch.tensor([0.0, 0.0, 50.0, 0.0]))

    def forward(self, x):
        return self.bias.expand(x.shape[0], 4), torch.full((x.shape[0],), 7.0)


def test_rollouts_are_identical_with_one_or_two_worker_processes():
    spec = (L.ActorCriticNet, dict(hidden=(16, 16)))
    torch.manual_seed(0)
    net = L.ActorCriticNet(hidden=(16, 16))
    rollouts = []
    for workers in (1, 2):
        with R.RolloutCollector([5, 6, 7, 8, 9], spec, generator_seed=3, shards=2, workers=workers) as collector:
            rollouts.append([collector.collect(net, 150) for _ in range(2)])
    for a, b in zip(*rollouts, strict=True):
        assert a["states"].shape == (150, 5, 8) and a["actions"].dtype == torch.long
        for key in (*R.KEYS, "last_value"):
            assert torch.equal(a[key], b[key]), key
        assert a["finished"] == b["finished"]
    assert len(rollouts[0][0]["finished"]) + len(rollouts[0][1]["finished"]) >= 5  # random play: every lander came down


def test_rollout_bootstraps_the_value_at_time_limits_only():
    """From seed 20 the main engine alone climbs until step 300 (truncated: V(final) = 7 is
    kept); from seed 12 it leaves the screen at step 79 (terminated: no value after it)."""
    with R.RolloutCollector([20, 12], (MainEngineNet, {}), shards=1, workers=1) as collector:
        roll = collector.collect(MainEngineNet(), 300)
    assert (roll["actions"] == 2).all()
    assert roll["ends"][:, 0].nonzero().view(-1).tolist() == [299] and roll["terms"][299, 0] == 0
    assert roll["final_values"][299, 0] == 7 and roll["final_values"][:299, 0].abs().sum() == 0
    assert roll["terms"][78, 1] == 1 and roll["final_values"][:, 1].abs().sum() == 0
    assert (roll["values"] == 7).all() and (roll["last_value"] == 7).all()
    assert roll["finished"][0][:2] == (78, 1) and roll["finished"][0][3] == 79
    assert (299, 0) in [f[:2] for f in roll["finished"]]


def test_rollout_collector_rejects_bad_sizes_and_reports_a_failing_worker():
    assert R.split(5, 2) == [range(0, 2), range(2, 5)]
    with pytest.raises(ValueError, match="shards must be an integer from 1 to num_envs"):
        R.split(2, 3)
    with pytest.raises(ValueError, match="workers must be a positive integer"):
        R.RolloutCollector([1, 2], (MainEngineNet, {}), workers=0)
    with pytest.raises(ValueError, match="workers=1 .in this process. or workers=2"):
        R.RolloutCollector([1, 2, 3], (MainEngineNet, {}), shards=2, workers=3)
    with pytest.raises(RuntimeError, match="A rollout worker failed: .*unexpected keyword"):
        R.RolloutCollector([1, 2], (MainEngineNet, {"no_such_argument": 1}), shards=2, workers=2)


# ------------------------------------------------------------------------------------------
# The pretrained agent and the benchmark


def test_pretrained_agent_lands_on_fixed_seeds():
    """Fast version of the claim: 10 fixed evaluation seeds, greedy actions. The episode the
    notebook animates ("This landing", the first seed) ends at rest on the ground (the +100 of
    a landing, not the -100 of a crash) before the time limit."""
    net = L.load_pretrained()
    returns = L.evaluate(net, L.EVAL_SEEDS[:10], deterministic=True)
    assert returns.mean() >= L.FAST_EVAL_THRESHOLD
    env = L.make_env_for(net)
    obs, _ = env.reset(seed=L.EVAL_SEEDS[0])
    policy, total = L.greedy_policy(net), 0.0
    while True:
        obs, reward, terminated, truncated, _ = env.step(policy(obs))
        total += reward
        if terminated or truncated:
            break
    assert terminated and not truncated and reward == 100 and total >= 200


@pytest.mark.slow
def test_pretrained_agent_solves_lunar_lander_over_100_episodes():
    net = L.load_pretrained()
    returns = L.evaluate(net, L.EVAL_SEEDS, deterministic=True)
    assert len(returns) == 100 and returns.mean() >= 200
    curve = json.loads(L.TRAINING_CURVE.read_text())
    assert curve["evaluation"]["deterministic_mean"] == pytest.approx(returns.mean(), abs=1e-6)


def test_training_curve_within_budget():
    curve = json.loads(L.TRAINING_CURVE.read_text())
    assert curve["wall_s"][-1] <= 20 * 60
    assert curve["evaluation"]["deterministic_mean"] >= 200
    assert len(curve["steps"]) == len(curve["mean_reward"]) == len(curve["wall_s"])


def test_bench_lunar_returns_positive_figures():
    result = L.bench_lunar(num_envs=4, steps=200, single_steps=100, rounds=2)
    for key in ("vector_steps_per_s", "vector_one_process_steps_per_s", "single_steps_per_s", "speedup", "speedup_one_process"):
        assert result[key] > 0, key
    assert result["num_envs"] == 4 and result["vector_steps"] == 2 * 25 * 4 and result["single_steps"] == 100
    assert set(result["cores_used"]) == {"vector", "vector_one_process", "single"}
    assert all(0 < used < 4 for used in result["cores_used"].values())


def test_notebook_description_of_the_final_agent_matches_its_training():
    """The notebook describes the course's agent: 16 envs, rollouts of 1024 steps, gamma 0.999, GAE 0.98,
    4 passes of minibatches of 64, ratio clipped to [0.8, 1.2], 64-64 tanh networks, bootstrapping at truncation."""
    cfg = L.DEFAULT_AAC
    assert (cfg["num_envs"], cfg["rollout_steps"], cfg["gamma"], cfg["gae_lambda"]) == (16, 1024, 0.999, 0.98)
    assert cfg["epochs"] == 4 and cfg["num_envs"] * cfg["rollout_steps"] // cfg["minibatches"] == 64 and cfg["clip"] == 0.2
    assert tuple(cfg["hidden"]) == (64, 64) and cfg["bootstrap_truncated"] and not cfg["time_feature"]
    curve = json.loads(L.TRAINING_CURVE.read_text())
    assert curve["config"] == {**cfg, "hidden": list(cfg["hidden"])}
    net = L.load_pretrained()
    assert isinstance(net.policy[1], nn.Tanh) and net.hidden == (64, 64)


@pytest.mark.slow
def test_course_train_lunar_reproduces_the_registry(tmp_path):
    """Training is deterministic: retraining gives the registered checkpoint bit for bit (~5 min of CPU)."""
    from course_utils import checkpoints

    net, curve = L.train_aac(progress=False)
    entry = checkpoints.save_checkpoint(net.state_dict(), "lunar_aac", "course train lunar", tmp_path / "r.json", tmp_path)
    assert entry["sha256"] == checkpoints.read_registry()["lunar_aac"]["sha256"]
    stored = json.loads(L.TRAINING_CURVE.read_text())
    assert curve["episodes"] == stored["episodes"] and curve["mean_reward"] == stored["mean_reward"]


def test_experiments_are_cached_per_mode_and_code(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_CACHE", str(tmp_path))
    monkeypatch.setenv("COURSE_FAST", "1")
    hp = dict(batch_size=4, gamma=0.99, learn_rate=1e-3, hidden_layers=(8,))
    args = ("vpg", L.PolicyNet, [L.VanillaPolicyGradientLoss()], L.PolicyTrainer, hp, 4)
    first = L.run_experiment(*args, progress=False)
    files = sorted(p.name for p in (tmp_path / "lunar").glob("*.json"))
    assert len(files) == 1 and files[0].startswith("vpg-fast-4ep-seed0-")
    again = L.run_experiment(*args, progress=False)  # reloaded, not retrained
    assert again["mean_reward"] == first["mean_reward"]
    assert all(torch.equal(again["model_state"][k], first["model_state"][k]) for k in first["model_state"])
    monkeypatch.setenv("COURSE_FAST", "0")
    L.run_experiment(*args, progress=False)  # full mode never reuses fast results
    L.run_experiment("vpg", L.PolicyNet, [FlippedVanilla()], L.PolicyTrainer, hp, 4, progress=False)  # other code
    names = sorted(p.name for p in (tmp_path / "lunar").glob("*.json"))
    assert len(names) == 3 and sum(n.startswith("vpg-full-") for n in names) == 2


def test_code_fingerprint_follows_the_code():
    assert L.code_fingerprint(L.Episode) == L.code_fingerprint(L.Episode)
    assert L.code_fingerprint(L.Episode) != L.code_fingerprint(ReversedQvals)
    assert L.code_fingerprint(L.ActionEntropyLoss(4, 0.5)) != L.code_fingerprint(L.ActionEntropyLoss(4, 0.7))
    assert L.code_fingerprint({"gamma": 0.99}) != L.code_fingerprint({"gamma": 0.999})


@pytest.mark.parametrize("net_type", [L.PolicyNet, L.AACPolicyNet])
def test_reference_nets_take_the_notebooks_whole_hyperparameter_dict(net_type):
    """The notebook swaps the course's class in for a student's unfinished one and calls
    ``build_for_env(env, **pg_hp)`` with batch size, gamma... in it: only hidden_layers counts."""
    env = gym.make(L.ENV_ID)
    hp = dict(batch_size=16, gamma=0.99, beta=0.5, learn_rate=2e-3, hidden_layers=(32, 16))
    net = net_type.build_for_env(env, **hp)
    linears = [m for m in net.modules() if isinstance(m, nn.Linear)]
    assert linears[0].out_features == 32 and linears[1].out_features == 16
