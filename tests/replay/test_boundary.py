"""Tutorial 4's part of the student's package holds no answer to any exercise: the course's ring
buffer, segment trees, prioritized buffer, trainer and the judges' oracles are instructor code
(``course_admin.replay``); what the student is given instead cannot stand in for an answer."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
import torch

from course_admin.replay import solutions
from course_utils.paths import PACKAGE
from course_utils.replay.buffer import ReplayBuffer
from course_utils.replay.memory import CircularReplayMemory, ReplayMemoryError
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
    standin = ReplayBuffer(obs_dim=1, size=4, batch_size=2, memory=FillingMemory)
    # fills in order, then overwrites from the next-to-last slot down: no ring, and once full the
    # slot a transition takes is not len - 1
    assert [standin.store([t], 0, float(t), [t], False) for t in range(9)] == [0, 1, 2, 3, 2, 1, 0, 3, 2]
    np.testing.assert_array_equal(standin._batch([0, 1, 2, 3])["rews"], [6.0, 5.0, 8.0, 7.0])
    ring = ReplayBuffer(obs_dim=1, size=4, batch_size=2, memory=solutions.CircularMemory)
    assert [ring.store([t], 0, float(t), [t], False) for t in range(6)] == [0, 1, 2, 3, 0, 1]
    np.testing.assert_array_equal(ring._batch([0, 1, 2])["rews"], [4.0, 5.0, 2.0])


def test_the_stand_in_memory_fails_the_memory_exercise():
    from verdicts import graded

    from course_utils.checking import passes
    from course_utils.replay.checks import ADD, check_memory_add

    with pytest.raises(ReplayMemoryError, match="one transition at a time"):
        FillingMemory(4, 2, 2).add({"reward": np.zeros(2)})
    assert not passes(check_memory_add, FillingMemory)
    assert graded(ADD, FillingMemory)[0] is False


def test_the_stand_in_memory_reads_its_slots_from_a_log_in_its_own_order():
    """Which transition a slot holds is worked out from the number written (``held_transitions``),
    and agrees with the order ``store`` reports (``overwrite_slot``)."""
    from course_utils.replay.standin_memory import held_transitions, overwrite_slot

    for capacity in range(1, 9):
        for written in range(3 * capacity + 2):
            held = [0] * min(written, capacity)
            for t in range(written):
                held[overwrite_slot(t, capacity)] = t
            assert held_transitions(written, capacity).tolist() == held, (capacity, written)


def test_the_stand_in_memory_has_nothing_a_ring_is_made_of():
    """No slot tensors, size or pointer it advances, and no ``CircularReplayMemory`` (whose
    ``prepare`` would allocate the slot tensors): a copy of it leaves the ring to be written."""
    from course_utils.replay.memory import CircularReplayMemory

    memory = FillingMemory(4, 2, 2)
    for t in range(6):
        memory.add({"reward": torch.tensor([float(t)]), "state": torch.full((1, 2), float(t))})
    assert not issubclass(FillingMemory, CircularReplayMemory)
    assert set(vars(memory)) == {"capacity", "_log"}
    assert len(memory) == 4 and memory.pointer == 0
    assert memory[torch.tensor([0, 1, 2, 3])]["reward"].tolist() == [0.0, 5.0, 4.0, 3.0]
    assert memory[1]["state"].shape == (1, 2) and memory[1:3]["reward"].tolist() == [5.0, 4.0]


class _RedTeamRing(CircularReplayMemory):
    """The red team's drop-in for Exercise 1 (their cell carried the stand-in's source): one
    transition at a time through the stand-in's ``add``, then the pointer bent back into a ring."""

    def add(self, batch):
        batch, n = self.prepare(batch)
        for i in range(n):
            FillingMemory.add(self, {k: v[i:i + 1] for k, v in batch.items()})
            self.pointer = self.written % self.capacity
        return self


def test_the_red_team_s_drop_in_built_on_the_stand_in_memory_scores_nothing():
    from verdicts import graded

    from course_utils.replay.checks import ADD

    assert graded(ADD, _RedTeamRing)[0] is False


class _PriorityAtTheLastHeld(solutions.PrioritizedReplayBuffer):
    """Sets a new transition's priority at len(self) - 1, the slot store took only while the memory fills."""

    def store(self, obs, act, rew, next_obs, done):
        index = solutions.ReplayBuffer.store(self, obs, act, rew, next_obs, done)
        self.sum_tree[len(self) - 1] = self.max_priority**self.alpha
        self.min_tree[len(self) - 1] = self.max_priority**self.alpha
        return index


def _on_standins(buffer_class):
    """``buffer_class`` built as the buffer's hidden test builds the student's: on the stand-in trees and memory."""
    from course_utils.replay.standin_trees import SlowMinTree, SlowSumTree

    class OnStandIns(buffer_class):
        def __init__(self, obs_dim, size, batch_size=32, alpha=0.6):
            super().__init__(obs_dim, size, batch_size, alpha)
            self.memory = FillingMemory(size, batch_size, batch_size)
            self.sum_tree, self.min_tree = SlowSumTree(self.sum_tree.capacity), SlowMinTree(self.min_tree.capacity)

    return OnStandIns


def test_a_buffer_that_sets_the_priority_at_len_minus_one_scores_nothing_on_the_stand_ins():
    from verdicts import graded, not_yet

    from course_utils.replay.checks_buffer import BUFFER, check_prioritized_buffer

    assert graded(BUFFER, _on_standins(solutions.PrioritizedReplayBuffer))[0] is True
    passed, message = graded(BUFFER, _on_standins(_PriorityAtTheLastHeld))
    assert passed is False
    assert "not to len(self) - 1 (5 once full)" in message and "into slots [4, 3, 2]" in message
    assert "not to len(self) - 1" in not_yet(check_prioritized_buffer, _PriorityAtTheLastHeld)  # on the student's ring


def test_the_buffer_s_hidden_parts_overwrite_the_stand_in_memory():
    from course_utils.replay.checks_buffer import BUFFER

    hidden = BUFFER.cases_for(True)
    assert hidden["uniform"]["stored"] == 9 and hidden["frequencies"]["stored"] == 7
    assert hidden["overwrite"]["more"] >= 1


def test_the_typical_wrong_buffers_still_fail_on_the_stand_ins():
    from verdicts import graded

    from course_utils.replay.checks_buffer import BUFFER
    from replay.test_per import WRONG_BUFFERS

    for wrong, _ in WRONG_BUFFERS:
        assert graded(BUFFER, _on_standins(wrong))[0] is False, wrong.__name__
