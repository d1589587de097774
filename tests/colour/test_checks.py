"""The exercise checks: right answers pass, wrong ones get a specific, friendly message."""

import numpy as np
import pytest

from course_utils import checking
from course_utils.colour import solutions
from course_utils.colour.checks import check_discounted_returns, check_replay_memory


def good_returns(rewards, gamma):
    return solutions.discounted_returns(rewards, gamma)


def test_correct_answers_pass(capsys):
    assert check_discounted_returns(good_returns)
    assert check_replay_memory(solutions.ReplayMemory)
    assert capsys.readouterr().out.count("✅") == 2
    assert check_discounted_returns(good_returns, strict=True)


def test_not_implemented_gets_a_prompt_not_a_traceback(capsys):
    def stub(rewards, gamma):
        raise NotImplementedError()

    assert not check_discounted_returns(stub)
    out = capsys.readouterr().out
    assert "not implemented yet" in out and "NotImplementedError" in out


def test_strict_mode_raises_assertion_with_the_same_message():
    with pytest.raises(AssertionError, match="expected .* got"):
        check_discounted_returns(lambda rewards, gamma: np.asarray(rewards), strict=True)


WRONG_RETURNS = [
    (lambda r, g: np.cumsum(np.asarray(r)[::-1] * 1.0)[::-1] * 0 + 1, "work backwards"),
    (lambda r, g: solutions.discounted_returns(r, g)[::-1], "reverse order"),
    (lambda r, g: solutions.discounted_returns(r, g)[:-1], "one return per trial"),
    (lambda r, g: "nope", "expected numbers"),
]


@pytest.mark.parametrize("wrong, hint", WRONG_RETURNS)
def test_wrong_returns_get_a_hint(capsys, wrong, hint):
    assert not check_discounted_returns(wrong)
    assert hint in capsys.readouterr().out


def test_mutating_the_rewards_is_reported(capsys):
    def mutating(rewards, gamma):
        out = solutions.discounted_returns(rewards, gamma)
        rewards[:] = 0
        return out

    assert not check_discounted_returns(mutating)
    assert "changed the rewards" in capsys.readouterr().out


def test_infinite_loop_is_stopped_and_explained(capsys, monkeypatch):
    monkeypatch.setattr(checking, "TIME_LIMIT", 0.3)

    def forever(rewards, gamma):
        while True:
            pass

    assert not check_discounted_returns(forever)
    assert "did not finish within 0.3 s" in capsys.readouterr().out


def test_student_error_names_the_line(capsys):
    def broken(rewards, gamma):
        return rewards[len(rewards)]

    assert not check_discounted_returns(broken)
    out = capsys.readouterr().out
    assert "IndexError" in out and "rewards[len(rewards)]" in out


class NoWrap(solutions.ReplayMemory):
    def write(self, experience):
        self.slots[min(self.write_pointer, self.capacity - 1)] = experience
        self.write_pointer += 1
        self.n_written += 1


class ReadsNewest(solutions.ReplayMemory):
    def read(self):
        return self.slots[(self.write_pointer - 1) % self.capacity]


class ReadWrapsAtCapacity(solutions.ReplayMemory):
    def read(self):
        experience = self.slots[self.read_pointer]
        self.read_pointer = (self.read_pointer + 1) % self.capacity
        return experience


class LoopsForever(solutions.ReplayMemory):
    def read(self):
        while self.slots[self.read_pointer] is not None:
            pass


WRONG_MEMORIES = [
    (NoWrap, "wraps to 0"),
    (ReadsNewest, "reads go round the slots in order"),
    (ReadWrapsAtCapacity, "after the last filled slot"),
    (LoopsForever, "did not finish"),
]


@pytest.mark.parametrize("memory, hint", WRONG_MEMORIES)
def test_replay_memory_mistakes_get_hints(capsys, monkeypatch, memory, hint):
    monkeypatch.setattr(checking, "TIME_LIMIT", 0.3)
    assert not check_replay_memory(memory)
    assert hint in capsys.readouterr().out
