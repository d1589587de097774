"""The optional exercises' checks (``lunar.optional``, on the cases and answers
``course_admin.lunar.optional_reference`` stores): the notebook's solutions pass, each typical
mistake gets its named hint, and an unanswered exercise prints a message and never raises (so
"Run all" goes on: nothing later needs these exercises)."""

import numpy as np
import pytest

from course_admin.lunar import optional_reference as reference
from course_admin.lunar.solutions import bootstrapped_qvals, gae
from course_utils.lunar import optional


def test_the_notebooks_solutions_pass(capsys):
    assert optional.check_bootstrapped_qvals(bootstrapped_qvals) is True
    assert optional.check_gae(gae) is True
    assert capsys.readouterr().out.count("all checks passed") == 2


def test_the_references_agree_with_the_definitions():
    # bootstrapped: q_t = sum_k gamma^k r_t+k + gamma^(T-t) v
    assert reference.bootstrapped_reference([1.0, 2.0], 0.5, True, 4.0).tolist() == [1 + 0.5 * 2 + 0.25 * 4, 2 + 0.5 * 4]
    assert reference.bootstrapped_reference([1.0, 2.0], 0.5, False, 4.0).tolist() == [2.0, 2.0]
    # GAE with lam = 1 and no ends is the bootstrapped return minus v
    r, v, last = [1.0, 2.0, 3.0], [0.5, -1.0, 2.0], 4.0
    got = reference.gae_reference(r, v, v[1:] + [last], [0.0, 0.0, 0.0], 0.9, 1.0)
    assert got == pytest.approx(reference.bootstrapped_reference(r, 0.9, True, last) - np.array(v))


def test_every_stored_mistake_has_its_hint_and_differs_from_the_answer_somewhere():
    stored = optional.load_expected()["optional"]
    for exercise, hints in (("bootstrap", optional.BOOTSTRAP_HINTS), ("gae", optional.GAE_HINTS)):
        for case in stored[exercise]:
            assert set(case["mistakes"]) == set(hints)
        for name in hints:
            assert any(not np.allclose(case["mistakes"][name], case["expected"]) for case in stored[exercise]), name


def _wrong_bootstrap(kind):
    def answer(rewards, gamma, truncated, last_value):
        start = {"bootstraps_termination": last_value, "never_bootstraps": 0.0}.get(kind, last_value if truncated else 0.0)
        out, running = [], start if kind in ("bootstraps_termination", "never_bootstraps") else 0.0
        for r in reversed(rewards):
            running = r + gamma * running
            out.append(running)
        out = out[::-1]
        if kind == "undiscounted_value" and truncated:
            out = [q + gamma ** (len(rewards) - 1 - t) * last_value for t, q in enumerate(out)]
        if kind == "value_added_everywhere" and truncated:
            out = [q + last_value for q in out]
        return out

    return answer


@pytest.mark.parametrize("kind", optional.BOOTSTRAP_HINTS)
def test_bootstrap_mistakes_get_their_named_hint(kind, capsys):
    assert optional.check_bootstrapped_qvals(_wrong_bootstrap(kind)) is False
    assert optional.BOOTSTRAP_HINTS[kind] in capsys.readouterr().out


def _wrong_gae(kind):
    def answer(rewards, values, next_values, ends, gamma, lam):
        n = len(rewards)
        out, running = [0.0] * n, 0.0
        order = range(n) if kind == "forward_order" else range(n - 1, -1, -1)
        for t in order:
            delta = rewards[t] + gamma * next_values[t] - (0.0 if kind == "wrong_td_error" else values[t])
            carry = {"no_episode_mask": gamma * lam, "lambda_ignored": gamma * (1 - ends[t])}.get(
                kind, gamma * lam * (1 - ends[t]))
            running = delta + carry * running
            out[t] = running
        return out

    return answer


@pytest.mark.parametrize("kind", optional.GAE_HINTS)
def test_gae_mistakes_get_their_named_hint(kind, capsys):
    assert optional.check_gae(_wrong_gae(kind)) is False
    assert optional.GAE_HINTS[kind] in capsys.readouterr().out


def test_unanswered_exercises_print_and_return_false(capsys):
    def unanswered(*args):
        raise NotImplementedError()

    assert optional.check_bootstrapped_qvals(unanswered) is False
    assert optional.check_gae(unanswered) is False
    assert capsys.readouterr().out.count("not implemented yet") == 2


def test_wrong_lengths_are_named(capsys):
    assert optional.check_gae(lambda *args: [0.0]) is False
    assert optional.check_bootstrapped_qvals(lambda *args: [0.0]) is False
    assert capsys.readouterr().out.count("one per step") == 2
