"""The one discounted-return helper every tutorial uses."""

import numpy as np
import pytest

from course_utils.returns import discounted_returns


def test_returns_by_hand():
    assert discounted_returns([1.0, 1.0, 1.0], gamma=0.5).tolist() == [1.75, 1.5, 1.0]
    assert discounted_returns([0.0, 0.0, 2.0], gamma=0.9).tolist() == pytest.approx([1.62, 1.8, 2.0])
    assert discounted_returns([4.0], gamma=0.0).tolist() == [4.0]
    assert discounted_returns([1, 2, 3], gamma=1.0).tolist() == [6.0, 5.0, 3.0]  # integers are summed as floats


def test_rows_are_independent_and_each_has_its_gamma():
    rewards = np.array([[1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [0.0, 0.0, 1.0]], dtype=np.float32)
    gammas = np.array([0.0, 0.5, 0.9])
    out = discounted_returns(rewards, gamma=gammas)
    assert out.dtype == np.float32 and out.shape == (3, 3)
    for row, gamma, expected in zip(out, gammas, rewards, strict=True):
        assert row.tolist() == pytest.approx(discounted_returns(expected.astype(np.float64), gamma=gamma).tolist())
    assert out[0].tolist() == [1.0, 1.0, 1.0] and out[1].tolist() == [1.75, 1.5, 1.0]


def test_float64_by_default_and_the_input_is_not_changed():
    rewards = [0.1] * 50
    out = discounted_returns(rewards, gamma=0.99)
    assert out.dtype == np.float64 and rewards == [0.1] * 50
    assert out[0] == pytest.approx(0.1 * (1 - 0.99**50) / (1 - 0.99))  # a geometric series


def test_empty_rewards_give_empty_returns():
    assert discounted_returns(np.zeros(0), gamma=0.9).shape == (0,)


def test_the_discount_must_be_named():
    with pytest.raises(TypeError):
        discounted_returns([1.0, 2.0], 0.9)
