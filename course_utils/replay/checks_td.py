"""Tutorial 4's Exercise 4 check: the importance-weighted TD loss and the new priorities, where
prioritized replay meets the DQN (``prioritized_td_loss``).

The cases are small batches for linear Q-networks (``obs_dim`` inputs, 2 actions) whose weights
are plain numbers, so that the judge can recompute every quantity with numpy: the TD target
``y = r + gamma * (1 - done) * max_a' Q_target(s', a')``, the TD error ``delta = y - Q(s, a)``,
the loss ``mean(w * smooth_l1(delta))`` and the priorities ``|delta| + prior_eps``, and, for a
wrong answer, what each typical mistake would have given (a missing terminal mask, weights left
out, priorities from the loss instead of ``|delta|``, a target that lets the gradient through...)
to name it in the hint. One case uses the Q-network itself as the target network (as right after
a target update), where a target that is not detached changes the gradient.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from course_utils import facts
from course_utils.checking import Exercise, Problem, fmt
from course_utils.replay.checks_buffer import _array, _drive_log, _number, _seen

__all__ = ["TD", "check_td_loss", "td_quantities"]

ACTIONS = 2


def _td_cases(hidden: bool) -> list[dict]:
    """Small batches with terminal and non-terminal transitions, weights in (0, 1] and TD errors
    both below and above 1 (where the smooth-L1 loss and |delta| differ most)."""
    seeds, sizes = ((11, 12), (6, 5)) if not hidden else ((2031, 2032, 2033), (7, 6, 8))
    cases = []
    for index, (seed, size) in enumerate(zip(seeds, sizes, strict=True)):
        rng = np.random.default_rng(seed)
        obs_dim = 3
        done = np.zeros(size)
        done[rng.choice(size, 2, replace=False)] = 1.0
        cases.append({
            "q": _net_params(rng, obs_dim),
            "target": _net_params(rng, obs_dim),
            "same_net": index == 1,  # the target network is the Q-network itself
            "obs": rng.normal(0, 1, (size, obs_dim)).round(3).tolist(),
            "acts": rng.integers(0, ACTIONS, size).tolist(),
            "rews": rng.choice([0.0, 1.0, 2.5, -1.5], size).tolist(),
            "next_obs": rng.normal(0, 1, (size, obs_dim)).round(3).tolist(),
            "done": done.tolist(),
            "weights": rng.uniform(0.2, 1.0, size).round(3).tolist(),
            "gamma": 0.9,
            "prior_eps": 0.01,
        })
    return cases


def _net_params(rng: np.random.Generator, obs_dim: int) -> dict:
    """A linear Q-network's weight (ACTIONS, obs_dim) and bias (ACTIONS,), as plain lists."""
    weight = rng.normal(0, 0.8, (ACTIONS, obs_dim)).round(3).tolist()
    return {"weight": weight, "bias": rng.normal(0, 0.5, ACTIONS).round(3).tolist()}


def _linear(params: dict) -> nn.Linear:
    layer = nn.Linear(len(params["weight"][0]), len(params["weight"]))
    with torch.no_grad():
        layer.weight.copy_(torch.tensor(params["weight"]))
        layer.bias.copy_(torch.tensor(params["bias"]))
    return layer


def _batch(case: dict) -> dict[str, torch.Tensor]:
    return {
        "obs": torch.tensor(case["obs"], dtype=torch.float32),
        "acts": torch.tensor(case["acts"], dtype=torch.int64),
        "rews": torch.tensor(case["rews"], dtype=torch.float32),
        "next_obs": torch.tensor(case["next_obs"], dtype=torch.float32),
        "done": torch.tensor(case["done"], dtype=torch.float32),
        "weights": torch.tensor(case["weights"], dtype=torch.float32),
    }


def _grads(module: nn.Module) -> list:
    """The gradients autograd left on the parameters the check's network really holds (``facts``:
    the answer is handed the network, and could give it a parameters() of its own)."""
    return [facts.grad(p) for p in facts.parameters(module)]


# Bound when this module is imported (the notebook's setup cell, before any answer runs).
_np_asarray = np.asarray


