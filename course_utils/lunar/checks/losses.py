"""Exercise checks of tutorial 3 (policy gradients on LunarLander), exercises 6-7: the three
losses and ``PolicyTrainer.train_batch`` (exercise 8, the actor-critic: ``aac_checks``).

Each exercise is an ``Exercise`` (see ``checking``): ``drive`` runs the student's class on a
list of cases (the batches of ``loss_records``, the check's own small network and stand-in
losses for the trainer, stand-in networks for the agent) and records what came back, with
probes that name typical mistakes: the same scores shifted per state (a softmax over the batch),
the state values as (N,) instead of (N, 1) (an (N, N) broadcast), what each of the trainer's
stand-in losses was handed (``loss_input`` ignored);
``judge`` compares that record with the course's own answer's record on the same cases. The
check cell runs both on the public cases (the fixed batch of ``assets/lunar_expected.json``);
grading drives the hidden cases (other batches, sizes, betas, deltas, networks and seeds) in the
student's kernel and judges them in the grader. Nothing here uses the reference solutions
(``course_admin.lunar.solutions``), which students do not get.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from course_utils import facts
from course_utils.check_helpers import close, is_error, is_number, number, shown
from course_utils.checking import Exercise, Problem, attempt, check_length, raise_if_error
from course_utils.lunar.checks import loss_records
from course_utils.records import encode
from course_utils.runtime import seed_torch

# ---------------------------------------------------------------------------------------------
# 6. Losses: VanillaPolicyGradientLoss and BaselinePolicyGradientLoss


def _pg_cases() -> list:
    """The batches the loss is called on (see ``loss_records``)."""
    return ["stored"]


def _drive_pg(name: str):
    def drive(cases, Loss) -> dict:  # noqa: N803 (the exercise's class name)
        loss_fn = attempt(f"{name}()", Loss)
        if is_error(loss_fn):
            return {"error": loss_fn}
        out = []
        for spec in cases:
            batch, scores, _ = loss_records.make_inputs(spec)
            scores = scores.requires_grad_(True)
            record, _ = loss_records.observe_loss(f"{name}(batch, action_scores)", loss_fn, batch, scores, wrt=scores)
            shifted = loss_records.row_shifted(scores)
            record["row_shifted"], _ = loss_records.observe_loss(f"{name}(batch, action_scores)", loss_fn, batch, shifted)
            shifted, scores, _ = loss_records.make_inputs(spec, shift=loss_records.SHIFT)
            record["shifted"], _ = loss_records.observe_loss(f"{name}(batch, action_scores)", loss_fn, shifted, scores)
            out.append(record)
        return {"calls": out}

    return drive


def _calls(got: dict, cases) -> list:
    raise_if_error(got.get("error"))
    calls = got.get("calls")
    check_length(calls, cases, "calls")
    return calls


def _loss_checked(name: str, mine: dict, reference: dict, spec, hints) -> float:
    """The recorded loss, which must have a gradient and equal the course's (else the first hint that
    fits), and whose gradient with respect to the action scores must be the course's."""
    got = loss_records.loss_value(mine, f"{name}(batch, action_scores)")
    want = loss_records.loss_value(reference, "the course's loss")
    if mine.get("grad") is None:
        loss_records.gradient_checked(mine, reference, name)  # says there is none
    if not close(got, want, 1e-4):
        hints = [(lambda got, want: loss_records.changed(mine, "row_shifted", got, name), loss_records.AXIS_HINT), *hints]
        hint = next((h for test, h in hints if test(got, want)), "compare with the formula above.")
        raise Problem(f"on {loss_records.describe(spec)} the loss should be {want:.4f}, got {got:.4f}. Hint: {hint}")
    loss_records.gradient_checked(mine, reference, name)
    return got


def _is(value):
    return lambda got, want: close(got, value(want), 1e-4)


def _judge_vpg(got: dict, expected: dict, cases) -> None:
    for spec, mine, reference in zip(cases, _calls(got, cases), expected["calls"], strict=True):
        steps, episodes = loss_records.batch_size(spec)
        hints = [
            (_is(lambda w: -w), "the sign is flipped: we minimise the NEGATIVE of q * log pi."),
            (_is(lambda w, n=steps: w * n), "take the mean over the batch's steps, not the sum."),
            (_is(lambda w, n=steps, e=episodes: w * n / e),
             "divide by the number of steps in the batch (the mean over samples)."),
        ]
        _loss_checked("VanillaPolicyGradientLoss", mine, reference, spec, hints)


