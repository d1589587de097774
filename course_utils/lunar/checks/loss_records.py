"""What tutorial 3's loss checks (``losses``) drive and read back: the batches a loss is run on,
described by plain data, one loss call written down as a record, and reading such records.

A batch is named in a case as ``"stored"`` (the fixed test batch of ``assets/lunar_expected.json``,
``course_utils.lunar.expected``), ``{"seed": s, "lengths": [steps per episode]}`` (random
states, actions, q-values, action scores and state values drawn from ``seed``: the hidden cases
use these, with other sizes) or ``{"uniform": n}`` (n steps whose action scores are all 0).
Building a batch only draws inputs: nothing here computes what a loss should be (the judging
compares with the course's own answer's record, driven on the same cases).
"""

from __future__ import annotations

import numpy as np
import torch

from course_utils import facts
from course_utils.check_helpers import close, is_error, shown
from course_utils.checking import Problem, attempt, raise_if_error
from course_utils.lunar.checks.stored_batch import StoredBatch, stored_batch
from course_utils.lunar.expected import load_expected
from course_utils.records import StudentError, encode

SHIFT = 25.0
"""How much a probe raises every q-value (and state value): a loss that subtracts a baseline
(or the state value) does not change; one that weighs log pi by q alone does."""


def row_shifted(scores: torch.Tensor) -> torch.Tensor:
    """``scores`` (N, actions) with one number added to all the action scores of each state (a
    different one per state, from -3 to 3): the probabilities, and so every loss, stay the same,
    unless the softmax runs over the batch (dim=0) instead of the actions."""
    offsets = torch.linspace(-3.0, 3.0, scores.shape[0]).unsqueeze(1)
    return (scores.detach() + offsets).requires_grad_(scores.requires_grad)


# ---------------------------------------------------------------------------------------------
# The inputs


def stored_size() -> tuple[int, int]:
    """(steps, episodes) of the stored test batch."""
    data = load_expected()["batch"]
    return len(data["q_vals"]), len(data["episodes"])


def batch_size(spec) -> tuple[int, int]:
    """(steps, episodes) of the batch ``spec`` names."""
    if spec == "stored":
        return stored_size()
    if "uniform" in spec:
        return int(spec["uniform"]), 1
    return int(sum(spec["lengths"])), len(spec["lengths"])


def describe(spec) -> str:
    """The batch as the verdict names it."""
    steps, episodes = batch_size(spec)
    if spec == "stored":
        return f"the stored batch ({steps} steps of {episodes} episodes)"
    if "uniform" in spec:
        return f"{steps} steps whose action scores are all equal"
    return f"a batch of {steps} steps of {episodes} episodes"


def make_inputs(spec, n_actions: int = 4, shift: float = 0.0) -> tuple[StoredBatch, torch.Tensor, torch.Tensor]:
    """Fresh (batch, action scores (N, n_actions), state values (N,)) for ``spec``; with ``shift``,
    every q-value and state value raised by it."""
    if spec == "stored":
        batch, scores, values = stored_batch()
    else:
        steps, episodes = batch_size(spec)
        if "uniform" in spec:
            rng = np.random.default_rng(0)
            states, scores = rng.normal(0.0, 1.0, (steps, 8)), np.zeros((steps, n_actions))
            actions, q_vals, values = rng.integers(0, n_actions, steps), np.zeros(steps), np.zeros(steps)
        else:
            rng = np.random.default_rng(spec["seed"])
            states = np.round(rng.normal(0.0, 1.0, (steps, 8)), 3)
            actions = rng.integers(0, n_actions, steps)
            q_vals = np.round(rng.normal(-3.0, 15.0, steps), 4)
            scores = np.round(rng.normal(0.0, 1.5, (steps, n_actions)), 4)
            values = np.round(rng.normal(-5.0, 10.0, steps), 3)
        batch = StoredBatch(
            states=torch.tensor(states, dtype=torch.float32),
            actions=torch.tensor(actions, dtype=torch.long),
            q_vals=torch.tensor(q_vals, dtype=torch.float32),
            total_rewards=torch.zeros(episodes),
        )
        scores, values = torch.tensor(scores, dtype=torch.float32), torch.tensor(values, dtype=torch.float32)
    if shift:
        batch.q_vals, values = batch.q_vals + shift, values + shift
    return batch, scores, values


