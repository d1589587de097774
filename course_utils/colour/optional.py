"""Tutorial 2's optional, ungraded exercise: the discounted returns.

Tutorial 3 grades the same recursion (``calc_qvals``), so here a student may write it for
practice and check it, but it carries no marks and nothing later in the notebook uses it (the
agents' training step computes its returns itself). The check runs the student's function on a
few cases, compares it with the returns the course stored for them (``colour.expected``, written
at release time), and when it differs says what is wrong (reversed, one return short, the rewards
changed in place, not numbers), with the same ``verdict`` as the graded checks (a message, True or False; never an exception that
stops "Run all").

Shapes: ``T`` trials of one gradient step.
"""

from __future__ import annotations

import numpy as np

from course_utils.check_helpers import numbers
from course_utils.checking import Problem, call_student, fmt, verdict
from course_utils.colour.expected import load_expected


def _cases() -> list[tuple[list[float], float, str, np.ndarray]]:
    """(rewards, gamma, description, expected returns) for each call, as stored."""
    return [(case["rewards"], case["gamma"], case["what"], np.asarray(case["returns"], dtype=float))
            for case in load_expected()["discounted_returns"]]


def check_discounted_returns(discounted_returns) -> bool:
    """Check ``discounted_returns(rewards, gamma)`` -> returns of shape (T,), Q_t = r_t + gamma Q_(t+1):
    prints a verdict (with a hint when a typical mistake fits) and returns whether it passed."""

    def check():
        for rewards, gamma, description, want in _cases():
            given = np.array(rewards)
            got = call_student("discounted_returns", discounted_returns, given, gamma)
            if not np.array_equal(given, np.array(rewards)):
                raise Problem("your function changed the rewards it was given; build a new array instead.")
            values = numbers(got, f"for {description}").reshape(-1)
            if values.shape != want.shape:
                raise Problem(f"for {description} (T = {len(rewards)}), expected {len(want)} returns, got "
                              f"{values.size}. Hint: there is one return per trial.")
            if not np.allclose(values, want, rtol=1e-5, atol=1e-6):
                hint = ("Hint: your returns are in reverse order." if np.allclose(values[::-1], want, rtol=1e-5, atol=1e-6)
                        else "Hint: work backwards from the last trial, Q_t = r_t + gamma * Q_(t+1).")
                raise Problem(f"for {description}: rewards {fmt(rewards)}, gamma {gamma}: expected {fmt(want)}, "
                              f"got {fmt(values)}. {hint}")

    return verdict("discounted_returns (optional)", check)
