"""Tutorial 2's optional, ungraded exercise: the discounted returns.

Tutorial 3 grades the same recursion (``calc_qvals``), so here a student may write it for
practice and check it, but it carries no marks and nothing later in the notebook uses it: the
agents train with the course's ``course_utils.returns.discounted_returns``. The check runs the
student's function on a few cases, compares it with the course's function, and when it differs
says what is wrong (reversed, one return short, the rewards changed in place, not numbers), with
the same ``verdict`` as the graded checks (a message, True or False; never an exception that
stops "Run all").

Shapes: ``T`` trials of one gradient step.
"""

from __future__ import annotations

import numpy as np

from course_utils.check_helpers import numbers
from course_utils.checking import Problem, call_student, fmt, verdict
from course_utils.returns import discounted_returns as course_returns


def _cases() -> list[tuple[list[float], float, str]]:
    """(rewards, gamma, description) for each call."""
    rng = np.random.default_rng(2)
    return [
        ([1.0, 1.0, 1.0], 0.5, "three rewards of 1 with gamma 0.5"),
        ([0.0, 0.0, 1.0], 0.9, "a single reward at the end"),
        ([2.0], 0.91, "a single trial"),
        ([0.25, 0.5, 0.75, 1.0], 0.0, "gamma 0: each return is its own reward"),
        ([0.25, 0.5, 0.75, 1.0], 1.0, "gamma 1: each return is the sum of what is left"),
        (list(rng.integers(1, 5, 100) / 4), 0.91, "100 trials like the agent's, gamma 0.91"),
    ]


def check_discounted_returns(discounted_returns) -> bool:
    """Check ``discounted_returns(rewards, gamma)`` -> returns of shape (T,), Q_t = r_t + gamma Q_(t+1):
    prints a verdict (with a hint when a typical mistake fits) and returns whether it passed."""

    def check():
        for rewards, gamma, description in _cases():
            given = np.array(rewards)
            got = call_student("discounted_returns", discounted_returns, given, gamma)
            if not np.array_equal(given, np.array(rewards)):
                raise Problem("your function changed the rewards it was given; build a new array instead.")
            values = numbers(got, f"for {description}").reshape(-1)
            want = course_returns(rewards, gamma=gamma)
            if values.shape != want.shape:
                raise Problem(f"for {description} (T = {len(rewards)}), expected {len(want)} returns, got "
                              f"{values.size}. Hint: there is one return per trial.")
            if not np.allclose(values, want, rtol=1e-5, atol=1e-6):
                hint = ("Hint: your returns are in reverse order." if np.allclose(values[::-1], want, rtol=1e-5, atol=1e-6)
                        else "Hint: work backwards from the last trial, Q_t = r_t + gamma * Q_(t+1).")
                raise Problem(f"for {description}: rewards {fmt(rewards)}, gamma {gamma}: expected {fmt(want)}, "
                              f"got {fmt(values)}. {hint}")

    return verdict("discounted_returns (optional)", check)
