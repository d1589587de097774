"""The judge of tutorial 4's TD-loss check (``checks_td.TD``): what the answer gave on each case,
compared with the course's record of its own answer on the same case (``expected``: the stored
record in the check cell, the reference driven on the hidden cases in the grader), and the hints
that name each typical mistake.

The hints need what each mistake would give: the TD errors with their sign, without the terminal
mask, and the gradient that flows through an undetached target (``variants``). The course computes
them with its reference, which the student's package does not hold: for the public cases they are
stored in ``assets/replay_expected.json`` (``course release`` writes it), and the grader, which
judges the hidden cases, hands its oracle in (``checking.grader_oracle``). Where neither has them,
the verdict stands without the specific hint.

Apart from the drive: the grader judges in its own process, and its child that drives the student's
loss cannot read this module (``grading.drive_apart.JUDGE_ONLY``).
"""

from __future__ import annotations

import numpy as np

from course_utils.check_helpers import close_arrays, number, numbers
from course_utils.checking import Problem, fmt, grader_oracle
from course_utils.replay import expected as stored_values
from course_utils.replay.check_log import _seen

TOLERANCE = {"rtol": 1e-4, "atol": 1e-5}
"""How close (``close_arrays``) an answer's loss, priorities and gradients must be to the course's,
and a wrong answer's to a typical mistake's."""


def variants(case: dict) -> dict | None:
    """The typical mistakes' values on ``case``: stored for a public case, computed by the oracle
    the grader hands in for any other, None where neither exists."""
    found = stored_values.stored("td_loss").get(stored_values.case_key(case))
    if found is not None:
        return found
    oracle = grader_oracle("test_td_loss")
    return None if oracle is None else oracle(case)


def _huber(x: np.ndarray) -> np.ndarray:
    return np.where(np.abs(x) < 1.0, 0.5 * x**2, np.abs(x) - 0.5)


def _hint(got, mistakes: list[tuple[list, str]], otherwise: str) -> str:
    """The hint of the first typical mistake whose result (one of its values) ``got`` is."""
    return next((hint for values, hint in mistakes if any(close_arrays(got, value, **TOLERANCE) for value in values)),
                otherwise)


def _loss_mistakes(case: dict, found: dict | None) -> list[tuple[list, str]]:
    """(the losses a typical mistake gives on ``case``, its hint), in the order they are tried;
    none without the mistakes' values (``found``)."""
    if found is None:
        return []
    weights, delta = np.array(case["weights"]), np.array(found["delta"])
    squared = (weights * delta**2).mean()
    return [
        ([(weights * _huber(np.array(found["unmasked_delta"]))).mean()],
         "Hint: the terminal mask is missing. Where the episode ended (done = 1) there is no next state to bootstrap "
         "from: the target is r alone, r + gamma * (1 - done) * max_a' Q_target(s', a')."),
        ([_huber(delta).mean()],
         "Hint: the importance weights are not applied: multiply each element of the loss by batch['weights'] "
         "before the mean."),
        ([(weights * _huber(delta)).sum()],
         "Hint: take the mean over the batch, not the sum: a sum would scale the step size with the batch size."),
        ([0.5 * squared, squared],
         "Hint: use the smooth-L1 (Huber) loss, F.smooth_l1_loss(q_taken, target, reduction='none'), not the squared error."),
        ([(weights * _huber(delta)).sum() / weights.sum()],
         "Hint: divide by the batch size (a plain .mean()), not by the sum of the weights."),
    ]


LOSS_OTHERWISE = ("Hint: Q(s, a) is the Q-network's value of the action taken (gather along dimension 1 with "
                  "batch['acts']); the target uses the target network's largest value at the next state.")


def _priority_mistakes(case: dict, found: dict | None) -> list[tuple[list, str]]:
    """(the priorities a typical mistake gives on ``case``, its hint), in the order they are tried;
    none without the mistakes' values (``found``)."""
    if found is None:
        return []
    delta, eps = np.array(found["delta"]), case["prior_eps"]
    return [
        ([np.abs(np.array(found["unmasked_delta"])) + eps],
         "Hint: the terminal mask is missing from the target, so the TD errors of the last steps of episodes are wrong."),
        ([_huber(delta) + eps, _huber(delta)],
         "Hint: the priority is |delta| + prior_eps, from the TD error itself, not from the element-wise loss "
         "(the smooth-L1 loss is delta**2 / 2 for small errors, which would make them far rarer still)."),
        ([np.abs(delta)], "Hint: add prior_eps to |delta|, so that no transition gets priority 0 and is never replayed again."),
        ([delta + eps, delta], "Hint: take the absolute value of the TD error: a priority must be positive."),
        ([np.array(case["weights"]) * np.abs(delta) + eps],
         "Hint: the importance weights correct the loss, not the priorities: the priority is |delta| + prior_eps."),
    ]


