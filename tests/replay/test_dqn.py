import ast
import dataclasses
import json

import numpy as np
import pytest
import torch

from course_admin.replay import solutions, train, vector_per
from course_utils import animation
from course_utils.claims import claim
from course_utils.paths import PACKAGE
from course_utils.replay import dqn

LOSS = solutions.prioritized_td_loss  # the reference answer to Exercise 4: dqn holds no loss of its own


def test_epsilon_decays_linearly_then_stays():
    config = dqn.DQNConfig(epsilon_decay_frames=100, max_epsilon=1.0, min_epsilon=0.1)
    assert dqn.epsilon_at(0, config) == 1.0
    assert dqn.epsilon_at(50, config) == pytest.approx(0.55)
    assert dqn.epsilon_at(100, config) == pytest.approx(0.1)
    assert dqn.epsilon_at(5000, config) == pytest.approx(0.1)


def test_config_rejects_bad_values():
    with pytest.raises(ValueError, match="batch_size"):
        dqn.DQNConfig(batch_size=64, memory_size=32)
    with pytest.raises(ValueError, match="num_frames"):
        dqn.DQNConfig(num_frames=0)
    with pytest.raises(ValueError, match="min_epsilon"):
        dqn.DQNConfig(min_epsilon=0.5, max_epsilon=0.2)


def test_solved_at_is_the_first_frame_where_the_last_ten_reach_195():
    scores = [20.0] * 5 + [200.0] * 9 + [150.0] + [200.0] * 10
    ends = list(np.cumsum(scores).astype(int))
    # window ending at episode 14 (0-based) holds the 150: mean 195 exactly -> solved there
    assert dqn.solved_at(scores, ends) == ends[14]
    assert dqn.solved_at([200.0] * 9, ends[:9]) is None  # fewer than 10 episodes
    assert dqn.solved_at([194.0] * 30, list(range(194, 194 * 31, 194))) is None


def test_q_network_shape_and_target_updates_every_period():
    config = dqn.DQNConfig(target_update=3)
    agent = dqn.DQNAgent(config=config, loss_fn=LOSS)
    rng = np.random.default_rng(0)
    batch = {
        "obs": rng.normal(size=(8, 4)).astype(np.float32),
        "next_obs": rng.normal(size=(8, 4)).astype(np.float32),
        "acts": rng.integers(0, 2, 8),
        "rews": np.ones(8, np.float32),
        "done": np.zeros(8, np.float32),
    }
    assert agent.q(torch.from_numpy(batch["obs"])).shape == (8, 2)
    before = [p.clone() for p in agent.target.parameters()]
    losses = [agent.learn(batch) for _ in range(2)]
    assert all(torch.equal(a, b) for a, b in zip(before, agent.target.parameters(), strict=True))
    losses.append(agent.learn(batch))  # third step: hard update
    assert all(torch.equal(a, b) for a, b in zip(agent.q.parameters(), agent.target.parameters(), strict=True))
    assert losses[0].shape == (8,) and np.all(losses[0] >= 0)
    assert agent.greedy(batch["obs"][0]) in (0, 1)


def test_weights_scale_each_element_of_the_loss():
    torch.manual_seed(0)
    agent = dqn.DQNAgent(config=dqn.DQNConfig(lr=1e-3), loss_fn=LOSS)
    rng = np.random.default_rng(1)
    batch = {
        "obs": rng.normal(size=(4, 4)).astype(np.float32),
        "next_obs": rng.normal(size=(4, 4)).astype(np.float32),
        "acts": np.array([0, 1, 0, 1]),
        "rews": np.array([1.0, 5.0, -3.0, 0.0], np.float32),
        "done": np.array([0.0, 1.0, 0.0, 1.0], np.float32),
        "weights": np.array([1.0, 0.0, 0.0, 0.0], np.float32),  # only the first transition counts
    }
    start = {k: v.clone() for k, v in agent.q.state_dict().items()}
    agent.learn(batch)
    grad_from_weighted = {k: v - start[k] for k, v in agent.q.state_dict().items()}
    agent2 = dqn.DQNAgent(config=dqn.DQNConfig(lr=1e-3), loss_fn=LOSS)
    agent2.q.load_state_dict(start)
    agent2.target.load_state_dict(agent.target.state_dict())
    agent2.optimizer = torch.optim.Adam(agent2.q.parameters(), lr=1e-3)
    only_first = {k: v[:1] for k, v in batch.items() if k != "weights"}
    # the mean over 4 with weights (1, 0, 0, 0) is the first loss / 4; Adam's first step is scale-free
    agent2.learn(only_first)
    for key, value in agent2.q.state_dict().items():
        torch.testing.assert_close(value - start[key], grad_from_weighted[key], atol=1e-5, rtol=1e-3)


