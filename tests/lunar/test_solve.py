"""The bar and the evaluation schedule (``course_utils.lunar.solve``) of the student's run, the course's
trainer (``course_admin.lunar.solve``) and ``course bench lunar-solve``."""

import numpy as np
import pytest

from course_admin.lunar import solve as course_solve
from course_utils.lunar import solve


def test_score_is_mean_minus_std():
    assert solve.score([250.0, 250.0]) == 250.0
    assert solve.score([150.0, 250.0]) == pytest.approx(200.0 - 50.0)


def test_schedule_evaluates_every_interval_once_the_screen_is_passed():
    s = solve.Schedule(eval_every=100, screen=50.0, bar=200.0)
    assert not s.due(99, 300.0)
    assert not s.due(100, 10.0)  # due, but the training mean is below the screen: skipped
    assert not s.due(150, 300.0)  # the next evaluation is at 200
    assert s.due(230, 300.0)
    assert not s.record(230, np.array([190.0, 210.0]), 1.0, 1.0, 0.1)  # 200 - 10 < 200
    assert s.due(300, 300.0) and s.record(300, np.array([230.0, 250.0]), 2.0, 2.0, 0.1)
    assert [e["steps"] for e in s.evaluations] == [230, 300] and s.evaluations[-1]["score"] == 230.0
    assert s.eval_wall_s == pytest.approx(0.2)


def test_train_until_solved_stops_at_the_bar(monkeypatch):
    """A bar every policy passes stops training at the first evaluation; an impossible one runs
    out the step budget (tiny runs: 2 environments, short rollouts)."""
    config = {"num_envs": 2, "rollout_steps": 64, "minibatches": 4, "shards": 1}
    _, easy = course_solve.train_until_solved(config, max_steps=1024, eval_every=256, screen=-np.inf, bar=-np.inf,
                                       progress=False, workers=1, seeds=[1, 2])
    assert easy["solved"] and easy["steps"] == 256 and len(easy["evaluations"]) == 1
    seen = []
    _, hard = course_solve.train_until_solved(config, max_steps=1024, eval_every=512, screen=-np.inf, bar=np.inf,
                                       progress=False, workers=1, on_evaluation=seen.append,
                                       seeds=[1, 2])
    assert not hard["solved"] and hard["steps"] == 1024 and [e["steps"] for e in seen] == [512, 1024]


def test_fast_greedy_evaluation_plays_the_same_episodes_as_evaluate():
    """``evaluate_greedy`` (one LanderVectorEnv, NumPy forwards) gives ``aac.evaluate``'s totals:
    for the course's lander (landings) and for an untrained network (time-outs and crashes)."""
    import torch

    from course_admin.lunar import aac
    from course_utils.checkpoints import load_checkpoint
    from course_utils.lunar.env import EVAL_SEEDS

    torch.manual_seed(0)
    agent = aac.ActorCriticNet()
    agent.load_state_dict(load_checkpoint(aac.CHECKPOINT))
    for net in (agent, aac.ActorCriticNet()):
        seeds = EVAL_SEEDS[:8]
        assert np.allclose(course_solve.evaluate_greedy(net, seeds), aac.evaluate(net, seeds, deterministic=True),
                           atol=1e-6)


def test_notebook_networks_are_evaluated_on_bare_landers_with_the_same_totals():
    """A notebook's network (no NumPy twin, no time feature) plays ``evaluate_greedy``'s episodes on
    bare LeanLunarLanders: ``aac.evaluate``'s totals to the last bit, for an untrained actor-critic
    and policy network (crashes, flights off the screen)."""
    import torch

    from course_admin.lunar import aac
    from course_admin.lunar.solutions import AACPolicyNet, PolicyNet
    from course_utils.lunar.env import EVAL_SEEDS
    from course_utils.lunar.evaluation import evaluate

    seeds = EVAL_SEEDS[:12]
    for seed, net_type in ((0, AACPolicyNet), (1, PolicyNet)):
        torch.manual_seed(seed)
        net = net_type(8, 4, (32, 32))
        assert np.array_equal(evaluate(net, seeds), aac.evaluate(net, seeds, deterministic=True))
        assert np.array_equal(course_solve.evaluate_greedy(net, seeds), evaluate(net, seeds))


