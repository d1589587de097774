import gymnasium as gym
import numpy as np
import pytest

from course_utils.animation import animate, record_episode, side_by_side


def test_record_episode_keeps_frames_and_reward():
    env = gym.make("CartPole-v1", render_mode="rgb_array")
    frames, total, steps = record_episode(env, lambda obs: 0, seed=0, max_steps=50)
    assert 1 < steps <= 50 and total == steps  # CartPole pays 1 per step
    assert len(frames) == steps + 1 and frames[0].dtype == np.uint8 and frames[0].shape[2] == 3


def test_record_episode_refuses_an_env_that_cannot_render():
    with pytest.raises(ValueError, match="rgb_array"):
        record_episode(gym.make("CartPole-v1"), lambda obs: 0)


def test_animate_embeds_every_kept_frame_as_html():
    frames = [np.full((40, 60, 3), i * 20, dtype=np.uint8) for i in range(12)]
    html = animate(frames, fps=10, max_frames=5).data
    assert "<script" in html and html.count("data:image/png;base64") == 5


def test_animate_refuses_no_frames():
    with pytest.raises(ValueError, match="at least one frame"):
        animate([])


def test_animate_keeps_a_short_preview_while_graded_and_in_fast_mode(monkeypatch):
    from course_utils.animation import GRADING_FRAMES

    frames = [np.full((40, 60, 3), i % 250, dtype=np.uint8) for i in range(3 * GRADING_FRAMES)]
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    monkeypatch.setenv("COURSE_FAST", "0")
    assert animate(frames, max_frames=100).data.count("data:image/png;base64") == 3 * GRADING_FRAMES
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert animate(frames, max_frames=100).data.count("data:image/png;base64") == GRADING_FRAMES
    monkeypatch.delenv("NBGRADER_EXECUTION")
    monkeypatch.setenv("COURSE_FAST", "1")  # the course's tests: nobody watches
    assert animate(frames, max_frames=100).data.count("data:image/png;base64") == GRADING_FRAMES


def test_animate_warns_nothing_under_the_course_style():
    """With the course style (figure.autolayout) a full-figure frame used to print matplotlib's
    "not compatible with tight_layout" warning once per frame: nothing a student can act on."""
    import warnings

    import matplotlib.pyplot as plt

    from course_utils.plotting import use_course_style

    with plt.style.context("default"):
        use_course_style()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            animate([np.zeros((40, 60, 3), np.uint8)] * 3, title="an episode")
    assert [str(w.message) for w in caught] == []


def test_side_by_side_holds_the_shorter_episodes_last_frame():
    left = [np.full((2, 3, 3), i, np.uint8) for i in range(3)]
    right = [np.full((2, 3, 3), 10 + i, np.uint8) for i in range(5)]
    frames = side_by_side(left, right, gap=2)
    assert len(frames) == 5 and frames[0].shape == (2, 8, 3)
    assert frames[4][0, 0, 0] == 2 and frames[4][0, 7, 0] == 14 and frames[4][0, 3, 0] == 128
