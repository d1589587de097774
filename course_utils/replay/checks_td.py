"""Tutorial 4's Exercise 4 check: the importance-weighted TD loss and the new priorities, where
prioritized replay meets the DQN (``prioritized_td_loss``).

The cases are small batches (``obs_dim`` inputs, 2 actions) for Q-networks whose weights are plain
numbers: linear ones, and (among the hidden cases) ones with a hidden layer of tanh units
(``build_q_network``). The judge (``td_judge``) compares what the answer gives, the loss
``mean(w * smooth_l1(delta))`` with ``delta = r + gamma * (1 - done) * max_a' Q_target(s', a') -
Q(s, a)``, the priorities ``|delta| + prior_eps`` and the Q-network's gradients, with the course's
record of its own answer on the same cases, and, for a wrong answer, with what each typical mistake
gives (a missing terminal mask, weights left out, priorities from the loss instead of ``|delta|``, a
target that lets the gradient through...) to name it in the hint. One case uses the Q-network itself
as the target network (as right after a target update), where a target that is not detached
changes the gradient.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from course_utils import facts
from course_utils.checking import Exercise
from course_utils.replay.check_log import _drive_log

__all__ = ["EXERCISES", "TD", "build_q_network", "check_td_loss"]

ACTIONS = 2


def _td_cases() -> list[dict]:
    return td_cases(seeds=(11, 12), sizes=(6, 5))


def td_cases(seeds: tuple[int, ...], sizes: tuple[int, ...], hidden: tuple[int, ...] | None = None,
             same_net: tuple[int, ...] = (1,)) -> list[dict]:
    """Small batches (one per seed, of the given sizes) with terminal and non-terminal transitions,
    weights in (0, 1] and TD errors both below and above 1 (where the smooth-L1 loss and |delta|
    differ most). ``hidden``: per case, the number of tanh units of the Q-networks' hidden layer
    (0: linear networks; None: all linear); ``same_net``: the indices of the cases whose target
    network is the Q-network itself."""
    hidden = hidden or (0,) * len(seeds)
    cases = []
    for index, (seed, size, units) in enumerate(zip(seeds, sizes, hidden, strict=True)):
        rng = np.random.default_rng(seed)
        obs_dim = 3
        done = np.zeros(size)
        done[rng.choice(size, 2, replace=False)] = 1.0
        cases.append({
            "q": _net_params(rng, obs_dim, units),
            "target": _net_params(rng, obs_dim, units),
            "same_net": index in same_net,  # the target network is the Q-network itself
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


def _net_params(rng: np.random.Generator, obs_dim: int, units: int = 0) -> dict:
    """A Q-network's parameters as plain lists: the output layer's ``weight`` (ACTIONS, inputs) and
    ``bias`` (ACTIONS,), and with ``units`` > 0 a ``hidden`` tanh layer (``weight`` (units,
    obs_dim), ``bias`` (units,)) before it."""
    params = {}
    inputs = obs_dim
    if units:
        params["hidden"] = {"weight": rng.normal(0, 0.8, (units, obs_dim)).round(3).tolist(),
                            "bias": rng.normal(0, 0.5, units).round(3).tolist()}
        inputs = units
    params["weight"] = rng.normal(0, 0.8, (ACTIONS, inputs)).round(3).tolist()
    params["bias"] = rng.normal(0, 0.5, ACTIONS).round(3).tolist()
    return params


def _layer(params: dict) -> nn.Linear:
    layer = nn.Linear(len(params["weight"][0]), len(params["weight"]))
    with torch.no_grad():
        layer.weight.copy_(torch.tensor(params["weight"]))
        layer.bias.copy_(torch.tensor(params["bias"]))
    return layer


def build_q_network(params: dict) -> nn.Module:
    """The check's Q-network from its plain parameters (``_net_params``): an ``nn.Linear``, or an
    ``nn.Sequential`` of a linear layer, tanh and the output layer when ``params`` has ``hidden``."""
    if "hidden" not in params:
        return _layer(params)
    return nn.Sequential(_layer(params["hidden"]), nn.Tanh(), _layer(params))


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
    q_net = build_q_network(case["q"])
    # gradients switched on in the target network: a target must detach them
    target_net = q_net if case["same_net"] else build_q_network(case["target"])
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
    from course_utils.replay.td_judge import judge_td  # the judge: never in the grader's drive

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
    new priorities ``|delta| + prior_eps``, on small batches for small Q-networks."""
    return TD.check(loss_fn)


EXERCISES = {TD.grade_id: TD}
"""This module's exercise by the grade id of its hidden-test cell."""
