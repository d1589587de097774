"""Tutorial 4's exercises judged from records: the check cell and the grader give the same
verdict, the hidden cases are not the public ones, and an answer tuned to the public cases
passes the check cell but not the grader."""

from __future__ import annotations

import json
import re

import pytest
import torch
from verdicts import graded, not_yet

from course_admin.grading import judging
from course_admin.replay import solutions
from course_utils import checking, records
from course_utils.checking import Problem
from course_utils.replay.checks import ADD, TREES
from course_utils.replay.checks_buffer import BUFFER
from course_utils.replay.memory import CircularReplayMemory
from course_utils.replay.standin_trees import SlowMinTree, SlowSumTree
from replay.test_memory import WRONG_ADDS, _ModuloIndexing
from replay.test_per import WRONG_BUFFERS
from replay.test_trees import WRONG_TREES


class OnStandInTrees(solutions.PrioritizedReplayBuffer):
    """The course's buffer on the check's slow stand-in trees, as the buffer's hidden test builds
    a student's buffer (it binds ``SumTree``/``MinTree`` to them)."""

    def __init__(self, obs_dim, size, batch_size=32, alpha=0.6):
        super().__init__(obs_dim, size, batch_size, alpha)
        self.sum_tree, self.min_tree = SlowSumTree(self.sum_tree.capacity), SlowMinTree(self.min_tree.capacity)


REFERENCE_TREES = (solutions.SumSegmentTree, solutions.MinSegmentTree)
CORPUS = [(ADD, (solutions.CircularMemory,), True), (ADD, (_ModuloIndexing,), True)]
CORPUS += [(ADD, (wrong,), False) for wrong, _ in WRONG_ADDS]
CORPUS += [(TREES, REFERENCE_TREES, True), (TREES, (SlowSumTree, SlowMinTree), False)]
CORPUS += [(TREES, trees, False) for trees, _ in WRONG_TREES]
CORPUS += [(BUFFER, (solutions.PrioritizedReplayBuffer,), True), (BUFFER, (OnStandInTrees,), True)]
CORPUS += [(BUFFER, (wrong,), False) for wrong, _ in WRONG_BUFFERS]


@pytest.mark.parametrize(
    "exercise, answers, right", CORPUS, ids=lambda x: "-".join(a.__name__ for a in x)[:40] if type(x) is tuple else str(x)[:20]
)
def test_the_check_cell_and_the_grader_give_the_same_verdict(exercise, answers, right):
    assert checking.passes(exercise.check, *answers) is right
    assert graded(exercise, *answers)[0] is right


@pytest.mark.parametrize("exercise", [ADD, TREES, BUFFER], ids=lambda e: e.grade_id)
def test_hidden_cases_are_not_the_public_ones(exercise):
    assert judging.exercise_for(exercise.grade_id) is exercise
    assert exercise.cases_for(True) != exercise.cases()
    hidden, public = judging.reference_record(exercise.grade_id), checking.stored_record(exercise.grade_id)
    assert json.dumps(records.encode(hidden), sort_keys=True) != json.dumps(records.encode(public), sort_keys=True)


def _tuned_memory():
    """A memory that writes, after each add, what the course's memory held at that step of the
    public cases (from the stored record), and nothing else."""
    cases, seen = ADD.cases(), checking.stored_record(ADD.grade_id)
    public = {
        (capacity, index): log for (capacity, sizes), log in zip(cases, seen, strict=True) for index in range(len(sizes))
    }

    class Tuned(CircularReplayMemory):
        def add(self, batch):
            self.prepare(batch)
            self.adds = getattr(self, "adds", 0) + 1
            log = public.get((self.capacity, self.adds - 1))
            if log is not None:
                for key, value in log[f"{self.adds - 1}: memory"].items():
                    self.memory[key] = torch.as_tensor(value).clone()
                self.size, self.pointer = log[f"{self.adds - 1}: len"], log[f"{self.adds - 1}: pointer"]
            return self

    return Tuned


def test_answers_tuned_to_the_public_cases_pass_the_check_but_not_the_grader():
    tuned = _tuned_memory()
    assert checking.passes(ADD.check, tuned)
    passed, message = graded(ADD, tuned)
    assert not passed and "expected" in message


def test_the_speed_part_is_measured_in_the_kernel_and_decided_by_the_judge():
    expected = judging.reference_record(TREES.grade_id)
    TREES.judge(judging.reference_record(TREES.grade_id), expected, TREES.cases_for(True))
    for speed in ({"done": 2000, "over_time": True, "growth": None}, {"done": 1999, "over_time": False, "growth": None},
                  {"done": 2000, "over_time": False}, {"done": 2000}):
        got = judging.reference_record(TREES.grade_id)
        got["speed"] = speed
        with pytest.raises(Problem, match="too slow|damaged"):
            TREES.judge(got, expected, TREES.cases_for(True))


def test_a_record_stopped_by_an_error_fails_with_that_error():
    got = judging.reference_record(BUFFER.grade_id)
    stopped = {}
    for name, value in got.items():
        if name.startswith("uniform"):
            stopped[name] = records.StudentError("sample_batch(beta=0.7) raised ZeroDivisionError: division by zero.")
            break
        stopped[name] = value
    with pytest.raises(Problem, match="ZeroDivisionError"):
        BUFFER.judge(stopped, judging.reference_record(BUFFER.grade_id), BUFFER.cases_for(True))
    with pytest.raises(Problem, match="stops early"):
        BUFFER.judge({"leaves": [1.0] * 5}, got, BUFFER.cases_for(True))


def test_a_clock_that_stands_still_does_not_make_a_slow_tree_fast(monkeypatch):
    """The speed part is timed in the check cell's kernel by a clock bound when the checks were
    imported (the setup cell), which an answer that replaces time.process_time later cannot stop;
    graded, it is timed from outside the answer's process (``verdicts.graded``, as the runner does)."""
    import time

    class LinearSum(REFERENCE_TREES[0]):  # a right tree whose range sums loop over the leaves
        def sum(self, start=0, end=None):
            end = self.capacity if end is None else end
            return sum(self.tree[self.capacity + i] for i in range(start, end))

    monkeypatch.setattr(time, "process_time", lambda: 0.0)
    # on the small tree already, or on both; on a loaded machine the 1000 linear sums over the big
    # tree can also outlast the check's time limit: not passed either way
    slow = re.compile("too slow|grows with the capacity|did not finish within")
    assert slow.search(not_yet(TREES.check, LinearSum, REFERENCE_TREES[1]))
    passed, message = graded(TREES, LinearSum, REFERENCE_TREES[1])
    assert not passed and slow.search(message)
