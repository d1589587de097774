"""Tutorial 1's environments: Harlow's experiment and the win-stay lose-shift baseline."""


import numpy as np
import pytest
import torch
from gymnasium.utils.env_checker import check_env

from course_utils import harlow
from course_utils.claims import claim


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
    finals = [harlow.run_dummy_agent(env, 100, seed=s)[-1] for s in range(200)]  # the notebook's 200 runs
    holds, figures = claim("harlow.win_stay_lose_shift_at_chance").check(finals)
    assert holds, figures  # chance: sd of one run is 10, of the mean of 200 runs 0.7
