# Reproduce: env -u PYTHONDONTWRITEBYTECODE COURSE_FAST=1 COURSE_HEADLESS=1 MPLBACKEND=Agg .venv/bin/python .scratch/measure_speed_apart.py
import sys, json, numpy as np
sys.path.insert(0, "tests")
from verdicts import measured_apart
from course_admin.replay import solutions
from course_utils.replay.checks import TREES

class Hybrid(solutions.SumSegmentTree):
    """A right tree whose range sums are a numpy reduction of a copy of the leaves (O(capacity))."""
    def __init__(self, capacity):
        super().__init__(capacity)
        self.leaves = np.zeros(capacity)
    def __setitem__(self, index, value):
        super().__setitem__(index, value)
        self.leaves[index] = value
    def sum(self, start=0, end=None):
        return float(self.leaves[start:end].sum())

for name, cls in (("course", solutions.SumSegmentTree), ("numpy_sum_hybrid", Hybrid)):
    m = measured_apart(TREES, cls, solutions.MinSegmentTree)
    print(name, json.dumps({k: v for k, v in m.items() if k != "answers"}))
