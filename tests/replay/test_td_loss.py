"""Exercise 4: the importance-weighted TD loss and the new priorities. The course's answer
passes; each typical mistake gets its own hint; the check cell and the grader agree."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from verdicts import graded

from course_admin.grading import judging
from course_admin.replay import solutions
from course_admin.replay import td_judge as oracle
from course_admin.replay.train import make_memory
from course_utils import checking
from course_utils.replay import dqn
from course_utils.replay.checks_td import TD, build_q_network, check_td_loss


def _parts(q_net, target_net, batch, gamma, mask=True, detach=True):
    q_taken = q_net(batch["obs"]).gather(1, batch["acts"].unsqueeze(1)).squeeze(1)
    next_q = target_net(batch["next_obs"]).max(dim=1).values
    if detach:
        next_q = next_q.detach()
    alive = 1.0 - batch["done"] if mask else 1.0
    return q_taken, batch["rews"] + gamma * alive * next_q


def no_terminal_mask(q_net, target_net, batch, gamma, prior_eps=1e-6):
    q_taken, target = _parts(q_net, target_net, batch, gamma, mask=False)
    loss = (batch["weights"] * F.smooth_l1_loss(q_taken, target, reduction="none")).mean()
    return loss, (target - q_taken).detach().abs() + prior_eps


def weights_not_applied(q_net, target_net, batch, gamma, prior_eps=1e-6):
    q_taken, target = _parts(q_net, target_net, batch, gamma)
    return F.smooth_l1_loss(q_taken, target), (target - q_taken).detach().abs() + prior_eps


def priorities_from_the_loss(q_net, target_net, batch, gamma, prior_eps=1e-6):
    q_taken, target = _parts(q_net, target_net, batch, gamma)
    elementwise = F.smooth_l1_loss(q_taken, target, reduction="none")
    return (batch["weights"] * elementwise).mean(), elementwise.detach() + prior_eps


def target_not_detached(q_net, target_net, batch, gamma, prior_eps=1e-6):
    q_taken, target = _parts(q_net, target_net, batch, gamma, detach=False)
    loss = (batch["weights"] * F.smooth_l1_loss(q_taken, target, reduction="none")).mean()
    return loss, (target - q_taken).detach().abs() + prior_eps


def no_prior_eps(q_net, target_net, batch, gamma, prior_eps=1e-6):
    loss, priorities = solutions.prioritized_td_loss(q_net, target_net, batch, gamma, prior_eps)
    return loss, priorities - prior_eps


def summed(q_net, target_net, batch, gamma, prior_eps=1e-6):
    q_taken, target = _parts(q_net, target_net, batch, gamma)
    loss = (batch["weights"] * F.smooth_l1_loss(q_taken, target, reduction="none")).sum()
    return loss, (target - q_taken).detach().abs() + prior_eps


def squared_error(q_net, target_net, batch, gamma, prior_eps=1e-6):
    q_taken, target = _parts(q_net, target_net, batch, gamma)
    return (batch["weights"] * (target - q_taken) ** 2).mean(), (target - q_taken).detach().abs() + prior_eps


def priorities_not_detached(q_net, target_net, batch, gamma, prior_eps=1e-6):
    loss, _ = solutions.prioritized_td_loss(q_net, target_net, batch, gamma, prior_eps)
    q_taken, target = _parts(q_net, target_net, batch, gamma)
    return loss, (target - q_taken).abs() + prior_eps


def loss_as_a_float(q_net, target_net, batch, gamma, prior_eps=1e-6):
    loss, priorities = solutions.prioritized_td_loss(q_net, target_net, batch, gamma, prior_eps)
    return loss.item(), priorities


def only_the_loss(q_net, target_net, batch, gamma, prior_eps=1e-6):
    return solutions.prioritized_td_loss(q_net, target_net, batch, gamma, prior_eps)[0]


def not_written(q_net, target_net, batch, gamma, prior_eps=1e-6):
    raise NotImplementedError()


WRONG_LOSSES = [
    (no_terminal_mask, "terminal mask is missing"),
    (weights_not_applied, "importance weights are not applied"),
    (priorities_from_the_loss, "not from the element-wise loss"),
    (target_not_detached, "compute the target under torch.no_grad() (or .detach() it)"),
    (no_prior_eps, "add prior_eps"),
    (summed, "the mean over the batch, not the sum"),
    (squared_error, "smooth-L1"),
    (priorities_not_detached, "detach"),
    (loss_as_a_float, "scalar torch tensor"),
    (only_the_loss, "a pair (loss, priorities)"),
    (not_written, "not implemented yet"),
]


def test_the_course_answers_pass():
    assert check_td_loss(solutions.prioritized_td_loss)


@pytest.mark.parametrize("wrong, hint", WRONG_LOSSES, ids=[w.__name__ for w, _ in WRONG_LOSSES])
def test_each_typical_mistake_gets_its_hint(wrong, hint, capsys):
    assert not check_td_loss(wrong)
    assert hint in capsys.readouterr().out


def test_the_cases_cover_terminal_steps_small_and_large_errors_and_a_shared_network():
    for hidden in (False, True):
        cases = TD.cases_for(hidden)
        assert any(case["same_net"] for case in cases)
        for case in cases:
            delta = np.array(oracle.variants(case)["delta"])
            assert 0 < sum(case["done"]) < len(case["done"])
            assert (abs(delta) < 1).any() and (abs(delta) > 1).any()
    # without the mask the terminal targets change, so the mistake is visible in every case
    assert all((np.array(oracle.variants(c)["unmasked_delta"]) != np.array(oracle.variants(c)["delta"])).any()
               for c in TD.cases_for(True))
    # some hidden Q-networks have a hidden layer, one of them shared with its target
    assert any("hidden" in c["q"] and c["same_net"] for c in TD.cases_for(True))


def test_the_oracle_gives_the_gradient_through_the_target_the_network_would_get():
    for case in [c for c in TD.cases_for(True) if c["same_net"]]:
        q_net = build_q_network(case["q"])
        batch = {k: torch.tensor(case[k], dtype=torch.int64 if k == "acts" else torch.float32)
                 for k in ("obs", "acts", "rews", "next_obs", "done", "weights")}
        loss, _ = target_not_detached(q_net, q_net, batch, case["gamma"], case["prior_eps"])
        loss.backward()
        for param, want in zip(q_net.parameters(), oracle.variants(case)["undetached_grads"], strict=True):
            torch.testing.assert_close(param.grad.reshape(-1).double(), torch.tensor(want, dtype=torch.float64),
                                       rtol=1e-4, atol=1e-6)


def test_the_public_cases_hints_are_stored_and_current():
    """The check cell's hints read the typical mistakes' values on the public cases from the stored
    file, not from the course's oracle (which the student's package does not hold)."""
    from course_admin.replay import reference
    from course_utils.replay import expected

    assert reference.stale_expected() == []
    assert all(expected.case_key(case) in expected.stored("td_loss") for case in TD.cases())


@pytest.mark.parametrize("wrong, hint", WRONG_LOSSES, ids=[w.__name__ for w, _ in WRONG_LOSSES])
def test_the_check_cell_hints_without_the_instructor_package(wrong, hint, capsys, monkeypatch):
    """Where ``course_admin`` is not installed (the student's kernel) the check cell judges and hints
    from the stored values alone."""
    monkeypatch.setattr(checking, "ORACLES", {})
    assert check_td_loss(solutions.prioritized_td_loss)
    assert not check_td_loss(wrong)
    assert hint in capsys.readouterr().out


def test_the_student_package_holds_no_td_oracle():
    import course_utils.replay.td_judge as judge

    assert not hasattr(judge, "td_quantities")
    assert oracle.__name__ == "course_admin.replay.td_judge"


def _linear_oracle(q_net, target_net, batch, gamma, prior_eps=1e-6):
    """The red team's answer (a numpy oracle of the TD quantities for linear Q-networks, read from the
    judge the student's package used to ship, with a surrogate tensor that carries its value and
    gradient): right on linear networks only."""
    w_q, b_q = q_net.weight.detach().double().numpy(), q_net.bias.detach().double().numpy()
    w_t, b_t = target_net.weight.detach().double().numpy(), target_net.bias.detach().double().numpy()
    obs, next_obs = batch["obs"].double().numpy(), batch["next_obs"].double().numpy()
    acts, rews = batch["acts"].numpy(), batch["rews"].double().numpy()
    done, weights = batch["done"].double().numpy(), batch["weights"].double().numpy()
    q_taken = (obs @ w_q.T + b_q)[np.arange(len(acts)), acts]
    delta = rews + gamma * (1.0 - done) * (next_obs @ w_t.T + b_t).max(axis=1) - q_taken
    d_q = weights * np.clip(delta, -1.0, 1.0) / len(acts)
    grad_w, grad_b = np.zeros_like(w_q), np.zeros_like(b_q)
    for i in range(len(acts)):
        grad_w[acts[i]] -= d_q[i] * obs[i]
        grad_b[acts[i]] -= d_q[i]
    huber = np.where(np.abs(delta) < 1.0, 0.5 * delta**2, np.abs(delta) - 0.5)
    surrogate = ((q_net.weight * torch.tensor(grad_w, dtype=torch.float32)).sum()
                 + (q_net.bias * torch.tensor(grad_b, dtype=torch.float32)).sum())
    loss = float((weights * huber).mean()) + surrogate - surrogate.detach()
    return loss, torch.tensor(np.abs(delta) + prior_eps, dtype=torch.float32)


def test_a_linear_oracle_fails_the_hidden_cases_with_a_hidden_layer():
    """The red team passed the TD loss's hidden cases with a numpy oracle for linear Q-networks
    (every case was linear). It still passes the public cases, and fails the graded ones on the
    first Q-network with a hidden layer."""
    assert check_td_loss(_linear_oracle)
    passed, message = graded(TD, _linear_oracle)
    assert not passed
    assert "weight" in message, message  # nn.Sequential has no .weight: the answer cannot run there


CORPUS = [(solutions.prioritized_td_loss, True)] + [(wrong, False) for wrong, _ in WRONG_LOSSES]


@pytest.mark.parametrize("answer, right", CORPUS, ids=[a.__name__ for a, _ in CORPUS])
def test_the_check_cell_and_the_grader_give_the_same_verdict(answer, right):
    assert checking.passes(TD.check, answer) is right
    assert graded(TD, answer)[0] is right


def test_hidden_cases_are_not_the_public_ones():
    assert judging.exercise_for(TD.grade_id) is TD
    assert TD.cases_for(True) != TD.cases()


def test_a_loss_with_the_same_values_trains_the_same_agent():
    """Section 3 trains with the student's loss once it passes: a correct answer written another
    way (here: the reference through a wrapper) gives exactly the same run."""
    config = dqn.DQNConfig(num_frames=300, memory_size=100, batch_size=16)

    def wrapped(*args):
        loss, priorities = solutions.prioritized_td_loss(*args)
        return loss * 1.0, priorities.clone()

    mine = dqn.train_dqn(seed=4, config=config, memory=make_memory("prioritized", config), loss_fn=wrapped)
    course = dqn.train_dqn(seed=4, config=config, memory=make_memory("prioritized", config),
                           loss_fn=solutions.prioritized_td_loss)
    assert mine.losses == course.losses and mine.scores == course.scores
