"""Tutorial 3's exercise 5, the score-function estimator on a softmax bandit: the check accepts right
answers (autograd or by hand), names each typical mistake, agrees with the grader, and its oracle
and report say what is true."""

import numpy as np
import pytest
import torch
from verdicts import graded, not_yet

from course_admin.grading import judging
from course_admin.lunar import bandit_oracle as oracle
from course_admin.lunar.solutions import score_function_gradient
from course_utils import checking, records
from course_utils.lunar.checks import bandit_judge as bj
from course_utils.lunar.checks.bandit import draw
from course_utils.lunar.checks.score_function import EXERCISES, SCORE_FUNCTION, check_score_function

# --------------------------------------------------------------------------------------
# Other right answers, and the typical mistakes


def by_hand(theta, actions, rewards, baseline=0.0):
    """The NumPy route in torch: grad log pi(a) = onehot(a) - pi, no autograd."""
    pi = torch.softmax(theta.detach(), dim=-1)
    onehot = torch.nn.functional.one_hot(actions, len(pi)).float()
    weights = (rewards - baseline).detach()
    return (weights[:, None] * (onehot - pi)).mean(0)


def through_backward(theta, actions, rewards, baseline=0.0):
    """A fresh leaf and .backward(): a baseline computed from theta is not computed from the leaf."""
    leaf = theta.detach().clone().requires_grad_(True)
    log_pi = torch.log_softmax(leaf, dim=-1)[actions]
    ((rewards - baseline) * log_pi).mean().backward()
    return leaf.grad


def _surrogate_gradient(weights, log_pi, theta, reduce=torch.mean):
    (gradient,) = torch.autograd.grad(reduce(weights * log_pi), theta)
    return gradient


def grad_of_pi(theta, actions, rewards, baseline=0.0):
    pi = torch.softmax(theta, dim=-1)[actions]
    return _surrogate_gradient((rewards - baseline).detach(), pi, theta)


def flipped_sign(theta, actions, rewards, baseline=0.0):
    return -score_function_gradient(theta, actions, rewards, baseline)


def baseline_on_log_prob(theta, actions, rewards, baseline=0.0):
    log_pi = torch.log_softmax(theta, dim=-1)[actions]
    (gradient,) = torch.autograd.grad((rewards * (log_pi - torch.as_tensor(baseline).detach())).mean(), theta)
    return gradient


def summed(theta, actions, rewards, baseline=0.0):
    log_pi = torch.log_softmax(theta, dim=-1)[actions]
    return _surrogate_gradient((rewards - baseline).detach(), log_pi, theta, reduce=torch.sum)


def one_hot_missing(theta, actions, rewards, baseline=0.0):
    """log pi(a) = theta_a - logsumexp(theta) with the theta_a term left out."""
    log_pi = -torch.logsumexp(theta, dim=-1).expand(len(actions))
    return _surrogate_gradient((rewards - baseline).detach(), log_pi, theta)


def weight_not_detached(theta, actions, rewards, baseline=0.0):
    log_pi = torch.log_softmax(theta, dim=-1)[actions]
    return _surrogate_gradient(rewards - baseline, log_pi, theta)


def numpy_array(theta, actions, rewards, baseline=0.0):
    return score_function_gradient(theta, actions, rewards, baseline).numpy()


MISTAKES = [
    (grad_of_pi, "differentiated pi(a), not log pi(a)"),
    (flipped_sign, "the sign is flipped"),
    (baseline_on_log_prob, "subtract it from the reward"),
    (summed, "the mean over the samples, not the sum"),
    (one_hot_missing, "one-hot is missing"),
    (weight_not_detached, "let the gradient through"),
]


def _fails(candidate, *words) -> str:
    message = not_yet(check_score_function, candidate)
    for word in words:
        assert word in message, message
    return message


# --------------------------------------------------------------------------------------


def test_each_typical_mistake_gets_its_hint():
    for mistake, hint in MISTAKES:
        _fails(mistake, hint)


@pytest.mark.parametrize("answer", [score_function_gradient, by_hand, through_backward], ids=lambda a: a.__name__)
def test_right_answers_pass_the_check_and_the_grader(answer):
    assert check_score_function(answer)
    passed, message = graded(SCORE_FUNCTION, answer)
    assert passed, message


@pytest.mark.parametrize("mistake, hint", MISTAKES, ids=[m.__name__ for m, _ in MISTAKES])
def test_the_grader_fails_each_mistake_with_the_same_hint(mistake, hint):
    passed, message = graded(SCORE_FUNCTION, mistake)
    assert not passed and hint in message, message