class SpyBuffer(vector_per.VectorPrioritizedReplayBuffer):
    """Records the betas it is asked for and the priorities it is given."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.betas, self.updates = [], []

    def sample_batch(self, beta, rng=None):
        self.betas.append(beta)
        return super().sample_batch(beta, rng)

    def update_priorities(self, indices, priorities):
        self.updates.append((np.array(indices), np.array(priorities)))
        super().update_priorities(indices, priorities)


def test_training_anneals_beta_linearly_and_feeds_back_abs_td_error_plus_eps():
    config = dqn.DQNConfig(num_frames=400, memory_size=200, batch_size=16, beta0=0.6)
    spy = SpyBuffer(4, config)
    run = dqn.train_dqn(seed=0, config=config, memory=spy, loss_fn=LOSS)
    betas = np.array(spy.betas)
    assert len(betas) == config.num_frames - config.batch_size + 1  # one gradient step per frame once a batch is held
    np.testing.assert_allclose(np.diff(betas), (1 - 0.6) / config.num_frames)  # linear, not compounding
    assert betas[-1] == pytest.approx(1.0) and betas[0] == pytest.approx(0.6 + 0.4 * 16 / 400)
    assert all(np.all(p >= config.prior_eps) for _, p in spy.updates)
    assert spy.max_priority == max(float(p.max()) for _, p in spy.updates) or spy.max_priority == 1.0
    assert len(run.losses) == len(betas) and len(run.epsilons) == config.num_frames
    assert len(run.scores) == len(run.episode_ends) and sum(run.scores) <= config.num_frames
    assert run.wall_s > 0 and run.cpu_s > 0


@pytest.mark.parametrize("memory", ["uniform", "prioritized"])
def test_every_memory_kind_trains(memory):
    config = dqn.DQNConfig(num_frames=300, memory_size=100, batch_size=16)
    run = dqn.train_dqn(seed=2, config=config, memory=train.make_memory(memory, config), loss_fn=LOSS)
    assert run.prioritized == (memory != "uniform")
    assert len(run.losses) == 300 - 16 + 1 and np.all(np.isfinite(run.losses))


def test_same_seed_same_run():
    config = dqn.DQNConfig(num_frames=200, batch_size=16)
    a, b = (dqn.train_dqn(seed=5, config=config, memory=train.make_memory("prioritized", config), loss_fn=LOSS)
            for _ in range(2))
    assert a.scores == b.scores and a.losses == b.losses


def test_prioritized_dqn_solves_cartpole_within_10k_frames_for_one_seed():
    """Fast-size check of Section 0 and Section 4's seed: seed 1 solves (the 5-seed comparison is in the slow suite)."""
    stored = dqn.load_results()["curves"]["prioritized"]
    run = dqn.train_dqn(seed=1, config=dqn.DQNConfig(), memory=train.make_memory("prioritized", dqn.DQNConfig()),
                        stop_when_solved=True, loss_fn=LOSS)
    assert run.frames_to_solve == stored["frames_to_solve"][stored["seeds"].index(1)]
    assert run.solved and run.frames_to_solve <= 10_000
    assert np.mean(run.scores[-dqn.SOLVED_WINDOW :]) >= dqn.SOLVED_SCORE


def test_memory_kind_must_be_known():
    for kind in ("random", "plain"):  # the plain prioritized buffer is the exercise: bench compares it
        with pytest.raises(ValueError, match="memory kind"):
            train.make_memory(kind, dqn.DQNConfig())


def test_the_student_s_trainer_takes_a_buffer_not_the_name_of_a_course_buffer():
    """The student's package holds no buffer: the notebook trains on the student's own."""
    for memory in ("prioritized", "uniform", None):
        with pytest.raises(TypeError, match="memory must be a replay buffer object"):
            dqn.train_dqn(seed=0, config=dqn.DQNConfig(num_frames=20, batch_size=4), memory=memory, loss_fn=LOSS)
    assert not hasattr(dqn, "make_memory")


def test_plots_and_curves():
    import matplotlib.pyplot as plt

    config = dqn.DQNConfig(num_frames=200, memory_size=100, batch_size=16)
    run = dqn.train_dqn(seed=1, config=config, memory=train.make_memory("prioritized", config), loss_fn=LOSS)
    fig = dqn.plot_training(run)
    assert [ax.get_title().split(" (")[0] for ax in fig.axes] == ["Score", "Loss", "Epsilon"]
    plt.close(fig)
    frames = [50, 100, 200]
    scores = dqn.running_score(run, frames)
    assert scores.shape == (3,)
    ends, values = np.array(run.episode_ends), np.array(run.scores)
    finished = np.searchsorted(ends, 200, side="right")
    assert scores[-1] == pytest.approx(values[max(0, finished - 10) : finished].mean())
    curves = dqn.learning_curves(seeds=(0,), config=config, memories=train.COURSE_MEMORIES, grid=100, loss_fn=LOSS)
    assert set(curves) == {"uniform", "prioritized"}
    assert curves["uniform"]["frames"] == [100, 200] and len(curves["prioritized"]["scores"][0]) == 2
    json.dumps(curves)  # JSON-ready
    ax = dqn.plot_comparison(curves)
    assert ax.get_ylabel() == "mean score of the last 10 episodes"
    plt.close(ax.figure)


