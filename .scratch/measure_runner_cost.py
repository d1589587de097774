# Reproduce: env -u PYTHONDONTWRITEBYTECODE COURSE_FAST=1 COURSE_HEADLESS=1 MPLBACKEND=Agg .venv/bin/python .scratch/measure_runner_cost.py
"""CPU cost of timing the speed part apart: the runner's CPU (job child and its exercise children) for
the course's segment-tree answer driven apart, with the speed part timed apart and without it; and the
speed workload alone in this process (the old in-child cost), for the course's tree."""
import json, resource, sys, time
sys.path.insert(0, "tests")
from course_admin.grading import drive_apart, judging
from course_admin.replay import solutions
from course_utils.replay import checks
from grading.test_drive_apart import _notebook
import grading.test_drive_apart as tda
from pathlib import Path
import tempfile

def served(timed: bool, tmp: Path) -> float:
    real = drive_apart.build_job
    def build(*a, **k):
        job = real(*a, **k)
        if not timed:
            for e in job["exercises"]:
                e["timed"] = None
        return job
    drive_apart.build_job = build
    try:
        before = drive_apart.SERVED_CPU_SECONDS
        tda.drive_many([(_notebook("replay"), "test_segment_trees")], tmp)
        return drive_apart.SERVED_CPU_SECONDS - before
    finally:
        drive_apart.build_job = real

tmp = Path(tempfile.mkdtemp())
served(True, tmp / "warm")  # the runner server starts (torch import) once
rows = {}
for rep in range(3):
    for timed in (False, True):
        rows.setdefault(timed, []).append(served(timed, tmp / f"{timed}{rep}"))
print(json.dumps({"served_cpu_without_speed_part": rows[False], "served_cpu_timed_apart": rows[True]}))
cases = checks.TREES.cases_for(True)
steps, budget = checks.SPEED.steps(cases, 123)
walls, cpus = [], []
for rep in range(3):
    tree = solutions.SumSegmentTree(cases["speed"]["capacity"])
    w, c = time.perf_counter(), time.process_time()
    for step in steps:
        checks.SPEED.answer(tree, step)
    walls.append(time.perf_counter() - w); cpus.append(time.process_time() - c)
print(json.dumps({"in_process_workload_wall": walls, "in_process_workload_cpu": cpus, "budget": budget}))