# ---------------------------------------------------------------------------------------------
# Driving: one call of a loss, written down


def observe_loss(what: str, loss_fn, *args, wrt: torch.Tensor | None = None) -> tuple[dict, torch.Tensor | None]:
    """Call ``loss_fn(*args)`` (student code): the record of what came back (whether it is a pair
    (loss, dict), the loss, the dict, and with ``wrt`` the loss's gradient with respect to that
    input: the values, which the judge compares with the course's, not a flag saying there is
    one) and the loss itself (for ``backward``) when autograd tracks it, else None."""
    result = attempt(what, loss_fn, *args)
    if is_error(result):
        return {"error": result}, None
    pair = isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], dict)
    record = {"pair": pair, "returned": type(result).__name__}
    if not pair:
        return record, None
    loss = result[0]
    record["loss"] = encode(loss)
    tracked = type(loss) is torch.Tensor and facts.requires_grad(loss)  # as autograd says, not loss.requires_grad
    if wrt is not None:
        gradient = attempt("the loss's gradient", facts.gradient, loss, wrt) if tracked and facts.dim(loss) == 0 else None
        record["grad"] = gradient if is_error(gradient) else encode(gradient)
    record["info"] = encode(result[1])
    return record, loss if tracked else None


def gradient_checked(mine: dict, reference: dict, what: str) -> None:
    """The loss's gradient with respect to the action scores (``observe_loss``'s ``wrt``) must be
    the course's on the same inputs: a ``Problem`` when there is none, or when it differs."""
    got, want = mine.get("grad"), reference["grad"]
    if got is None:
        raise Problem(
            "the loss has no gradient with respect to the action scores: do not detach them or "
            "convert them to numbers before computing the loss."
        )
    raise_if_error(got)
    if not (isinstance(got, torch.Tensor) and got.shape == want.shape and torch.allclose(got, want, rtol=1e-4, atol=1e-6)):
        raise Problem(
            f"{what}: the loss has the right value, but its gradient with respect to the action scores is not the "
            "formula's. Hint: compute the loss from the action scores with torch operations only (no .detach(), "
            ".item() or numpy on the way)."
        )


def backward(loss: torch.Tensor | None) -> dict | None:
    """``loss.backward()``: None, or the error it raised."""
    if loss is None:
        return None
    outcome = attempt("loss.backward()", facts.backward, loss)
    return outcome if is_error(outcome) else None


# ---------------------------------------------------------------------------------------------
# Judging: reading the records back


def loss_value(record: dict, what: str) -> float:
    """The loss a recorded call returned, or a ``Problem`` saying why there is none."""
    if isinstance(record.get("error"), StudentError):
        raise_if_error(record["error"])
    if record.get("pair") is not True:
        raise Problem(f"{what} should return a pair (loss, dict of values to record), got {str(record.get('returned'))[:80]}.")
    loss = record.get("loss")
    raise_if_error(loss)
    if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
        raise Problem(f"{what} should return the loss as a one-number torch tensor, got {shown(loss)}.")
    return float(loss.reshape(-1)[0])


def info(record: dict) -> dict:
    """The dict a recorded call returned with its loss ({} when it is not a plain dict)."""
    values = record.get("info")
    return values if type(values) is dict else {}


def changed(record: dict, probe: str, got: float, what: str) -> bool:
    """Whether the loss recorded under ``probe`` (a call on inputs that must not change it)
    differs from ``got``; False when that call gave no loss to compare."""
    try:
        return not close(loss_value(record.get(probe) or {}, what), got, 1e-4)
    except Problem:
        return False


AXIS_HINT = (
    "your loss changes when the same number is added to all the action scores of one state, which leaves its "
    "action probabilities unchanged: take the log_softmax (or softmax) over the actions, dim=-1, not over the "
    "batch (dim=0)."
)
"""The hint for a softmax over the wrong axis (the ``row_shifted`` probe)."""

