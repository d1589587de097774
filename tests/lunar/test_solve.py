"""The bar and the evaluation schedule of ``course bench lunar-solve`` and the live lander."""

import numpy as np
import pytest

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
    _, easy = solve.train_until_solved(config, max_steps=1024, eval_every=256, screen=-np.inf, bar=-np.inf,
                                       progress=False, workers=1, seeds=[1, 2])
    assert easy["solved"] and easy["steps"] == 256 and len(easy["evaluations"]) == 1
    seen = []
    _, hard = solve.train_until_solved(config, max_steps=1024, eval_every=512, screen=-np.inf, bar=np.inf,
                                       progress=False, workers=1, on_evaluation=seen.append,
                                       seeds=[1, 2])
    assert not hard["solved"] and hard["steps"] == 1024 and [e["steps"] for e in seen] == [512, 1024]


def test_fast_greedy_evaluation_plays_the_same_episodes_as_evaluate():
    """``evaluate_greedy`` (one LanderVectorEnv, NumPy forwards) gives ``aac.evaluate``'s totals:
    for the course's lander (landings) and for an untrained network (time-outs and crashes)."""
    import torch

    from course_utils.lunar import aac
    from course_utils.lunar.env import EVAL_SEEDS

    torch.manual_seed(0)
    for net in (aac.load_pretrained(), aac.ActorCriticNet()):
        seeds = EVAL_SEEDS[:8]
        assert np.allclose(solve.evaluate_greedy(net, seeds), aac.evaluate(net, seeds, deterministic=True), atol=1e-6)
