"""Tutorial 4's part of the student's package holds no answer to any exercise: the course's ring
buffer, segment trees, prioritized buffer, trainer and the judges' oracles are instructor code
(``course_admin.replay``); what the student is given instead cannot stand in for an answer."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from course_admin.replay import solutions
from course_utils.paths import PACKAGE
from course_utils.replay.buffer import ReplayBuffer
from course_utils.replay.memory import ReplayMemoryError
from course_utils.replay.standin_memory import FillingMemory

MOVED = ("per", "vector_per", "trees", "memory_judge")
"""Modules the student's package used to ship, whose code answered an exercise (the red team's drop-ins)."""


@pytest.mark.parametrize("name", MOVED)
def test_the_moved_modules_are_not_in_the_student_package(name):
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(f"course_utils.replay.{name}")


def test_no_file_of_the_student_package_holds_the_course_s_trees_buffers_or_oracles():
    texts = {path: path.read_text() for path in (PACKAGE / "replay").rglob("*.py")}
    for needle in ("class VectorSumTree", "class VectorPrioritizedReplayBuffer", "def td_quantities", "def expected_slots",
                   "def cumsum_retrieve", "% self.max_size", "def make_memory"):
        assert not [path.name for path, text in texts.items() if needle in text], needle


def test_the_given_buffer_needs_a_memory_and_takes_the_slots_it_gives():
    with pytest.raises(TypeError, match="keeps its transitions in a memory"):
        ReplayBuffer(obs_dim=1, size=4, batch_size=2)
    filling = ReplayBuffer(obs_dim=1, size=4, batch_size=2, memory=FillingMemory)
    assert [filling.store([t], 0, float(t), [t], False) for t in range(4)] == [0, 1, 2, 3]
    with pytest.raises(ReplayMemoryError, match="does not overwrite"):  # the stand-in is no ring
        filling.store([4], 0, 4.0, [4], False)
    ring = ReplayBuffer(obs_dim=1, size=4, batch_size=2, memory=solutions.CircularMemory)
    assert [ring.store([t], 0, float(t), [t], False) for t in range(6)] == [0, 1, 2, 3, 0, 1]
    np.testing.assert_array_equal(ring._batch([0, 1, 2])["rews"], [4.0, 5.0, 2.0])


def test_the_buffer_s_hidden_cases_never_overflow_the_stand_in_memory():
    from course_utils.replay.checks_buffer import BUFFER

    for hidden in (False, True):
        for part in BUFFER.cases_for(hidden).values():
            assert part["stored"] + (1 if "high" in part else 0) <= part["size"]