# --------------------------------------------------------------------------------------
# The stored comparison behind the notebook's Section 4


def test_stored_results_are_measured_with_todays_defaults_and_summarized_faithfully():
    stored = dqn.load_results()
    assert stored["config"] == dataclasses.asdict(dqn.DQNConfig())  # measured with today's defaults (priorities |delta| + eps)
    summary = dqn.summarize_comparison(stored)
    for kind in ("uniform", "prioritized"):
        curve = stored["curves"][kind]
        assert len(curve["seeds"]) == 5 and all(len(s) == len(curve["frames"]) for s in curve["scores"])
        assert summary[kind]["solved"] == sum(f is not None for f in curve["frames_to_solve"])
        assert summary[kind]["final_mean"] == pytest.approx(np.mean([s[-1] for s in curve["scores"]]))
    paired = summary["paired"]
    assert paired["prioritized_sooner"] + paired["uniform_sooner"] + paired["ties"] == paired["seeds"] == 5
    text = dqn.describe_comparison(summary)
    assert f"solved in {summary['prioritized']['solved']} of 5 seeds" in text and "Verdict:" in text


def test_the_verdict_calls_a_memory_better_only_when_the_seeds_agree():
    def summary(p_frames, u_frames):
        curves = {kind: {"seeds": [0, 1, 2, 3, 4], "frames_to_solve": f, "scores": [[100.0]] * 5, "cpu_s": [1.0] * 5}
                  for kind, f in (("prioritized", p_frames), ("uniform", u_frames))}
        return dqn.summarize_comparison({"config": {"num_frames": 10_000}, "curves": curves})

    clear = summary([3000, 3100, 3200, 3300, None], [None, None, None, 3400, 9000])
    assert dqn.comparison_verdict(clear).startswith("Verdict: prioritized replay did better")
    assert dqn.comparison_verdict(summary([3000, None, 3200, None, None], [None, 3100, None, None, None])).startswith(
        "Verdict: the difference (2 against 1")
    uniform_better = summary([None] * 5, [3000, 3000, 3000, 3000, None])
    assert dqn.comparison_verdict(uniform_better).startswith("Verdict: uniform replay did better")
    three = {"config": {"num_frames": 10_000}, "curves": {
        kind: {"seeds": [0, 1, 2], "frames_to_solve": f, "scores": [[100.0]] * 3, "cpu_s": [1.0] * 3}
        for kind, f in (("prioritized", [3000, 3100, None]), ("uniform", [None, None, None]))}}
    assert dqn.comparison_verdict(dqn.summarize_comparison(three)).startswith("Verdict: 3 seeds are too few")


def test_td_loss_masks_terminal_steps_weights_the_loss_and_gives_abs_delta_priorities():
    q, target = torch.nn.Linear(2, 2), torch.nn.Linear(2, 2)
    for net, value in ((q, 0.0), (target, 1.0)):
        torch.nn.init.zeros_(net.weight)
        torch.nn.init.constant_(net.bias, value)
    batch = dqn.batch_tensors({"obs": np.zeros((3, 2), np.float32), "next_obs": np.zeros((3, 2), np.float32),
                               "acts": np.array([0, 1, 0]), "rews": np.array([1.0, 2.0, 0.25], np.float32),
                               "done": np.array([0.0, 1.0, 0.0], np.float32), "weights": np.array([1.0, 0.5, 0.0], np.float32)})
    loss, priorities = LOSS(q, target, batch, gamma=0.5, prior_eps=0.01)
    # targets 1 + 0.5, 2 (terminal), 0.25 + 0.5; Q = 0: delta = 1.5, 2, 0.75
    np.testing.assert_allclose(priorities.numpy(), [1.51, 2.01, 0.76], rtol=1e-6)
    assert loss.item() == pytest.approx((1.0 * 1.0 + 0.5 * 1.5 + 0.0) / 3)  # smooth-L1: |d| - 0.5 beyond 1
    assert not priorities.requires_grad and loss.requires_grad
    assert dqn.batch_tensors({k: v for k, v in {"obs": np.zeros((2, 2)), "next_obs": np.zeros((2, 2)), "acts": np.zeros(2),
                                                "rews": np.zeros(2), "done": np.zeros(2)}.items()})["weights"].tolist() == [1, 1]


