"""Exercise check of tutorial 3, exercise 3: ``Episode.calc_qvals``, as an ``Exercise`` (drive on
cases, judge the record; see ``course_utils.checking``), and its ``check_calc_qvals``.

A module of its own that imports no discounted-return code: the grader's child that drives this
exercise loads it alone, and can read no module that computes what the exercise asks
(``course_utils.twins``). The expected q-values come from the reference solution
(``Exercise.reference``) and, for the check cell's stored case, ``assets/lunar_expected.json``.
"""

from __future__ import annotations

import numpy as np

from course_utils.check_helpers import method, shown
from course_utils.checking import Exercise, Problem, attempt, fmt, raise_if_error
from course_utils.lunar.expected import load_expected
from course_utils.lunar.harness import Experience
from course_utils.records import Opaque

# ---------------------------------------------------------------------------------------------
# 3. Episode.calc_qvals


def _qvals_cases() -> list[tuple[list[float], float, str]]:
    """(rewards, gamma, description) of each episode."""
    stored = load_expected()["calc_qvals"]
    return [
        ([0.0, 0.0, 10.0], 0.9, "rewards [0, 0, 10] with gamma 0.9"),
        ([1.0, 1.0, 1.0], 0.5, "rewards [1, 1, 1] with gamma 0.5"),
        ([-3.0], 0.99, "a one-step episode"),
        (list(stored["rewards"]), stored["gamma"], "100 stored random rewards, gamma 0.9"),
    ]


def _drive_qvals(cases, Episode) -> list:
    out = []
    for rewards, gamma, _ in cases:
        experiences = [Experience(None, None, float(r), i == len(rewards) - 1) for i, r in enumerate(rewards)]
        episode = attempt("Episode(total_reward, experiences)", Episode, float(sum(rewards)), experiences)
        out.append(method(f"calc_qvals({gamma})", episode, "calc_qvals", gamma))
    return out


def _follows(got: np.ndarray, rewards: np.ndarray, gamma: float, backwards: bool) -> bool:
    """Whether the student's values ``got`` (T,) obey ``q_t = r_t + gamma * q_(t+1)`` (``backwards``,
    with q after the end 0) or ``q_t = r_t + gamma * q_(t-1)`` (with q before the start 0), step
    by step on their own values: a test of the recurrence, which computes no q-values itself."""
    if backwards:
        got, rewards = got[::-1], rewards[::-1]
    if got.shape != rewards.shape or not got.size:
        return False
    return bool(np.isclose(got[0], rewards[0], atol=1e-3) and np.allclose(got[1:] - gamma * got[:-1], rewards[1:], atol=1e-3))


def _qvals_hint(got: np.ndarray, expected: np.ndarray, rewards: list[float], gamma: float) -> str:
    # Each typical mistake is recognised by the recurrence the student's values obey, not by
    # computing what it gives: discounting the past, run on the reversed rewards, is the
    # reward-to-go, and the check module must hold no code a copy could turn into the answer.
    rewards = np.asarray(rewards, dtype=float)
    if np.allclose(got[::-1], expected, atol=1e-3):
        return "your q-values are in reverse order: q_0 belongs to the first step."
    if _follows(got, rewards, gamma, backwards=False):
        return "you discounted the past rewards; q_t adds the rewards from step t to the END of the episode."
    if _follows(got, rewards, 1.0, backwards=True):
        return "you forgot the discount: q_t = r_t + gamma * q_(t+1)."
    if np.allclose(got, expected - rewards, atol=1e-3) or np.allclose(got, gamma * expected, atol=1e-3):
        return "the reward of step t itself counts without discount: q_t = r_t + gamma * q_(t+1)."
    return "work backwards from the last step: q_t = r_t + gamma * q_(t+1), with q after the end = 0."


def _judge_qvals(got, expected, cases) -> None:
    for (rewards, gamma, description), mine, reference in zip(cases, got, expected, strict=True):
        raise_if_error(mine)
        try:
            if isinstance(mine, Opaque | str | dict):
                raise TypeError
            values = np.asarray([float(q) for q in mine])
        except (TypeError, ValueError):
            raise Problem(f"calc_qvals should return a list of numbers, got {shown(mine)}.") from None
        want = np.asarray(reference, dtype=float)
        if values.shape != want.shape:
            raise Problem(f"for {description}, expected {len(want)} q-values (one per step), got {values.size}.")
        if not np.allclose(values, want, atol=1e-3, rtol=1e-5):
            hint = _qvals_hint(values, want, rewards, gamma)
            raise Problem(f"for {description}: expected {fmt(want)}, got {fmt(values)}. Hint: {hint}")


CALC_QVALS = Exercise(
    name="Episode.calc_qvals",
    grade_id="test_calc_qvals",
    cases=_qvals_cases,
    drive=_drive_qvals,
    judge=_judge_qvals,
    reference=("Episode",),
    one_per_case="cases",
)


def check_calc_qvals(Episode) -> bool:  # noqa: N803 (the exercise's class name)
    """``Episode(total_reward, experiences).calc_qvals(gamma)`` -> discounted reward-to-go, one per step."""
    return CALC_QVALS.check(Episode)


EXERCISES = {CALC_QVALS.grade_id: CALC_QVALS}
"""This module's exercise by the grade id of its hidden-test cell."""
