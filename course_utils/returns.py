"""Discounted returns: the one recurrence behind every return, advantage and q-value in the course.

Tutorial 1's A2C (one agent, and a whole generation at once), tutorial 2's A2C with replay and
the checks of both compute it here; the exercises that ask students to write it (tutorial 2's
``discounted_returns``, tutorial 3's ``Episode.calc_qvals``) are checked against it. Its discount
is keyword-only, which also keeps it from being handed in as the answer to tutorial 2's
exercise (whose function takes ``(rewards, gamma)``).
"""

from __future__ import annotations

import numpy as np


def discounted_returns(rewards, *, gamma) -> np.ndarray:
    """Q_t = r_t + gamma * Q_{t+1}, with Q_T = 0, along the last axis: Q_t = sum_k gamma^k r_{t+k}.

    rewards: array-like (..., T): one row of T rewards, or a batch of rows. Lists, tensors and
        integer arrays are computed in float64; a float32 array stays float32 (and so does the sum).
    gamma: the discount, a float or an array (...,) with one discount per row; always named
        (``gamma=0.9``), so a swapped pair of arguments fails at once.
    Returns an array (..., T) of the rewards' float dtype.

    Computed backwards, one step per time step, for all rows at once::

        >>> discounted_returns([1.0, 1.0, 1.0], gamma=0.5)
        array([1.75, 1.5 , 1.  ])
    """
    rewards = np.asarray(rewards)
    if not np.issubdtype(rewards.dtype, np.floating):
        rewards = rewards.astype(np.float64)
    gamma = np.asarray(gamma, dtype=rewards.dtype)
    returns = np.empty_like(rewards)
    running = np.zeros(rewards.shape[:-1], dtype=rewards.dtype)
    for t in range(rewards.shape[-1] - 1, -1, -1):
        running = rewards[..., t] + gamma * running
        returns[..., t] = running
    return returns
