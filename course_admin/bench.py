"""Benchmarks: each prints one JSON line of measured figures, the course's way side by side
with a baseline measured in the same process. Run them with ``course bench NAME``."""

from __future__ import annotations

import json

BENCHMARKS = {
    "colour": "course_admin.colour.bench:bench_colour",
    "per": "course_admin.replay.bench:bench_per",
    "harlow": "course_admin.harlow.bench:bench_harlow",
    "lunar": "course_admin.lunar.bench:bench_lunar",
    "lunar-solve": "course_admin.lunar.bench:bench_lunar_solve",
    "lunar-student": "course_admin.lunar.bench:bench_lunar_student",
    "lunar-experiments": "course_admin.lunar.bench:bench_lunar_experiments",
    "lunar-seeds": "course_admin.lunar.bench:bench_lunar_seeds",
    "lunar-step": "course_admin.lunar.bench:bench_lunar_step",
    "grading": "course_admin.grading.bench:bench_grading",
    "grading-course": "course_admin.grading.bench:bench_course_grading",
    "ci": "course_admin.ci:bench_ci",
    "notebooks": "course_admin.notebook_timing:bench_notebooks",
}
"""``course bench NAME`` calls ``module:function()``, which returns a dict of measured figures
(the course's way and its baseline, measured in the same process)."""


def run(name: str) -> None:
    """Run benchmark ``name`` and print its JSON line."""
    import importlib

    module, _, function = BENCHMARKS[name].partition(":")
    print(json.dumps(getattr(importlib.import_module(module), function)()))