def test_until_solved_evaluates_the_greedy_policy_on_schedule_and_stops_at_the_bar():
    """The notebook's stop for the student's run: no evaluation before the screen or between two
    due points; the course's agent passes the bar on the evaluation landscapes, a fresh network does not."""
    import torch

    from course_admin.lunar.solutions import AACPolicyNet
    from course_utils.lunar.env import EVAL_SEEDS
    from course_utils.lunar.evaluation import evaluate, load_pretrained

    seeds = EVAL_SEEDS[:10]
    agent = load_pretrained()
    returns = evaluate(agent, seeds)
    bar = solve.score(returns) - 1.0  # on these 10 landscapes, a bar the course's agent just passes
    seen = []
    until = solve.UntilSolved(eval_every=32, bar=bar, seeds=seeds, on_evaluation=seen.append)
    torch.manual_seed(0)
    fresh = AACPolicyNet(8, 4, (16,))
    assert solve.solve_report(until).startswith("No evaluation yet")
    assert not until(fresh, {"episode_num": [16], "mean_reward": [150.0]})  # not due yet
    assert not until(fresh, {"episode_num": [32], "mean_reward": [50.0]})  # due, but below the screen of 100
    assert not until(fresh, {"episode_num": [64], "mean_reward": [150.0]}) and not until.solved
    assert "Not solved after 1 evaluations" in solve.solve_report(until)
    assert until(agent, {"episode_num": [96], "mean_reward": [150.0]}) and until.solved
    assert [entry["episodes"] for entry in seen] == [64, 96] and seen == until.evaluations
    assert seen[-1]["score"] == round(solve.score(returns), 2) and seen[0]["score"] < bar
    report = solve.solve_report(until)
    assert report.startswith("Your agent passed the bar after 96 episodes") and f"{returns.mean():.1f}" in report


@pytest.mark.slow
def test_the_students_actor_critic_solves_the_lander_at_full_size(tmp_path, monkeypatch):
    """Issue 17, target 3: the notebook's long run with the exercise's classes (the solutions),
    its aac_hp and its seed passes the course's bar within FINAL_EPISODES; and, as Section 8 says,
    its training mean (sampled actions) stays below the greedy return that passed."""
    import torch

    from course_admin.lunar import reference
    from course_admin.lunar.solutions import (
        AACPolicyGradientLoss,
        AACPolicyNet,
        ActionEntropyLoss,
        Episode,
        PolicyTrainer,
        TrainBatch,
    )
    from course_utils.lunar.env import make_env
    from course_utils.lunar.harness import VectorBatchDataset
    from course_utils.lunar.sizes import SIZES

    from .test_experiments import _notebook_dict

    monkeypatch.setenv("COURSE_CACHE", str(tmp_path))
    aac_hp = _notebook_dict("aac_hp")
    torch.manual_seed(2)
    net = AACPolicyNet.build_for_env(make_env(), **aac_hp)
    trainer = PolicyTrainer(net, torch.optim.Adam(net.parameters(), lr=aac_hp["learn_rate"]),
                            [AACPolicyGradientLoss(aac_hp["delta"]), ActionEntropyLoss(4, aac_hp["beta"])],
                            VectorBatchDataset(net, aac_hp["batch_size"], aac_hp["gamma"], seed=2, batch_type=TrainBatch,
                                               episode_type=Episode), checkpoints_file=tmp_path / "mine.pt")
    until = solve.UntilSolved()
    data = trainer.train(max_episodes=SIZES.full("final_episodes"), stop_when=until, progress=False,
                         lr_decay_episodes=reference.FINAL_LR_DECAY_EPISODES, critic_steps=aac_hp["critic_steps"],
                         critic_learn_rate=aac_hp["critic_learn_rate"])
    assert until.solved, solve.solve_report(until)
    assert data["mean_reward"][-1] < until.evaluations[-1]["mean"] - 30
    assert torch.load(tmp_path / "mine.pt", weights_only=True)["solved"] is True


def test_section_8_says_when_the_students_run_is_evaluated():
    import json

    from course_utils.paths import SOLUTIONS

    until = solve.UntilSolved()
    cells = json.loads((SOLUTIONS / "03_policy_gradients.ipynb").read_text())["cells"]
    text = " ".join(" ".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown").split())
    assert (f"Every {until.schedule.eval_every} episodes, once the mean of the last 100 training episodes has reached "
            f"{until.schedule.screen:g}, the cell plays those 100 episodes") in text
    assert until.schedule.bar == solve.BAR == 200 and "mean total reward minus its standard deviation of at least 200" in text


def test_the_stored_timing_of_section_8s_run_is_reported_in_one_line(tmp_path, monkeypatch):
    """``course train lunar-student-run`` stores what Section 8's run took; ``student_run_report``
    prints it, and says when the machine was shared (its load above its cores)."""
    import json

    timing = {"how": "course train lunar-student-run", "date": "2026-11-26", "cores": 2, "load_average_1min": [1.2, 1.9],
              "solved": True, "episodes": 20480, "wall_s": 254.4, "cpu_s": 480.0, "aac_hp": {}}
    monkeypatch.setattr(solve, "STUDENT_RUN", tmp_path / "run.json")
    solve.STUDENT_RUN.write_text(json.dumps(timing))
    report = solve.student_run_report()
    assert "passed the bar after 20,480 episodes in 4.2 minutes of wall-clock time (8.0 minutes of CPU, 2 cores)" in report
    solve.STUDENT_RUN.write_text(json.dumps({**timing, "solved": False, "load_average_1min": [3.5, 6.0]}))
    report = solve.student_run_report()
    assert "had not passed the bar after 20,480 episodes" in report and "shared: load average up to 6.0" in report
    solve.STUDENT_RUN.unlink()
    assert solve.student_run_report().startswith("The course has not timed this cell with its current code yet")