def _as_numbers(value) -> np.ndarray:
    """The numbers of what the answer returned, as float64: a tensor's read by ``facts`` (a
    subclass of torch.Tensor, which answers every read itself, is refused)."""
    if issubclass(type(value), torch.Tensor):
        if not facts.real_tensor(value):
            raise TypeError(f"a {type(value).__name__}, a subclass of torch.Tensor: return a plain tensor")
        value = facts.numbers(value)
    return _np_asarray(value, dtype=np.float64)


def _td_steps(log, loss_fn, case: dict) -> None:
    q_net = _linear(case["q"])
    target_net = q_net if case["same_net"] else _linear(case["target"])  # gradients switched on: a target must detach them
    batch = _batch(case)
    out = log.call("call", "prioritized_td_loss(q_net, target_net, batch, gamma, prior_eps)", loss_fn, q_net, target_net,
                   batch, case["gamma"], case["prior_eps"], keep=False)
    if not (type(out) is tuple and len(out) == 2):
        log.note("shape", "not a pair")
        return
    loss, priorities = out
    log.note("shape", "pair")
    # Facts as torch itself reads them (``facts``): a tensor subclass, or a patched torch.Tensor,
    # could say the loss is a scalar with a gradient and the priorities have none.
    log.note("loss is a tensor", facts.dim(loss) == 0)
    log.note("loss has a gradient", facts.real_tensor(loss) and facts.requires_grad(loss))
    log.note("priorities have a gradient", facts.requires_grad(priorities))
    log.call("loss", "float(loss)", lambda: float(_as_numbers(loss).reshape(())))
    log.call("priorities", "the priorities as numbers", _as_numbers, priorities)
    if facts.real_tensor(loss) and facts.requires_grad(loss):
        log.call("backward", "loss.backward()", facts.backward, loss, keep=False)
        log.note("q grads", _grads(q_net))
        log.note("target grads", None if case["same_net"] else _grads(target_net))


def _drive_td(cases: list[dict], loss_fn) -> list[dict]:
    return [_drive_log(_td_steps, loss_fn, case) for case in cases]


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


def _close(a, b) -> bool:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=1e-4, atol=1e-5))


def _loss_hint(case: dict, loss: float) -> str:
    right, weights = td_quantities(case), np.array(case["weights"])
    unmasked = td_quantities(case, mask=False)
    n = len(weights)
    if _close(loss, unmasked["loss"]):
        return ("Hint: the terminal mask is missing. Where the episode ended (done = 1) there is no next state to bootstrap "
                "from: the target is r alone, r + gamma * (1 - done) * max_a' Q_target(s', a').")
    if _close(loss, _huber(right["delta"]).mean()):
        return ("Hint: the importance weights are not applied: multiply each element of the loss by batch['weights'] "
                "before the mean.")
    if _close(loss, (weights * _huber(right["delta"])).sum()):
        return "Hint: take the mean over the batch, not the sum (the weights are already at most 1)."
    if _close(loss, (weights * 0.5 * right["delta"] ** 2).mean()) or _close(loss, (weights * right["delta"] ** 2).mean()):
        return "Hint: use the smooth-L1 (Huber) loss, F.smooth_l1_loss(q_taken, target, reduction='none'), not the squared error."
    if _close(loss, (weights * _huber(right["delta"])).sum() / weights.sum()):
        return "Hint: divide by the batch size (a plain .mean()), not by the sum of the weights."
    del n
    return ("Hint: Q(s, a) is the Q-network's value of the action taken (gather along dimension 1 with batch['acts']); "
            "the target uses the target network's largest value at the next state.")


