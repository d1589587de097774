"""Tutorial 2's colour environment."""


import numpy as np
import pytest
import torch
from gymnasium.utils.env_checker import check_env

from course_utils import colour


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
