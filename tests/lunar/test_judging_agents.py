"""Tutorial 3's exercises 1-4, judged from records: the check cell and the grader give the same
verdict, the hidden cases are not the public ones, and an answer tuned to the public cases
passes the check cell but not the grader."""

from __future__ import annotations

import pytest
import torch
from verdicts import graded

from course_admin.grading import judging
from course_admin.lunar.solutions import (
    Episode,
    PolicyAgent,
    PolicyNet,
    TrainBatch,
)
from course_utils import checking, records
from course_utils.lunar.checks import agents, episodes, qvals
from course_utils.lunar.checks.agents import AGENT_DISTRIBUTION, AGENT_STEP, POLICY_NET
from course_utils.lunar.checks.episodes import FROM_EPISODES
from course_utils.lunar.checks.qvals import CALC_QVALS
from course_utils.lunar.expected import StoredEpisode

from .mistakes import (
    ArgmaxAgent,
    ForwardQvals,
    NextStateAgent,
    ReversedQvals,
    SoftmaxNet,
    UndiscountedQvals,
    UnnormalisedAgent,
)

AGENT_EXERCISES = {**agents.EXERCISES, **qvals.EXERCISES, **episodes.EXERCISES}
"""Exercises 1-4."""

# --------------------------------------------------------------------------------------
# Wrong answers (those of the hint tests in test_checks.py, and a few more)


class NotImplementedQvals(Episode):
    def calc_qvals(self, gamma):
        raise NotImplementedError()


class NoGamma(TrainBatch):
    @classmethod
    def from_episodes(cls, episodes, gamma=0.99):
        return super().from_episodes(episodes, 1.0)


class DefaultGamma(TrainBatch):
    @classmethod
    def from_episodes(cls, episodes, gamma=0.99):
        return super().from_episodes(episodes, 0.99)


class FloatActions(TrainBatch):
    @classmethod
    def from_episodes(cls, episodes, gamma=0.99):
        batch = super().from_episodes(episodes, gamma)
        batch.actions = batch.actions.float()
        return batch


class FixedSizeNet(PolicyNet):
    """Sized for LunarLander whatever the environment."""

    @classmethod
    def build_for_env(cls, env, **hp):
        return cls(8, 4)


CORPUS = [
    (POLICY_NET, PolicyNet, True),
    (POLICY_NET, SoftmaxNet, False),
    (POLICY_NET, FixedSizeNet, False),
    (AGENT_DISTRIBUTION, PolicyAgent, True),
    (AGENT_DISTRIBUTION, UnnormalisedAgent, False),
    (AGENT_STEP, PolicyAgent, True),
    (AGENT_STEP, ArgmaxAgent, False),
    (AGENT_STEP, NextStateAgent, False),
    (CALC_QVALS, Episode, True),
    (CALC_QVALS, ReversedQvals, False),
    (CALC_QVALS, UndiscountedQvals, False),
    (CALC_QVALS, ForwardQvals, False),
    (CALC_QVALS, NotImplementedQvals, False),
    (CALC_QVALS, StoredEpisode, False),
    (CALC_QVALS, Episode.__base__, False),
    (FROM_EPISODES, TrainBatch, True),
    (FROM_EPISODES, NoGamma, False),
    (FROM_EPISODES, DefaultGamma, False),
    (FROM_EPISODES, FloatActions, False),
]


@pytest.mark.parametrize(
    "exercise, answer, right", CORPUS, ids=[f"{e.grade_id}-{getattr(a, '__name__', a)}"[:60] for e, a, _ in CORPUS]
)
def test_the_check_cell_and_the_grader_give_the_same_verdict(exercise, answer, right):
    assert checking.passes(exercise.check, answer) is right
    passed, message = graded(exercise, answer)
    assert passed is right, message


def test_every_exercise_is_judged_from_records():
    assert set(AGENT_EXERCISES) == {
        "test_policy_net", "test_agent_distribution", "test_agent_step", "test_calc_qvals", "test_from_episodes",
    }  # fmt: skip
    for grade_id, exercise in AGENT_EXERCISES.items():
        assert judging.exercise_for(grade_id) is exercise


@pytest.mark.parametrize("exercise", list(AGENT_EXERCISES.values()), ids=lambda e: e.grade_id)
def test_hidden_cases_are_not_the_public_ones(exercise):
    assert exercise.cases_for(True) != exercise.cases()
    hidden, public = judging.reference_record(exercise.grade_id), checking.stored_record(exercise.grade_id)
    assert records.dump(hidden) != records.dump(public)  # as text: records hold tensors


def test_an_episode_tuned_to_the_public_cases_passes_the_check_but_not_the_grader():
    public = {
        tuple(rewards): qvals
        for (rewards, _, _), qvals in zip(CALC_QVALS.cases(), checking.stored_record(CALC_QVALS.grade_id), strict=True)
    }

    class Tuned(Episode):
        def calc_qvals(self, gamma):
            return public.get(tuple(e.reward for e in self.experiences), [0.0] * len(self.experiences))

    assert checking.passes(CALC_QVALS.check, Tuned)
    passed, message = graded(CALC_QVALS, Tuned)
    assert not passed and "expected" in message


def test_a_batch_tuned_to_the_public_cases_passes_the_check_but_not_the_grader():
    stored = checking.stored_record(FROM_EPISODES.grade_id)[0]

    class Tuned(TrainBatch):
        @classmethod
        def from_episodes(cls, episodes, gamma=0.99):
            return cls(*(stored[name].clone() for name in ("states", "actions", "q_vals", "total_rewards")))

    assert checking.passes(FROM_EPISODES.check, Tuned)
    passed, message = graded(FROM_EPISODES, Tuned)
    assert not passed and "should have shape" in message


def test_hidden_cases_catch_sizes_the_public_ones_do_not():
    """A net that is right for the public sizes only."""

    class PublicSizes(PolicyNet):
        @classmethod
        def build_for_env(cls, env, **hp):
            n_obs = env.observation_space.shape[0]
            return cls(n_obs, 4 if n_obs == 8 else 2, **hp)

    assert checking.passes(POLICY_NET.check, PublicSizes)
    passed, message = graded(POLICY_NET, PublicSizes)
    assert not passed and "should have shape" in message


def test_the_aac_agent_check_judges_the_action_scores_of_a_pair_network():
    """Exercise 8's agent is judged by the same probabilities check as exercise 2's, on a network that
    returns (scores, values): the actor-critic's agent passes, exercise 2's plain agent does not."""
    from course_admin.lunar.solutions import AACPolicyAgent
    from course_utils.lunar.checks.aac_checks import AAC_AGENT, check_aac_agent

    assert AAC_AGENT.grade_id == "test_aac_agent" and AAC_AGENT.reference == ("AACPolicyAgent",)
    assert check_aac_agent(AACPolicyAgent)
    assert not checking.passes(check_aac_agent, PolicyAgent)


def test_a_step_record_holds_raw_values_not_verdicts():
    """What drive writes for one step: the Experience's fields as the student's code returned them."""
    record = records.load(AGENT_STEP.record(PolicyAgent, hidden=False))
    step = record["episodes"][0]["steps"][0]
    assert set(step) == {"state", "action", "reward", "is_done"}
    assert isinstance(step["state"], torch.Tensor) and step["state"].shape == (8,)
