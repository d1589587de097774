"""Tutorial 1's sizes, full and fast (``COURSE_FAST=1``): the notebook's settings cell reads them."""

from course_utils.runtime import Sizes

SIZES = Sizes(
    new_individuals=(5, 2),  # offspring in the generation your own functions make
    live_generations=(200, 30),  # generations of the batched evolutions run in the notebook
    comparison_tasks=(200, 60),  # new tasks every agent of Sections 4 and 5 learns
)
"""Sizes of the notebook's runs: ``(full, fast)``."""