VPG_LOSS = Exercise(
    name="VanillaPolicyGradientLoss",
    grade_id="test_vpg_loss",
    cases=_pg_cases,
    drive=_drive_pg("VanillaPolicyGradientLoss"),
    judge=_judge_vpg,
    reference=("VanillaPolicyGradientLoss",),
)


def check_vpg_loss(VanillaPolicyGradientLoss) -> bool:  # noqa: N803
    """``VanillaPolicyGradientLoss()(batch, action_scores)`` -> (loss, dict(loss_p=...))."""
    return VPG_LOSS.check(VanillaPolicyGradientLoss)


def _judge_bpg(got: dict, expected: dict, cases) -> None:
    name = "BaselinePolicyGradientLoss"
    for spec, mine, reference in zip(cases, _calls(got, cases), expected["calls"], strict=True):
        steps, _ = loss_records.batch_size(spec)
        raised = mine.get("shifted", {})

        def unshifted(got, want, raised=raised):  # subtracting the mean q makes the loss blind to the shift
            try:
                return not close(loss_records.loss_value(raised, name), got, 1e-4)
            except Problem:
                return False

        hints = [
            (unshifted, "the baseline was not subtracted: weigh log pi by q - mean(q)."),
            (_is(lambda w: -w), "the sign is flipped: we minimise -(q - b) * log pi."),
            (_is(lambda w, n=steps: w * n), "take the mean over the batch's steps, not the sum."),
        ]
        _loss_checked(name, mine, reference, spec, hints)
        values, want = loss_records.info(mine), loss_records.info(reference)["baseline"]
        if "baseline" not in values:
            raise Problem("the dict should also record the baseline: dict(loss_p=..., baseline=...).")
        baseline = values["baseline"]
        if not (is_number(baseline) and close(number(baseline, "the baseline"), want, 1e-4)):
            raise Problem(f"the baseline should be the mean q-value of the batch, {want:.4f}, "
                          f"got {shown(baseline)}.")
        got_raised, want_raised = loss_records.loss_value(raised, name), loss_records.loss_value(reference["shifted"], name)
        if not close(got_raised, want_raised, 1e-4):
            raise Problem(
                f"on {loss_records.describe(spec)} with every q-value raised by {loss_records.SHIFT:g}, "
                f"the loss should be {want_raised:.4f}, "
                f"got {got_raised:.4f}. Hint: with the baseline subtracted, raising every q-value changes nothing."
            )


BPG_LOSS = Exercise(
    name="BaselinePolicyGradientLoss",
    grade_id="test_bpg_loss",
    cases=_pg_cases,
    drive=_drive_pg("BaselinePolicyGradientLoss"),
    judge=_judge_bpg,
    reference=("BaselinePolicyGradientLoss",),
)


def check_bpg_loss(BaselinePolicyGradientLoss) -> bool:  # noqa: N803
    """``BaselinePolicyGradientLoss()(batch, action_scores)`` -> (loss, dict(loss_p=..., baseline=...))."""
    return BPG_LOSS.check(BaselinePolicyGradientLoss)


# ---------------------------------------------------------------------------------------------
# 6. ActionEntropyLoss
#
# A case is a step: ("max_entropy", n_actions) reads ActionEntropyLoss(n_actions).max_entropy;
# ("loss", n_actions, beta, batch) calls ActionEntropyLoss(n_actions, beta) on a batch.


def _entropy_cases() -> list:
    return [("max_entropy", 4), ("loss", 4, 1.0, "stored"), ("loss", 4, 2.0, "stored"), ("loss", 4, 1.0, {"uniform": 6})]