def test_a_biased_estimate_is_named_by_its_distance_from_the_exact_gradient():
    message = _fails(flipped_sign, "not within 3 standard errors", "exact gradient")
    assert "pi_k (mu_k - J)" in message


def test_an_unbiased_estimate_with_another_baseline_is_not_the_estimator():
    def another_baseline(theta, actions, rewards, baseline=0.0):
        return score_function_gradient(theta, actions, rewards, torch.as_tensor(baseline).detach() + 0.05)

    _fails(another_baseline, "not the estimator on these samples")


def test_a_numpy_array_is_not_a_tensor():
    _fails(numpy_array, "should be a torch tensor")


def test_the_check_cell_reports_that_the_baseline_lowers_the_variance(capsys):
    assert check_score_function(score_function_gradient)
    out = capsys.readouterr().out
    assert "all checks passed" in out
    without = float(out.split("without a baseline:")[1].split()[0])
    with_b = float(out.split("with b = 6:")[1].split()[0])
    assert with_b < without / 10 and "the baseline lowers it" in out


def test_the_exact_gradient_is_the_gradient_of_the_expected_reward():
    for case in SCORE_FUNCTION.cases() + SCORE_FUNCTION.cases_for(True):
        theta = torch.tensor(case["theta"], dtype=torch.float64, requires_grad=True)
        performance = (torch.softmax(theta, -1) * torch.tensor(case["mu"], dtype=torch.float64)).sum()
        (gradient,) = torch.autograd.grad(performance, theta)
        assert np.allclose(oracle.exact_gradient(case["theta"], case["mu"]), gradient.numpy())


def test_the_oracles_terms_average_to_the_course_answer_within_three_standard_errors():
    """On every case, public and hidden: the course's answer is the mean of the oracle's terms, and
    lies within 3 standard errors of the exact gradient (the cases' seeds are not unlucky draws)."""
    for hidden in (False, True):
        cases = SCORE_FUNCTION.cases_for(hidden)
        answers = records.load(SCORE_FUNCTION.record(score_function_gradient, hidden=hidden))
        for case, answer in zip(cases, answers, strict=True):
            actions, rewards = draw(case)
            terms = oracle.terms(case["theta"], actions, rewards, oracle.baseline_value(case))
            assert np.allclose(terms.mean(0), answer.double().numpy(), atol=1e-5)
            distance = np.abs(answer.double().numpy() - oracle.exact_gradient(case["theta"], case["mu"]))
            assert np.all(distance <= 3 * oracle.standard_error(terms))


def test_each_mistakes_variant_differs_from_the_right_answer_where_it_is_named():
    for case in SCORE_FUNCTION.cases() + SCORE_FUNCTION.cases_for(True):
        right = oracle.terms(case["theta"], *draw(case), oracle.baseline_value(case)).mean(0)
        for value, hint in oracle.mistakes(case):
            assert not bj.close_arrays(value, right, bj.RTOL, bj._atol(right)), (case["what"], hint)


def test_the_draws_are_the_same_for_the_check_cell_and_the_grader():
    case = SCORE_FUNCTION.cases_for(True)[0]
    first, second = draw(case), draw(case)
    assert np.array_equal(first[0], second[0]) and np.array_equal(first[1], second[1])


def test_it_is_judged_from_records_and_the_hidden_cases_are_not_the_public_ones():
    assert EXERCISES["test_score_function"] is SCORE_FUNCTION
    assert judging.exercise_for("test_score_function") is SCORE_FUNCTION
    assert SCORE_FUNCTION.cases_for(True) != SCORE_FUNCTION.cases()
    hidden, public = judging.reference_record(SCORE_FUNCTION.grade_id), checking.stored_record(SCORE_FUNCTION.grade_id)
    assert records.dump(hidden) != records.dump(public)


def test_the_check_cells_cases_are_judged_from_stored_figures_the_oracle_computes():
    """The student package judges its own cases from ``assets/lunar_expected.json`` (it has no
    estimator to compute them with); the figures stored are the oracle's."""
    stored = {entry["key"]: entry for entry in bj.load_expected()["score_function"]}
    for case in SCORE_FUNCTION.cases():
        fresh = oracle.figures(case)
        mine = stored[bj.case_key(case)]
        assert np.allclose(mine["exact"], fresh["exact"]) and np.allclose(mine["margin"], fresh["margin"])
        assert [hint for _, hint in mine["mistakes"]] == [hint for _, hint in fresh["mistakes"]]
    assert bj.case_key(SCORE_FUNCTION.cases_for(True)[0]) not in stored  # hidden cases: the grader's oracle
