"""The exercise checks: right answers pass, wrong ones get a specific, friendly message."""

import re

import numpy as np
import pytest
import torch
from verdicts import not_yet

from course_admin.colour import solutions
from course_utils import checking, records
from course_utils.colour.checks import ACTOR, check_replay_actor_loss, check_replay_memory
from course_utils.colour.optional import check_discounted_returns


def good_returns(rewards, gamma):
    return solutions.discounted_returns(rewards, gamma)


def test_correct_answers_pass(capsys):
    assert check_discounted_returns(good_returns)
    assert check_replay_memory(solutions.ReplayMemory)
    assert capsys.readouterr().out.count("✅") == 2


def test_not_implemented_gets_a_prompt_not_a_traceback(capsys):
    def stub(rewards, gamma):
        raise NotImplementedError()

    assert not check_discounted_returns(stub)
    out = capsys.readouterr().out
    assert "not implemented yet" in out and "NotImplementedError" in out


def test_a_wrong_answer_gets_a_verdict_with_what_was_expected():
    message = not_yet(check_replay_actor_loss, lambda log_pi, mu, advantage, rho_max: (log_pi * 0.0).mean())
    assert re.search("should be .* got", message)


def test_the_optional_returns_check_says_it_is_optional(capsys):
    assert check_discounted_returns(good_returns)
    assert "discounted_returns (optional): all checks passed" in capsys.readouterr().out


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


# --------------------------------------------------------------------------------------
# The replay actor loss: each typical mistake gets the hint that names it


def _rho(log_pi, mu, rho_max):
    return torch.clamp(log_pi.detach().exp() / mu, max=rho_max)


def rho_not_detached(log_pi, mu, advantage, rho_max):
    return -(torch.clamp(log_pi.exp() / mu, max=rho_max) * log_pi * advantage.detach()).mean()


def mu_over_pi(log_pi, mu, advantage, rho_max):
    return -(torch.clamp(mu / log_pi.detach().exp(), max=rho_max) * log_pi * advantage.detach()).mean()


def no_cap(log_pi, mu, advantage, rho_max):
    return -(log_pi.detach().exp() / mu * log_pi * advantage.detach()).mean()


def cap_on_log_pi(log_pi, mu, advantage, rho_max):
    return -(log_pi.detach().exp() / mu * log_pi.clamp(max=rho_max) * advantage.detach()).mean()


def cap_on_the_log_ratio(log_pi, mu, advantage, rho_max):
    rho = (log_pi.detach() - mu.log()).clamp(max=rho_max).exp()
    return -(rho * log_pi * advantage.detach()).mean()


def advantage_not_detached(log_pi, mu, advantage, rho_max):
    return -(_rho(log_pi, mu, rho_max) * log_pi * advantage).mean()


def sign_flipped(log_pi, mu, advantage, rho_max):
    return (_rho(log_pi, mu, rho_max) * log_pi * advantage.detach()).mean()


def everything_detached(log_pi, mu, advantage, rho_max):
    return -(_rho(log_pi, mu, rho_max) * log_pi.detach() * advantage.detach()).mean()


def per_trial(log_pi, mu, advantage, rho_max):
    return -(_rho(log_pi, mu, rho_max) * log_pi * advantage.detach())


WRONG_ACTOR_LOSSES = [
    (rho_not_detached, "rho is not detached"),
    (mu_over_pi, "the ratio is upside down"),
    (no_cap, "rho is never capped"),
    (cap_on_log_pi, "capping log pi changes nothing"),
    (cap_on_the_log_ratio, "you capped log(pi / mu) at rho_max"),
    (advantage_not_detached, "the advantage is not detached"),
    (sign_flipped, "the sign is flipped"),
    (everything_detached, "your loss has no gradient"),
    (per_trial, "one-number torch tensor"),
]


def test_the_solution_passes_the_replay_actor_loss_check(capsys):
    assert check_replay_actor_loss(solutions.replay_actor_loss)
    assert "all checks passed" in capsys.readouterr().out


@pytest.mark.parametrize("wrong, hint", WRONG_ACTOR_LOSSES, ids=lambda item: getattr(item, "__name__", ""))
def test_replay_actor_loss_mistakes_get_their_hint(capsys, wrong, hint):
    assert not check_replay_actor_loss(wrong)
    out = capsys.readouterr().out
    assert hint in out, out


@pytest.mark.parametrize("wrong", [rho_not_detached, mu_over_pi, no_cap, cap_on_the_log_ratio, advantage_not_detached],
                         ids=lambda fn: fn.__name__)
def test_the_hidden_cases_catch_each_mistake_too(wrong):
    """The grader's cases (hidden) fail every typical mistake the public ones do."""
    expected = records.load(ACTOR.record(solutions.replay_actor_loss, hidden=True))
    with pytest.raises(checking.Problem):
        ACTOR.judge_record(ACTOR.record(wrong, hidden=True), expected, hidden=True)


def test_the_public_cases_are_stored_with_the_oracles_hints_and_the_package_holds_no_oracle():
    """The check cell reads its cases and their hint values from the stored file; the oracle that
    computes them is the instructor's (``course_admin.colour.rho_judge``), not the student's."""
    import importlib.util
    import json

    from course_admin.colour import rho_judge
    from course_utils.colour.checks import HINTS, _actor_cases

    assert _actor_cases() == json.loads(json.dumps(rho_judge.public_cases()))
    assert all({name for name, _ in case["hints"]["wrong_losses"]} == set(HINTS) for case in _actor_cases())
    assert importlib.util.find_spec("course_utils.colour.rho_judge") is None