def _drive_entropy(cases, ActionEntropyLoss) -> list:  # noqa: N803 (the exercise's class name)
    out = []
    for step in cases:
        if step[0] == "max_entropy":
            loss_fn = attempt(f"ActionEntropyLoss({step[1]})", ActionEntropyLoss, step[1])
            value = loss_fn if is_error(loss_fn) else attempt("max_entropy", getattr, loss_fn, "max_entropy", None)
            out.append({"max_entropy": encode(value)})
            continue
        _, n_actions, beta, spec = step
        loss_fn = attempt(f"ActionEntropyLoss({n_actions}, {beta:g})", ActionEntropyLoss, n_actions, beta)
        if is_error(loss_fn):
            out.append({"error": loss_fn})
            continue
        batch, scores, _ = loss_records.make_inputs(spec, n_actions)
        what = f"ActionEntropyLoss({n_actions}, {beta:g})(batch, action_scores)"
        scores = scores.requires_grad_(True)
        record, _ = loss_records.observe_loss(what, loss_fn, batch, scores, wrt=scores)
        record["row_shifted"], _ = loss_records.observe_loss(what, loss_fn, batch, loss_records.row_shifted(scores))
        out.append(record)
    return out


def _judge_entropy(got: list, expected: list, cases) -> None:
    for step, mine, reference in zip(cases, got, expected, strict=True):
        if step[0] == "max_entropy":
            n_actions, value = step[1], mine.get("max_entropy")
            want = math.log(n_actions)
            if not (is_number(value) and close(number(value, "max_entropy"), want, 1e-5)):
                raise Problem(
                    f"max_entropy for {n_actions} actions should be log({n_actions}) = {want:.5f} (a uniform distribution), "
                    f"got {shown(value)}."
                )
            continue
        _, n_actions, beta, spec = step
        what = f"ActionEntropyLoss({n_actions}, {beta:g})"
        if "uniform" in spec:
            got_loss = loss_records.loss_value(mine, what)
            if not close(got_loss, -beta, 1e-5):
                raise Problem(
                    f"for uniform probabilities the loss (beta={beta:g}) should be {-beta:g}, got {got_loss:.4f}."
                )
            continue
        if beta == 1.0:
            steps, _ = loss_records.batch_size(spec)
            top = math.log(n_actions)
            hints = [
                (_is(lambda w: -w),
                 "the sign is flipped: the loss is MINUS the (normalised) entropy, so minimising it raises the entropy."),
                (_is(lambda w, m=top: w * m), "divide the entropy by max_entropy so it lies between 0 and 1."),
                (_is(lambda w, m=top: -w * m), "the loss is -entropy / max_entropy (both the sign and the division)."),
                (_is(lambda w, n=steps: w * n), "take the mean over the batch's steps, not the sum."),
            ]
            _loss_checked(what, mine, reference, spec, hints)
            continue
        got_loss, want = loss_records.loss_value(mine, what), loss_records.loss_value(reference, what)
        if not close(got_loss, want, 1e-4):
            raise Problem(
                f"with beta={beta:g} the loss on {loss_records.describe(spec)} should be {want:.4f} "
                f"({beta:g} times the loss with "
                f"beta=1), got {got_loss:.4f}. Hint: multiply by beta."
            )


ENTROPY_LOSS = Exercise(
    name="ActionEntropyLoss",
    grade_id="test_entropy_loss",
    cases=_entropy_cases,
    drive=_drive_entropy,
    judge=_judge_entropy,
    reference=("ActionEntropyLoss",),
    one_per_case="steps",
)


def check_entropy_loss(ActionEntropyLoss) -> bool:  # noqa: N803
    """``ActionEntropyLoss(4, beta)``: ``max_entropy`` = log 4 and the loss -beta * mean(H) / max_entropy."""
    return ENTROPY_LOSS.check(ActionEntropyLoss)


# ---------------------------------------------------------------------------------------------
# 7. PolicyTrainer.train_batch


class _TrainerNet(nn.Module):
    """The trainer check's model: 8 observations -> ``hidden`` (ReLU) -> ``n_actions`` action scores;
    with ``values``, an actor-critic's output instead: (action scores (N, n_actions), state values (N, 1))."""

    def __init__(self, hidden: int = 16, n_actions: int = 4, values: bool = False):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(8, hidden), nn.ReLU(), nn.Linear(hidden, n_actions + values))
        self.n_actions, self.values = n_actions, values

    def forward(self, x):
        out = self.layers(x)
        if self.values:
            return out[:, : self.n_actions], out[:, self.n_actions :]
        return out


