"""The judge of tutorial 4's TD-loss check (``checks_td.TD``): a numpy oracle of everything a right
answer gives on a case (``td_quantities``), and the hints that name each typical mistake.

Apart from the drive because the oracle computes what the exercise asks: the grader judges in its
own process, and its child that drives the student's loss cannot read this module
(``grading.drive_apart.JUDGE_ONLY``). The student's check cell imports it to judge there.
"""

from __future__ import annotations

import numpy as np

from course_utils.check_helpers import close_arrays, number, numbers
from course_utils.checking import Problem, fmt
from course_utils.replay.check_log import _seen

TOLERANCE = {"rtol": 1e-4, "atol": 1e-5}
"""How close (``close_arrays``) an answer's loss, priorities and gradients must be to the oracle's,
and a wrong answer's to a typical mistake's."""


def _huber(x: np.ndarray) -> np.ndarray:
    return np.where(np.abs(x) < 1.0, 0.5 * x**2, np.abs(x) - 0.5)


def td_quantities(case: dict, mask: bool = True, detached: bool = True) -> dict:
    """What a right answer gives on ``case``, in numpy (float64): the TD errors ``delta`` (B,),
    the ``loss``, the ``priorities`` (B,) and the gradient of the loss with respect to the
    Q-network's weight (2, obs_dim) and bias (2,). ``mask=False``: as if the terminal mask were
    missing; ``detached=False``: as if the gradient also flowed through the target (only
    different when the target network is the Q-network)."""
    w_q, b_q = np.array(case["q"]["weight"]), np.array(case["q"]["bias"])
    target_params = case["q"] if case["same_net"] else case["target"]
    w_t, b_t = np.array(target_params["weight"]), np.array(target_params["bias"])
    obs, next_obs = np.array(case["obs"]), np.array(case["next_obs"])
    acts, rews, done, weights = np.array(case["acts"]), np.array(case["rews"]), np.array(case["done"]), np.array(case["weights"])
    q_taken = (obs @ w_q.T + b_q)[np.arange(len(acts)), acts]
    next_q = next_obs @ w_t.T + b_t
    best = next_q.argmax(axis=1)
    alive = 1.0 - done if mask else np.ones_like(done)
    target = rews + case["gamma"] * alive * next_q.max(axis=1)
    delta = target - q_taken
    n = len(acts)
    # d loss / d q_taken = -w * clip(delta, -1, 1) / n; through the target: + gamma * alive * the same
    d_q = weights * np.clip(delta, -1.0, 1.0) / n
    grad_w, grad_b = np.zeros_like(w_q), np.zeros_like(b_q)
    for i in range(n):
        grad_w[acts[i]] -= d_q[i] * obs[i]
        grad_b[acts[i]] -= d_q[i]
        if not detached and case["same_net"]:
            grad_w[best[i]] += d_q[i] * case["gamma"] * alive[i] * next_obs[i]
            grad_b[best[i]] += d_q[i] * case["gamma"] * alive[i]
    return {"delta": delta, "loss": float((weights * _huber(delta)).mean()), "priorities": np.abs(delta) + case["prior_eps"],
            "grad_weight": grad_w, "grad_bias": grad_b}


def _hint(got, mistakes: list[tuple[list, str]], otherwise: str) -> str:
    """The hint of the first typical mistake whose result (one of its values) ``got`` is."""
    return next((hint for values, hint in mistakes if any(close_arrays(got, value, **TOLERANCE) for value in values)),
                otherwise)


def _loss_mistakes(case: dict) -> list[tuple[list, str]]:
    """(the losses a typical mistake gives on ``case``, its hint), in the order they are tried."""
    right, weights = td_quantities(case), np.array(case["weights"])
    delta = right["delta"]
    squared = (weights * delta**2).mean()
    return [
        ([td_quantities(case, mask=False)["loss"]],
         "Hint: the terminal mask is missing. Where the episode ended (done = 1) there is no next state to bootstrap "
         "from: the target is r alone, r + gamma * (1 - done) * max_a' Q_target(s', a')."),
        ([_huber(delta).mean()],
         "Hint: the importance weights are not applied: multiply each element of the loss by batch['weights'] "
         "before the mean."),
        ([(weights * _huber(delta)).sum()],
         "Hint: take the mean over the batch, not the sum (the weights are already at most 1)."),
        ([0.5 * squared, squared],
         "Hint: use the smooth-L1 (Huber) loss, F.smooth_l1_loss(q_taken, target, reduction='none'), not the squared error."),
        ([(weights * _huber(delta)).sum() / weights.sum()],
         "Hint: divide by the batch size (a plain .mean()), not by the sum of the weights."),
    ]


