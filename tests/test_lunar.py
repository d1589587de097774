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


def test_vector_env_matches_single_envs_for_the_same_seeds_and_actions():
    """Until each environment's first episode ends, the vector env reproduces single envs exactly;
    at the end the final observation is in info["final_obs"] (same-step autoreset)."""
    seeds = [10, 11, 12]
    envs = L.make_vector_env(3)
    obs, _ = envs.reset(seed=seeds)
    singles = [L.make_env() for _ in seeds]
    assert np.array_equal(obs, np.stack([env.reset(seed=s)[0] for env, s in zip(singles, seeds, strict=True)]))
    rng = np.random.default_rng(0)
    live = [True] * 3
    for _ in range(300):
        actions = rng.integers(0, 4, 3)
        obs, rewards, terminated, truncated, info = envs.step(actions)
        for i, env in enumerate(singles):
            if not live[i]:
                continue
            o, r, te, tr, _ = env.step(int(actions[i]))
            assert r == rewards[i] and te == terminated[i] and tr == truncated[i]
            if te or tr:
                assert np.array_equal(info["final_obs"][i], o)
                live[i] = False
            else:
                assert np.array_equal(obs[i], o)
        if not any(live):
            break
    assert not any(live)  # random play ends every episode within 300 steps


def test_aac_training_is_deterministic_and_bootstraps_only_on_truncation():
    config = dict(total_steps=2 * 4 * 32, num_envs=4, rollout_steps=32, minibatches=2, epochs=1)
    net1, curve1 = L.train_aac(config, progress=False, log_every=1)
    net2, _ = L.train_aac(config, progress=False, log_every=1)
    for a, b in zip(net1.state_dict().values(), net2.state_dict().values(), strict=True):
        assert torch.equal(a, b)
    assert curve1["steps"] == [128, 256]
    # GAE: with lambda=1 and gamma=1 the advantage is the reward-to-go minus V, cut at episode ends.
    rewards = torch.tensor([[1.0], [1.0], [1.0]])
    values = torch.zeros(3, 1)
    next_values = torch.tensor([[0.0], [0.0], [5.0]])  # step 1 terminated; step 2 truncated with V=5
    ends = torch.tensor([[0.0], [1.0], [1.0]])
    adv = L.gae_advantages(rewards, values, next_values, None, ends, 1.0, 1.0)
    assert adv.view(-1).tolist() == [2.0, 1.0, 6.0]


# ------------------------------------------------------------------------------------------
# The pretrained agent and the benchmark


def test_pretrained_agent_lands_on_fixed_seeds():
    """Fast version of the claim: 10 fixed evaluation seeds, greedy actions."""
    net = L.load_pretrained()
    returns = L.evaluate(net, L.EVAL_SEEDS[:10], deterministic=True)
    assert returns.mean() >= L.FAST_EVAL_THRESHOLD


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
    for key in ("vector_steps_per_s", "single_steps_per_s", "speedup", "vector_cpu_s", "single_cpu_s"):
        assert result[key] > 0, key
    assert result["num_envs"] == 4


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
