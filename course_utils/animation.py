"""Episodes shown as inline animations: no ffmpeg, no virtual display.

gymnasium's box2d and classic-control environments render to RGB arrays with
``render_mode="rgb_array"`` (pygame draws off screen). ``animate`` turns a list of such frames
into a self-contained HTML/JavaScript player (matplotlib's ``to_jshtml``: PNG frames embedded in
the page), which Jupyter shows inline and which survives in saved notebooks. ``side_by_side``
joins two episodes' frames into one animation (two agents on the same start).
"""

from __future__ import annotations

import os

import numpy as np

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")  # pygame never needs a screen here
GRADING_FRAMES = 12


def record_episode(env, policy, seed: int | None = None, max_steps: int = 1000, every: int = 1):
    """Play one episode and keep its frames.

    ``env`` must be made with ``render_mode="rgb_array"``; ``policy(obs) -> action``.
    Returns ``(frames, total_reward, steps)``: ``frames`` is a list of (H, W, 3) uint8 arrays
    (every ``every``-th step, plus the last), ``total_reward`` the undiscounted episode return.
    """
    if getattr(env, "render_mode", None) != "rgb_array":
        raise ValueError('record_episode needs an environment made with render_mode="rgb_array".')
    obs, _ = env.reset(seed=seed)
    frames = [env.render()]
    total, steps = 0.0, 0
    while steps < max_steps:
        obs, reward, terminated, truncated, _ = env.step(policy(obs))
        total += float(reward)
        steps += 1
        if steps % every == 0 or terminated or truncated:
            frames.append(env.render())
        if terminated or truncated:
            break
    return frames, total, steps


def side_by_side(left: list, right: list, gap: int = 8) -> list:
    """Frames (H, W, 3) of two episodes joined left and right with a grey band ``gap`` pixels wide
    between them (it shows on dark and on white scenes); the shorter episode holds its last frame."""
    if not left or not right:
        raise ValueError("side_by_side needs at least one frame on each side.")
    band = np.full((np.shape(left[0])[0], gap, 3), 128, dtype=np.uint8)
    n = max(len(left), len(right))
    return [np.concatenate([left[min(i, len(left) - 1)], band, right[min(i, len(right) - 1)]], axis=1) for i in range(n)]


def animate(frames, fps: int = 30, title: str | None = None, scale: float = 0.5, max_frames: int = 200):
    """An inline HTML animation of ``frames`` (list of (H, W, 3) uint8 arrays).

    ``scale`` shrinks each frame (0.5: half width and height) and at most ``max_frames`` are kept
    (evenly spaced), so the page stays small: about 5-10 KB per frame. While nbgrader grades
    (``runtime.grading()``) at most ``GRADING_FRAMES`` are kept: the feedback shows a preview,
    and the course's own animations stay far below the grader's output cap. In fast mode
    (``runtime.fast_mode()``: the course's tests, where nobody watches) the preview is kept too:
    each frame costs about 25 ms to draw and encode, seconds per animation.
    Returns an ``IPython.display.HTML`` object; display it or leave it as a cell's last value.
    """
    import matplotlib.pyplot as plt
    from IPython.display import HTML
    from matplotlib import animation

    from course_utils.runtime import fast_mode, grading

    if len(frames) == 0:
        raise ValueError("animate needs at least one frame; did the episode run?")
    if grading() or fast_mode():
        max_frames = min(max_frames, GRADING_FRAMES)
    if len(frames) > max_frames:
        keep = np.linspace(0, len(frames) - 1, max_frames).round().astype(int)
        frames = [frames[i] for i in keep]
    step = max(1, round(1 / scale)) if scale < 1 else 1
    frames = [np.asarray(frame)[::step, ::step] for frame in frames]
    height, width = frames[0].shape[:2]
    # The frame fills the figure: no automatic layout (the course style turns it on, and matplotlib
    # then warns once per frame that the axes are "not compatible with tight_layout").
    with plt.rc_context({"figure.autolayout": False}):
        fig = plt.figure(figsize=(width / 100, height / 100), dpi=100)
        ax = fig.add_axes([0, 0, 1, 1])
        ax.axis("off")
        image = ax.imshow(frames[0])
        if title:
            ax.set_title(title, fontsize=8, y=0.92)

        def draw(i):
            image.set_data(frames[i])
            return (image,)

        player = animation.FuncAnimation(fig, draw, frames=len(frames), interval=1000 / fps, blit=True)
        html = player.to_jshtml(fps=fps, default_mode="once")
        plt.close(fig)
    return HTML(html)