LOSS_OTHERWISE = ("Hint: Q(s, a) is the Q-network's value of the action taken (gather along dimension 1 with "
                  "batch['acts']); the target uses the target network's largest value at the next state.")


def _priority_mistakes(case: dict) -> list[tuple[list, str]]:
    """(the priorities a typical mistake gives on ``case``, its hint), in the order they are tried."""
    delta, eps = td_quantities(case)["delta"], case["prior_eps"]
    return [
        ([np.abs(td_quantities(case, mask=False)["delta"]) + eps],
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


def judge_td(got: list, expected: list, cases: list[dict]) -> None:
    for log, case in zip(got, cases, strict=True):
        what = (f"a batch of {len(case['acts'])} transitions (done = {case['done']}, weights = {fmt(case['weights'])}, "
                f"gamma = {case['gamma']}, prior_eps = {case['prior_eps']}"
                + (", the target network being the Q-network itself)" if case["same_net"] else ")"))
        if _seen(log, "shape") != "pair":
            raise Problem(f"{what}: expected a pair (loss, priorities), got something else. Hint: `return loss, priorities`.")
        if _seen(log, "loss is a tensor") is not True:
            raise Problem(f"{what}: the loss is not a scalar torch tensor. Hint: keep it a tensor (no .item()) so the agent can "
                          "call loss.backward(), and reduce it to one number with .mean().")
        if _seen(log, "loss has a gradient") is not True:
            raise Problem(f"{what}: the loss has no gradient. Hint: compute Q(s, a) with q_net outside torch.no_grad(); only the "
                          "target goes inside it.")
        right = td_quantities(case)
        loss = number(_seen(log, "loss"), "float(loss)")
        if not close_arrays(loss, right["loss"], **TOLERANCE):
            hint = _hint(loss, _loss_mistakes(case), LOSS_OTHERWISE)
            raise Problem(f"{what}: the loss is {loss:.6g}, expected {right['loss']:.6g}. {hint}")
        priorities = numbers(_seen(log, "priorities"), f"{what}: the priorities")
        if priorities.shape != right["priorities"].shape:
            raise Problem(f"{what}: the priorities have shape {priorities.shape}, expected {right['priorities'].shape} (one per "
                          "transition). Hint: squeeze Q(s, a) to shape (B,) after the gather.")
        if not close_arrays(priorities, right["priorities"], **TOLERANCE):
            raise Problem(f"{what}: the priorities are {fmt(priorities)}, expected {fmt(right['priorities'])}. "
                          f"{_hint(priorities, _priority_mistakes(case), PRIORITY_OTHERWISE)}")
        if _seen(log, "priorities have a gradient") is not False:
            raise Problem(f"{what}: the priorities still carry a gradient. Hint: .detach() them: they are stored, not learned.")
        grads = _seen(log, "q grads")
        if type(grads) is not list or len(grads) != 2 or any(g is None for g in grads):
            raise Problem(f"{what}: the loss gives the Q-network no gradient. "
                          "Hint: Q(s, a) must come from q_net, with gradients on.")
        grad_w, grad_b = numbers(grads[0], "the weight's gradient"), numbers(grads[1], "the bias's gradient")
        if not (close_arrays(grad_w, right["grad_weight"], **TOLERANCE)
                and close_arrays(grad_b, right["grad_bias"], **TOLERANCE)):
            undetached = td_quantities(case, detached=False)
            if (close_arrays(grad_w, undetached["grad_weight"], **TOLERANCE)
                    and close_arrays(grad_b, undetached["grad_bias"], **TOLERANCE)):
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
