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


def test_animate_embeds_the_frames_pixels_and_a_player_that_escapes_its_title():
    """Each kept frame is the downscaled picture, losslessly (PNG); the title is text above it,
    escaped; the page's script plays the frames once when shown, and its button replays them."""
    import base64
    import io
    import re

    from PIL import Image

    rng = np.random.default_rng(0)
    frames = [rng.integers(0, 256, (40, 60, 3), dtype=np.uint8) for _ in range(4)]
    page = animate(frames, fps=20, title="<b>batch 3</b>", scale=0.5).data
    uris = re.findall(r'"data:image/png;base64,([^"]+)"', page)
    assert len(uris) == 4
    for uri, frame in zip(uris, frames, strict=True):
        assert np.array_equal(np.asarray(Image.open(io.BytesIO(base64.b64decode(uri)))), frame[::2, ::2])
    assert "&lt;b&gt;batch 3&lt;/b&gt;" in page and "<b>batch 3" not in page
    assert 'width="30" height="20"' in page and "setInterval" in page and ", 50);" in page
    ids = set(re.findall(r'id="(anim-[0-9a-f]+)"', page + animate(frames).data))
    assert len(ids) == 2  # two players on one page drive their own images
