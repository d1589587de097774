"""Exercise check of tutorial 3, exercise 5: the score-function estimator of the policy gradient on
a softmax bandit (``score_function_gradient``), as an ``Exercise`` (drive on cases, judge the
record; see ``course_utils.checking``).

The bandit: K actions, the policy ``pi = softmax(theta)``, and action k pays a reward with mean
``mu_k`` (plus Gaussian noise of standard deviation ``noise``). Its performance is
``J(theta) = E_{a ~ pi}[r(a)] = sum_k pi_k mu_k``, whose exact gradient is
``dJ/dtheta_k = pi_k (mu_k - J)``. Each case draws ``samples`` actions from ``pi`` and their
rewards with its own seed (``draw``: the same numbers in the student's kernel, in the grader's
child and in the grader), and hands them to the answer with a baseline ``b``: a number, or
``"value"``, the policy's own expected reward ``J`` computed from ``theta`` with its gradient
attached (as an actor-critic's value is), so a weight ``r - b`` that is not detached lets the
gradient through.

The judge (``bandit_judge``, imported only when judging: it computes what the exercise asks, so
the grader's child that drives the answer cannot read it) checks that the estimate is within
three standard errors of the exact gradient, then that it is the estimator on these samples, and
names the typical mistake otherwise. After a passing check cell, ``check_score_function`` prints
what the estimate and the baseline did (``bandit_judge.report``, the student's function run on
more batches).

Shapes: ``K`` actions, ``S`` samples; tensors are float32 (actions: long).
"""

from __future__ import annotations

from course_utils.checking import Exercise
from course_utils.lunar.checks.bandit import _score_cases, call


def _drive(cases, score_function_gradient) -> list:
    return [call(score_function_gradient, case) for case in cases]


def _judge(got, expected, cases) -> None:
    from course_utils.lunar.checks.bandit_judge import judge  # the judge's oracle: never in the grader's drive

    judge(got, expected, cases)


SCORE_FUNCTION = Exercise(
    name="score_function_gradient",
    grade_id="test_score_function",
    cases=_score_cases,
    drive=_drive,
    judge=_judge,
    reference=("score_function_gradient",),
    one_per_case="cases",
)


def check_score_function(score_function_gradient) -> bool:
    """``score_function_gradient(theta, actions, rewards, baseline)`` -> the mean over samples of
    ``(r - b) * grad log pi(a)``, (K,), on softmax bandits; after a pass, what the estimate and a
    baseline did on the check's bandit (printed)."""
    passed = SCORE_FUNCTION.check(score_function_gradient)
    if passed:
        from course_utils.checking import Problem
        from course_utils.lunar.checks.bandit_judge import report

        try:
            print(report(score_function_gradient))
        except Problem as problem:  # passed the check's cases, failed on the report's small batches
            print(f"The report on more batches stopped: {problem}")
    return passed


EXERCISES = {SCORE_FUNCTION.grade_id: SCORE_FUNCTION}
"""This module's exercise by the grade id of its hidden-test cell."""