def _received(value) -> str:
    """What a stand-in loss was handed, in a word: "scores" (a tensor), "pair" (a 2-tuple) or its type."""
    if isinstance(value, torch.Tensor):
        return "scores"
    if isinstance(value, tuple) and len(value) == 2:
        return "pair"
    return type(value).__name__


class _ImitationLoss:
    """A stand-in loss for the trainer check, with the course's interface: the cross-entropy of
    the batch's actions under the action scores, recorded as ``loss_imitation``. It writes down
    what it was handed in ``received`` (the check's record of whether ``loss_input`` was used)."""

    def __init__(self):
        self.received: list[str] = []

    def __call__(self, batch, action_scores):
        self.received.append(_received(action_scores))
        loss = nn.functional.cross_entropy(action_scores, batch.actions)
        return loss, dict(loss_imitation=loss.item())


class _ScoreSizeLoss(_ImitationLoss):
    """A second stand-in loss: ``weight`` times the mean squared action score, recorded as ``loss_size``."""

    def __init__(self, weight: float):
        super().__init__()
        self.weight = weight

    def __call__(self, batch, action_scores):
        self.received.append(_received(action_scores))
        loss = self.weight * (action_scores**2).mean()
        return loss, dict(loss_size=loss.item())


class _ValueLoss(_ImitationLoss):
    """A stand-in loss on both outputs of an actor-critic (``needs_values = True``, as the AAC
    loss): ``weight`` times the mean squared state value, recorded as ``loss_value``."""

    needs_values = True

    def __init__(self, weight: float):
        super().__init__()
        self.weight = weight

    def __call__(self, batch, model_output):
        self.received.append(_received(model_output))
        _, state_values = model_output
        loss = self.weight * (state_values**2).mean()
        return loss, dict(loss_value=loss.item())


def _trainer_cases() -> list[dict]:
    """The model (seed, hidden units, whether it is an actor-critic returning (scores, values)),
    the stand-in losses' weight, SGD's learning rate, the batch and how many steps."""
    return [
        {"seed": 0, "hidden": 16, "weight": 0.5, "lr": 0.01, "batch": "stored", "steps": 2},
        {"seed": 1, "hidden": 12, "weight": 0.3, "lr": 0.01, "batch": "stored", "steps": 2, "values": True},
    ]


def _params(model: nn.Module) -> dict:
    """Copies of the parameters the check's model really holds: the answer is handed the model and
    could give it (or nn.Module) a named_parameters() that reports the values the check wants."""
    return {name: facts.copy(p) for name, p in facts.named_parameters(model)}


def _drive_trainer(cases, PolicyTrainer) -> list[dict]:  # noqa: N803 (the exercise's class name)
    out = []
    for case in cases:
        seed_torch(case["seed"])
        values = case.get("values", False)
        model = _TrainerNet(case["hidden"], values=values)
        batch, _, _ = loss_records.make_inputs(case["batch"])
        optimizer = torch.optim.SGD(model.parameters(), lr=case["lr"])
        losses = [_ImitationLoss(), _ScoreSizeLoss(case["weight"])] + ([_ValueLoss(case["weight"])] if values else [])
        record = {"initial": _params(model), "steps": []}
        trainer = attempt(
            "PolicyTrainer(model, optimizer, loss_fns, dataloader=None)", PolicyTrainer, model, optimizer, losses, None
        )
        if is_error(trainer):
            record["error"] = trainer
            out.append(record)
            continue
        for _ in range(case["steps"]):
            result = attempt("train_batch(batch)", getattr(trainer, "train_batch", None), batch)
            if is_error(result):
                record["steps"].append({"error": result})
                break
            pair = isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], dict)
            text = attempt("repr", repr, result)
            step = {"pair": pair, "returned": text[:200] if type(text) is str else type(result).__name__}
            if pair:
                step["total"], step["info"] = encode(result[0]), encode(result[1])
            step["params"] = _params(model)
            record["steps"].append(step)
        record["received"] = {type(loss).__name__: list(loss.received) for loss in losses}
        out.append(record)
    return out


_WANTS = {"_ImitationLoss": "scores", "_ScoreSizeLoss": "scores", "_ValueLoss": "pair"}
"""What each stand-in loss should be handed: ``loss_input``'s answer for it."""