def test_the_agent_learns_with_the_loss_it_is_given():
    calls = []

    def spy(*args):
        calls.append(args[3])
        return LOSS(*args)

    config = dqn.DQNConfig(num_frames=60, memory_size=50, batch_size=16)
    run = dqn.train_dqn(seed=0, config=config, memory=train.make_memory("uniform", config), loss_fn=spy)
    assert len(calls) == len(run.losses) == 60 - 16 + 1 and set(calls) == {config.gamma}


def test_random_and_trained_side_by_side():
    watch = dqn.random_and_trained(seed=1, episode_seed=100, every=4)  # the notebook's episode
    holds, figures = claim("replay.trained_agent_balances").check(watch)
    assert holds, figures
    assert watch.frames[0].shape[1] == 2 * 600 + 8  # two 600-pixel frames and the gap
    with pytest.raises(ValueError, match="at least one frame"):
        animation.side_by_side([], watch.frames)


def test_the_checkpoint_agent_balances_the_pole():
    net = dqn.trained_q_network()
    scores = train.greedy_scores(net)
    assert scores.min() >= dqn.SOLVED_SCORE, scores


def test_course_train_cartpole_reproduces_the_checkpoint():
    """``course train cartpole`` trains with the exercise's reference loss (seed 1 solves at a few
    thousand frames, seconds); the bundled checkpoint is exactly that network."""
    from course_utils.checkpoints import load_checkpoint

    run = train.train_cartpole()
    stored = load_checkpoint(dqn.CHECKPOINT)
    fresh = run.agent.q.state_dict()
    assert stored.keys() == fresh.keys()
    assert all(torch.equal(stored[k], fresh[k]) for k in stored)


def test_nothing_trains_without_a_loss():
    for make in (lambda: dqn.DQNAgent(), lambda: dqn.train_dqn(seed=0),
                 lambda: dqn.learning_curves(seeds=(0,), config=dqn.DQNConfig(num_frames=50, batch_size=16))):
        with pytest.raises(TypeError, match="loss_fn=prioritized_td_loss once it passes its check"):
            make()


def test_what_students_receive_holds_no_td_loss():
    """Exercise 4's answer is written once, in the notebook (harvested into the instructor
    package's ``solutions``): no module of the student package defines or exports a TD loss."""
    assert not hasattr(dqn, "td_loss")
    for path in PACKAGE.rglob("*.py"):
        name = str(path.relative_to(PACKAGE))
        tree = ast.parse(path.read_text())
        defined = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
        assert not defined & {"td_loss", "prioritized_td_loss"}, f"{name} defines {defined & {'td_loss', 'prioritized_td_loss'}}"


@pytest.mark.slow
def test_full_size_comparison_reproduces_the_stored_results(tmp_path):
    """Retrains all 10 runs (a few minutes) with ``train.measure_and_save`` and checks they match
    assets/per_results.json."""
    stored = dqn.load_results()
    fresh = train.measure_and_save(seeds=tuple(stored["curves"]["prioritized"]["seeds"]), path=tmp_path / "per.json")
    assert dqn.load_results(tmp_path / "per.json") == fresh and fresh["config"] == stored["config"]
    fresh = fresh["curves"]
    for kind in ("uniform", "prioritized"):
        assert fresh[kind]["frames_to_solve"] == stored["curves"][kind]["frames_to_solve"]
        assert fresh[kind]["scores"] == stored["curves"][kind]["scores"]
    again, before = dqn.summarize_comparison({"config": stored["config"], "curves": fresh}), dqn.summarize_comparison(stored)
    for summary in (again, before):  # CPU seconds depend on the machine; everything the verdict reads must not
        for kind in ("uniform", "prioritized"):
            summary[kind].pop("cpu_s")
    assert again == before and dqn.comparison_verdict(again) == dqn.comparison_verdict(before)


def test_defaults_are_the_ones_the_notebook_describes():
    config = dqn.DQNConfig()
    assert (config.num_frames, config.memory_size, config.batch_size, config.target_update) == (10_000, 1000, 32, 150)
    assert (config.max_epsilon, config.min_epsilon, config.epsilon_decay_frames) == (1.0, 0.01, 2000)
    assert (config.gamma, config.lr, config.alpha, config.beta0, config.prior_eps) == (0.99, 1e-3, 0.2, 0.6, 1e-6)
    assert [m.out_features for m in dqn.QNetwork().layers if isinstance(m, torch.nn.Linear)] == [128, 128, 2]
    env = dqn.make_env()
    assert env.spec.id == "CartPole-v1" and env.spec.max_episode_steps == 200
    env.close()
