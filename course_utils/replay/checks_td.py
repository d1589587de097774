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
from course_utils.checking import Exercise
from course_utils.replay.check_log import _drive_log

__all__ = ["EXERCISES", "TD", "check_td_loss"]

ACTIONS = 2


def _td_cases() -> list[dict]:
    return td_cases(seeds=(11, 12), sizes=(6, 5))


def td_cases(seeds: tuple[int, ...], sizes: tuple[int, ...]) -> list[dict]:
    """Small batches (one per seed, of the given sizes) with terminal and non-terminal transitions,
    weights in (0, 1] and TD errors both below and above 1 (where the smooth-L1 loss and |delta|
    differ most); the second case's target network is the Q-network itself."""
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


def _as_numbers(value) -> np.ndarray:
    """The numbers of what the answer returned, as float64: a tensor's read by ``facts`` (a
    subclass of torch.Tensor, which answers every read itself, is refused)."""
    if issubclass(type(value), torch.Tensor):
        if not facts.real_tensor(value):
            raise TypeError(f"a {type(value).__name__}, a subclass of torch.Tensor: return a plain tensor")
        value = facts.numbers(value)
    return facts.as_array(value, dtype=np.float64)


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
        # Back-propagated with priorities - priorities.detach() (zero) added: priorities that still
        # carry a gradient add theirs to the networks' gradients, which the judge compares with its
        # oracle's, whatever the answer's process records of the priorities.
        extra = [facts.attached(priorities)] if facts.real_tensor(priorities) else []
        log.call("backward", "loss.backward()", facts.sum_backward, loss, *extra, keep=False)
        log.note("q grads", _grads(q_net))
        log.note("target grads", None if case["same_net"] else _grads(target_net))


def _drive_td(cases: list[dict], loss_fn) -> list[dict]:
    return [_drive_log(_td_steps, loss_fn, case) for case in cases]


def _judge_td(got: list, expected: list, cases: list[dict]) -> None:
    from course_utils.replay.td_judge import judge_td  # the judge's numpy oracle: never in the grader's drive

    judge_td(got, expected, cases)


TD = Exercise(
    name="prioritized_td_loss",
    grade_id="test_td_loss",
    cases=_td_cases,
    drive=_drive_td,
    judge=_judge_td,
    reference=("prioritized_td_loss",),
    one_per_case="cases",
)


def check_td_loss(loss_fn) -> bool:
    """Check ``loss_fn(q_net, target_net, batch, gamma, prior_eps) -> (loss, priorities)``: the
    importance-weighted smooth-L1 TD loss with the terminal mask and a detached target, and the
    new priorities ``|delta| + prior_eps``, on small batches for linear Q-networks."""
    return TD.check(loss_fn)


EXERCISES = {TD.grade_id: TD}
"""This module's exercise by the grade id of its hidden-test cell."""
