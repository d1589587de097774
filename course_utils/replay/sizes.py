"""The sizes of tutorial 4's long runs, as ``(full, fast)`` pairs (see ``runtime.Sizes``); the
notebook's settings cell names them."""

from course_utils.runtime import Sizes

SIZES = Sizes(
    train_frames=(10_000, 2_000),  # environment steps of the prioritized DQN you train in Section 3
    live_frames=(10_000, 1_500),  # environment steps of each of the six runs of Section 4
    live_grid=(250, 100),  # frames between two points of Section 4's curves
    bench_repeats=(200, 40),  # batches timed per tree in the benchmark
    frame_every=(2, 4),  # keep every so many rendered frames of an episode
    max_frames=(100, 30),  # frames at most in an animation
)