PRIORITY_OTHERWISE = "Hint: the priority of each transition is |delta| + prior_eps with delta = target - Q(s, a)."


def _network(case: dict) -> str:
    units = len(case["q"]["hidden"]["bias"]) if "hidden" in case["q"] else 0
    return f", a Q-network with a hidden layer of {units} tanh units" if units else ""


def _right(want: dict) -> tuple[float, np.ndarray, list[np.ndarray]]:
    """The course's loss, priorities and Q-network gradients on a case, from its record."""
    grads = _seen(want, "q grads")
    return (number(_seen(want, "loss"), "the course's loss"), numbers(_seen(want, "priorities"), "the course's priorities"),
            [numbers(g, "the course's gradient").reshape(-1) for g in grads])


def judge_td(got: list, expected: list, cases: list[dict]) -> None:
    for log, want, case in zip(got, expected, cases, strict=True):
        what = (f"a batch of {len(case['acts'])} transitions (done = {case['done']}, weights = {fmt(case['weights'])}, "
                f"gamma = {case['gamma']}, prior_eps = {case['prior_eps']}{_network(case)}"
                + (", the target network being the Q-network itself)" if case["same_net"] else ")"))
        if _seen(log, "shape") != "pair":
            raise Problem(f"{what}: expected a pair (loss, priorities), got something else. Hint: `return loss, priorities`.")
        if _seen(log, "loss is a tensor") is not True:
            raise Problem(f"{what}: the loss is not a scalar torch tensor. Hint: keep it a tensor (no .item()) so the agent can "
                          "call loss.backward(), and reduce it to one number with .mean().")
        if _seen(log, "loss has a gradient") is not True:
            raise Problem(f"{what}: the loss has no gradient. Hint: compute Q(s, a) with q_net outside torch.no_grad(); only the "
                          "target goes inside it.")
        right_loss, right_priorities, right_grads = _right(want)
        loss = number(_seen(log, "loss"), "float(loss)")
        if not close_arrays(loss, right_loss, **TOLERANCE):
            hint = _hint(loss, _loss_mistakes(case, variants(case)), LOSS_OTHERWISE)
            raise Problem(f"{what}: the loss is {loss:.6g}, expected {right_loss:.6g}. {hint}")
        priorities = numbers(_seen(log, "priorities"), f"{what}: the priorities")
        if priorities.shape != right_priorities.shape:
            raise Problem(f"{what}: the priorities have shape {priorities.shape}, expected {right_priorities.shape} (one per "
                          "transition). Hint: squeeze Q(s, a) to shape (B,) after the gather.")
        if not close_arrays(priorities, right_priorities, **TOLERANCE):
            raise Problem(f"{what}: the priorities are {fmt(priorities)}, expected {fmt(right_priorities)}. "
                          f"{_hint(priorities, _priority_mistakes(case, variants(case)), PRIORITY_OTHERWISE)}")
        if _seen(log, "priorities have a gradient") is not False:
            raise Problem(f"{what}: the priorities still carry a gradient. Hint: .detach() them: they are stored, not learned.")
        grads = _seen(log, "q grads")
        if type(grads) is not list or len(grads) != len(right_grads) or any(g is None for g in grads):
            raise Problem(f"{what}: the loss gives the Q-network no gradient. "
                          "Hint: Q(s, a) must come from q_net, with gradients on.")
        grads = [numbers(g, "the Q-network's gradient").reshape(-1) for g in grads]
        if not all(close_arrays(g, r, **TOLERANCE) for g, r in zip(grads, right_grads, strict=True)):
            found = variants(case)
            undetached = (found or {}).get("undetached_grads")
            if undetached is not None and all(close_arrays(g, u, **TOLERANCE) for g, u in zip(grads, undetached, strict=True)):
                raise Problem(f"{what}: the gradient also flows through the target. Hint: compute the target under "
                              "torch.no_grad() (or .detach() it): the network learns to move Q(s, a) towards the target, "
                              "not the target towards Q(s, a).")
            raise Problem(f"{what}: the loss is right but its gradient is not. Hint: build the loss from tensors only "
                          "(no numpy or .item() on the way), so that the gradient reaches q_net.")
        target_grads = _seen(log, "target grads")
        if not case["same_net"] and type(target_grads) is list and any(
                g is not None and np.any(numbers(g, "the target network's gradient") != 0) for g in target_grads):
            raise Problem(f"{what}: the target network received a gradient. Hint: compute the target under torch.no_grad() "
                          "(or .detach() it): only the Q-network learns from this loss.")