def _judge_loss_inputs(case: dict, mine: dict) -> None:
    """Each stand-in loss got what ``loss_input`` gives it, else a hint naming ``loss_input``."""
    received = mine.get("received")
    if type(received) is not dict:
        return
    for name, kinds in received.items():
        want = _WANTS.get(name)
        wrong = [kind for kind in kinds if kind != want] if type(kinds) is list else []
        if want is None or not wrong:
            continue
        model = "an actor-critic model, whose output is the pair (action_scores, state_values)"
        if want == "scores":
            got = "the pair (action_scores, state_values)" if wrong[0] == "pair" else f"a {wrong[0]}"
            raise Problem(
                f"with {model}, a loss that takes only the action scores was handed {got}. "
                "Hint: call each loss as loss_fn(batch, self.loss_input(loss_fn, output)): loss_input hands it "
                "what it needs (the AAC section's losses rely on it)."
            )
        got = "only the action scores" if wrong[0] == "scores" else f"a {wrong[0]}"
        raise Problem(
            f"with {model}, a loss with needs_values = True (as the AAC loss) was handed {got}. "
            "Hint: call each loss as loss_fn(batch, self.loss_input(loss_fn, output)): loss_input hands it "
            "what it needs."
        )


def _judge_trainer(got: list, expected: list, cases) -> None:
    for case, mine, reference in zip(cases, got, expected, strict=True):
        raise_if_error(mine.get("error"))
        _judge_loss_inputs(case, mine)
        steps = mine.get("steps")
        if type(steps) is not list or len(steps) < case["steps"] and not (steps and "error" in steps[-1]):
            raise Problem("the record of your trainer stops early.")
        for index, (step, want) in enumerate(zip(steps, reference["steps"], strict=False)):
            raise_if_error(step.get("error"))
            if step.get("pair") is not True:
                raise Problem(f"train_batch should return (total_loss, dict of losses), got {step.get('returned')!s:.200}.")
            total, want_total = step.get("total"), number(want["total"], "the course's total")
            total_number = is_number(total) and number(total, "the total loss")
            if not (is_number(total) and close(total_number, want_total, 1e-4)):
                raise Problem(
                    f"the total loss should be the sum of all loss functions' losses ({want_total:.4f}), "
                    f"got {shown(total)}."
                )
            values = step.get("info")
            missing = set(want["info"]) - set(values if type(values) is dict else {})
            if missing:
                raise Problem(f"the dict should merge the dicts the loss functions return; missing {sorted(missing)}.")
            _judge_parameters(index, step.get("params"), want["params"], reference["initial"])


def _judge_parameters(index: int, params, want: dict, initial: dict) -> None:
    params = params if type(params) is dict else {}
    for name, q in want.items():
        p = params.get(name)
        if isinstance(p, torch.Tensor) and p.shape == q.shape and torch.allclose(p, q, atol=1e-6):
            continue
        unchanged = all(
            isinstance(params.get(n), torch.Tensor) and params[n].shape == a.shape and torch.equal(params[n], a)
            for n, a in initial.items()
        )
        if index == 0 and unchanged:
            raise Problem("the parameters did not change: call optimizer.step() after loss.backward().")
        raise Problem(
            f"after {index + 1} call(s) of train_batch the parameter {name} differs from one plain gradient step per batch. "
            "Hint: optimizer.zero_grad() before backward(), so gradients do not pile up across batches."
        )


POLICY_TRAINER = Exercise(
    name="PolicyTrainer.train_batch",
    grade_id="test_policy_trainer",
    cases=_trainer_cases,
    drive=_drive_trainer,
    judge=_judge_trainer,
    reference=("PolicyTrainer",),
    one_per_case="cases",
)


def check_policy_trainer(PolicyTrainer) -> bool:  # noqa: N803
    """``PolicyTrainer(model, optimizer, loss_fns, dataloader).train_batch(batch)`` -> (total loss, dict),
    with a scores model and with an actor-critic one (each loss handed ``loss_input``'s answer)."""
    return POLICY_TRAINER.check(PolicyTrainer)


EXERCISES = {exercise.grade_id: exercise for exercise in (VPG_LOSS, BPG_LOSS, ENTROPY_LOSS, POLICY_TRAINER)}
"""Exercises 6-7 by the grade id of their hidden-test cell."""
