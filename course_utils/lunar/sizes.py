"""The sizes of tutorial 3's long runs, read by the notebook's settings cell.

Each entry is ``(full, fast)``: students get the full size; the course's own tests run the
notebook at the fast size (``runtime.Sizes``). What each size trades is said in the settings
cell's comments.
"""

from __future__ import annotations

from course_utils.runtime import Sizes

SIZES = Sizes(
    experiment_episodes=(3000, 48),  # episodes of each Section 6 experiment (vpg, epg, bpg, cpg) and of aac
    experiment_seeds=(3, 3),  # seeds of each experiment (runs side by side; the plot shows their mean and spread)
    final_episodes=(30000, 32),  # episodes at most of the long actor-critic run of Section 8 (it stops at the bar)
    show_every=(50, 1),  # batches between two animations during that run
    eval_episodes=(100, 10),  # evaluation landscapes (lunar.EVAL_SEEDS) of the course's agent
)
"""Tutorial 3's sizes; ``SIZES.name`` is the full or the fast one (``runtime.Sizes``)."""