def _priority_hint(case: dict, priorities: np.ndarray) -> str:
    right = td_quantities(case)
    delta, eps = right["delta"], case["prior_eps"]
    if _close(priorities, np.abs(td_quantities(case, mask=False)["delta"]) + eps):
        return "Hint: the terminal mask is missing from the target, so the TD errors of the last steps of episodes are wrong."
    if _close(priorities, _huber(delta) + eps) or _close(priorities, _huber(delta)):
        return ("Hint: the priority is |delta| + prior_eps, from the TD error itself, not from the element-wise loss "
                "(the smooth-L1 loss is delta**2 / 2 for small errors, which would make them far rarer still).")
    if _close(priorities, np.abs(delta)):
        return "Hint: add prior_eps to |delta|, so that no transition gets priority 0 and is never replayed again."
    if _close(priorities, delta + eps) or _close(priorities, delta):
        return "Hint: take the absolute value of the TD error: a priority must be positive."
    if _close(priorities, np.array(case["weights"]) * np.abs(delta) + eps):
        return "Hint: the importance weights correct the loss, not the priorities: the priority is |delta| + prior_eps."
    return "Hint: the priority of each transition is |delta| + prior_eps with delta = target - Q(s, a)."


def _judge_td(got: list, expected: list, cases: list[dict]) -> None:
    if type(got) is not list or len(got) != len(cases):
        raise Problem("the record of your answer is not what the check writes (a damaged record).")
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
        loss = _number(_seen(log, "loss"), "float(loss)")
        if not _close(loss, right["loss"]):
            raise Problem(f"{what}: the loss is {loss:.6g}, expected {right['loss']:.6g}. {_loss_hint(case, loss)}")
        priorities = _array(_seen(log, "priorities"), f"{what}: the priorities")
        if priorities.shape != right["priorities"].shape:
            raise Problem(f"{what}: the priorities have shape {priorities.shape}, expected {right['priorities'].shape} (one per "
                          "transition). Hint: squeeze Q(s, a) to shape (B,) after the gather.")
        if not _close(priorities, right["priorities"]):
            raise Problem(f"{what}: the priorities are {fmt(priorities)}, expected {fmt(right['priorities'])}. "
                          f"{_priority_hint(case, priorities)}")
        if _seen(log, "priorities have a gradient") is not False:
            raise Problem(f"{what}: the priorities still carry a gradient. Hint: .detach() them: they are stored, not learned.")
        grads = _seen(log, "q grads")
        if type(grads) is not list or len(grads) != 2 or any(g is None for g in grads):
            raise Problem(f"{what}: the loss gives the Q-network no gradient. "
                          "Hint: Q(s, a) must come from q_net, with gradients on.")
        grad_w, grad_b = _array(grads[0], "the weight's gradient"), _array(grads[1], "the bias's gradient")
        if not (_close(grad_w, right["grad_weight"]) and _close(grad_b, right["grad_bias"])):
            undetached = td_quantities(case, detached=False)
            if _close(grad_w, undetached["grad_weight"]) and _close(grad_b, undetached["grad_bias"]):
                raise Problem(f"{what}: the gradient also flows through the target. Hint: compute the target under "
                              "torch.no_grad() (or .detach() it): the network learns to move Q(s, a) towards the target, "
                              "not the target towards Q(s, a).")
            raise Problem(f"{what}: the loss is right but its gradient is not. Hint: build the loss from tensors only "
                          "(no numpy or .item() on the way), so that the gradient reaches q_net.")
        target_grads = _seen(log, "target grads")
        if not case["same_net"] and type(target_grads) is list and any(
                g is not None and np.any(_array(g, "the target network's gradient") != 0) for g in target_grads):
            raise Problem(f"{what}: the target network received a gradient. Hint: compute the target under torch.no_grad() "
                          "(or .detach() it): only the Q-network learns from this loss.")


TD = Exercise(
    name="prioritized_td_loss",
    grade_id="test_td_loss",
    cases=_td_cases,
    drive=_drive_td,
    judge=_judge_td,
    reference=("prioritized_td_loss",),
)


def check_td_loss(loss_fn, strict: bool = False) -> bool:
    """Check ``loss_fn(q_net, target_net, batch, gamma, prior_eps) -> (loss, priorities)``: the
    importance-weighted smooth-L1 TD loss with the terminal mask and a detached target, and the
    new priorities ``|delta| + prior_eps``, on small batches for linear Q-networks."""
    return TD.check(loss_fn, strict=strict)
