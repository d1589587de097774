"""Exercise checks of tutorial 3 (policy gradients on LunarLander), exercises 6-8: the three
losses, ``PolicyTrainer.train_batch`` and the advantage actor-critic's network, agent and loss.

As in ``agents``, each check tests one piece on its own, with its own stand-ins for the
pieces it needs (a small network and two simple losses for the trainer) and the fixed batch
of ``assets/lunar_expected.json`` (``course_utils.lunar.expected``) as input. Nothing here
uses the reference solutions (``course_utils.lunar.solutions``), which students do not get.
"""

from __future__ import annotations

import copy

import numpy as np
import torch
from torch import nn

from course_utils.checking import Problem, call_student, verdict
from course_utils.lunar.checks.agents import check_agent_distribution
from course_utils.lunar.checks.common import _close, _FakeEnv, _tensor
from course_utils.lunar.env import make_env
from course_utils.lunar.expected import expected_batch, load_expected

MAX_ENTROPY_4 = float(np.log(4))


def _loss_value(what: str, result):
    """A loss class returns ``(loss_tensor, dict)``; return the loss tensor."""
    if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], dict)):
        raise Problem(f"{what} should return a pair (loss, dict of values to record), got {type(result).__name__}.")
    loss = result[0]
    if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
        raise Problem(f"{what} should return the loss as a one-number torch tensor, got {loss!r}.")
    return loss


# ---------------------------------------------------------------------------------------------
# 6. Losses


def _loss_check(name: str, make_loss, expected_key: str, hints):
    def check():
        expected = load_expected()
        _, batch, scores, values = expected_batch(expected)
        loss_fn = call_student(f"{name}(...)", make_loss)
        leaf = scores.clone().requires_grad_(True)
        loss = _loss_value(f"{name}(batch, action_scores)", call_student(f"{name}(batch, action_scores)", loss_fn, batch, leaf))
        want = expected["losses"][expected_key]
        if not loss.requires_grad:
            raise Problem(
                "the loss has no gradient with respect to the action scores: do not detach them or "
                "convert them to numbers before computing the loss."
            )
        got = loss.item()
        if not _close(got, want, 1e-4):
            hint = next((h for test, h in hints if test(got, want, expected)), "compare with the formula above.")
            raise Problem(
                f"on the stored batch (210 steps of 4 episodes) the loss should be {want:.4f}, got {got:.4f}. Hint: {hint}"
            )
        return loss_fn, batch, leaf

    return check


def _is(value):
    return lambda got, want, expected: _close(got, value(want, expected), 1e-4)


def check_vpg_loss(VanillaPolicyGradientLoss, strict: bool = False) -> bool:
    """``VanillaPolicyGradientLoss()(batch, action_scores)`` -> (loss, dict(loss_p=...))."""
    hints = [
        (_is(lambda w, e: -w), "the sign is flipped: we minimise the NEGATIVE of q * log pi."),
        (_is(lambda w, e: w * 210), "take the mean over the batch's steps, not the sum."),
        (_is(lambda w, e: w * 210 / 4), "divide by the number of steps in the batch (the mean over samples)."),
    ]
    return verdict(
        "VanillaPolicyGradientLoss", _loss_check("VanillaPolicyGradientLoss", VanillaPolicyGradientLoss, "vpg", hints), strict
    )


def check_bpg_loss(BaselinePolicyGradientLoss, strict: bool = False) -> bool:
    """``BaselinePolicyGradientLoss()(batch, action_scores)`` -> (loss, dict(loss_p=..., baseline=...))."""
    hints = [
        (_is(lambda w, e: e["losses"]["vpg"]), "the baseline was not subtracted: weigh log pi by q - mean(q)."),
        (_is(lambda w, e: -w), "the sign is flipped: we minimise -(q - b) * log pi."),
        (_is(lambda w, e: w * 210), "take the mean over the batch's steps, not the sum."),
    ]
    base = _loss_check("BaselinePolicyGradientLoss", BaselinePolicyGradientLoss, "bpg", hints)

    def check():
        loss_fn, batch, scores = base()
        _, info = loss_fn(batch, scores)
        if "baseline" not in info:
            raise Problem("the dict should also record the baseline: dict(loss_p=..., baseline=...).")
        want = load_expected()["losses"]["baseline"]
        if not _close(info["baseline"], want, 1e-4):
            raise Problem(f"the baseline should be the mean q-value of the batch, {want:.4f}, got {info['baseline']!r}.")

    return verdict("BaselinePolicyGradientLoss", check, strict)


def check_entropy_loss(ActionEntropyLoss, strict: bool = False) -> bool:
    """``ActionEntropyLoss(4, beta)``: ``max_entropy`` = log 4 and the loss -beta * mean(H) / max_entropy."""
    hints = [
        (
            _is(lambda w, e: -w),
            "the sign is flipped: the loss is MINUS the (normalised) entropy, so minimising it raises the entropy.",
        ),
        (_is(lambda w, e: w * MAX_ENTROPY_4), "divide the entropy by max_entropy so it lies between 0 and 1."),
        (_is(lambda w, e: -w * MAX_ENTROPY_4), "the loss is -entropy / max_entropy (both the sign and the division)."),
        (_is(lambda w, e: w * 210), "take the mean over the batch's steps, not the sum."),
    ]
    base = _loss_check("ActionEntropyLoss", lambda: ActionEntropyLoss(4, 1.0), "entropy_beta1", hints)

    def check():
        loss_fn = call_student("ActionEntropyLoss(4)", ActionEntropyLoss, 4)
        max_entropy = float(getattr(loss_fn, "max_entropy", float("nan")))
        if not _close(max_entropy, MAX_ENTROPY_4, 1e-5):
            raise Problem(
                f"max_entropy for 4 actions should be log(4) = {MAX_ENTROPY_4:.5f} (a uniform distribution), got {max_entropy}."
            )
        loss_fn, batch, scores = base()
        doubled = _loss_value(
            "ActionEntropyLoss(4, beta=2)",
            call_student("ActionEntropyLoss(4, 2.0)(batch, action_scores)", ActionEntropyLoss(4, 2.0), batch, scores),
        )
        want = 2 * load_expected()["losses"]["entropy_beta1"]
        if not _close(doubled, want, 1e-4):
            raise Problem(
                f"with beta=2 the loss should be twice as large ({want:.4f}), got {float(doubled):.4f}. Hint: multiply by beta."
            )
        uniform = torch.zeros(6, 4, requires_grad=True)
        flat = _loss_value("ActionEntropyLoss", loss_fn(_Batch(6), uniform))
        if not _close(flat, -1.0, 1e-5):
            raise Problem(f"for uniform probabilities the loss (beta=1) should be -1, got {float(flat):.4f}.")

    return verdict("ActionEntropyLoss", check, strict)


class _Batch:
    def __init__(self, n):
        self.actions = torch.zeros(n, dtype=torch.long)
        self.q_vals = torch.zeros(n)
        self.states = torch.zeros(n, 8)
        self.total_rewards = torch.zeros(1)


# ---------------------------------------------------------------------------------------------
# 7. PolicyTrainer.train_batch


class _TrainerNet(nn.Module):
    """The trainer check's model: 8 observations -> 16 hidden (ReLU) -> 4 action scores."""

    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))

    def forward(self, x):
        return self.layers(x)


def _trainer_net() -> nn.Module:
    torch.manual_seed(0)
    return _TrainerNet()


class _ImitationLoss:
    """A stand-in loss for the trainer check, with the course's interface: the cross-entropy of
    the batch's actions under the action scores, recorded as ``loss_imitation``."""

    def __call__(self, batch, action_scores):
        loss = nn.functional.cross_entropy(action_scores, batch.actions)
        return loss, dict(loss_imitation=loss.item())


class _ScoreSizeLoss:
    """A second stand-in loss: ``weight`` times the mean squared action score, recorded as ``loss_size``."""

    def __init__(self, weight: float):
        self.weight = weight

    def __call__(self, batch, action_scores):
        loss = self.weight * (action_scores**2).mean()
        return loss, dict(loss_size=loss.item())


def _reference_step(model, optimizer, loss_fns, batch) -> tuple[float, dict]:
    """What ``train_batch`` should do: one optimizer step on the sum of all losses, after zero_grad."""
    scores = model(batch.states)
    total, info = 0.0, {}
    for loss_fn in loss_fns:
        loss, values = loss_fn(batch, scores)
        total = total + loss
        info.update(values)
    optimizer.zero_grad()
    total.backward()
    optimizer.step()
    return total.item(), info


def check_policy_trainer(PolicyTrainer, strict: bool = False) -> bool:
    """``PolicyTrainer(model, optimizer, loss_fns, dataloader).train_batch(batch)`` -> (total loss, dict)."""

    def check():
        expected = load_expected()
        _, batch, _, _ = expected_batch(expected)
        model = _trainer_net()
        reference = copy.deepcopy(model)
        losses = [_ImitationLoss(), _ScoreSizeLoss(0.5)]
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        trainer = call_student(
            "PolicyTrainer(model, optimizer, loss_fns, dataloader=None)", PolicyTrainer, model, optimizer, losses, None
        )
        ref_optimizer = torch.optim.SGD(reference.parameters(), lr=0.01)
        for step in range(2):
            result = call_student("train_batch(batch)", trainer.train_batch, batch)
            want_total, want_losses = _reference_step(reference, ref_optimizer, losses, batch)
            if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], dict)):
                raise Problem(f"train_batch should return (total_loss, dict of losses), got {result!r:.200}.")
            total, info = result
            if isinstance(total, torch.Tensor):
                total = total.item()
            if not _close(total, want_total, 1e-4):
                raise Problem(
                    f"the total loss should be the sum of all loss functions' losses ({want_total:.4f}), got {total!r}."
                )
            missing = set(want_losses) - set(info)
            if missing:
                raise Problem(f"the dict should merge the dicts the loss functions return; missing {sorted(missing)}.")
            for (name, p), q in zip(model.named_parameters(), reference.parameters(), strict=True):
                if torch.allclose(p, q, atol=1e-6):
                    continue
                if step == 0 and all(torch.equal(a, b) for a, b in zip(model.parameters(), _initial(), strict=True)):
                    raise Problem("the parameters did not change: call optimizer.step() after loss.backward().")
                raise Problem(
                    f"after {step + 1} call(s) of train_batch the parameter {name} differs from one plain gradient step "
                    "per batch. "
                    "Hint: optimizer.zero_grad() before backward(), so gradients do not pile up across batches."
                )

    def _initial():
        return list(_trainer_net().parameters())

    return verdict("PolicyTrainer.train_batch", check, strict)


# ---------------------------------------------------------------------------------------------
# 8. AAC


def check_aac_net(AACPolicyNet, strict: bool = False) -> bool:
    """``AACPolicyNet.build_for_env(env)`` -> module returning (action scores (N, 4), state values (N, 1))."""

    def check():
        env = make_env()
        torch.manual_seed(0)
        net = call_student("AACPolicyNet.build_for_env(env)", AACPolicyNet.build_for_env, env)
        env.close()
        x = torch.randn(5, 8)
        out = call_student("net(x)", net, x)
        if not (isinstance(out, tuple) and len(out) == 2):
            raise Problem(f"forward should return a pair (action_scores, state_values), got {type(out).__name__}.")
        scores = _tensor("the action scores for 5 observations", out[0], (5, 4))
        values = _tensor("the state values for 5 observations", out[1])
        if tuple(values.shape) not in ((5, 1), (5,)):
            raise Problem(f"the state values should have shape (5, 1): one number per state, got {tuple(values.shape)}.")
        if torch.allclose(values.reshape(-1)[0], values.reshape(-1)[1]) or torch.allclose(scores[0], scores[1]):
            raise Problem("different observations gave the same outputs: do both heads use the input?")
        (scores.sum() + values.sum()).backward()
        if all(p.grad is None or not p.grad.any() for p in net.parameters()):
            raise Problem("no gradient reaches the parameters.")
        other = call_student(
            "AACPolicyNet.build_for_env(env with 3 observations, 2 actions)", AACPolicyNet.build_for_env, _FakeEnv(3, 2)
        )
        out = call_student("net(x)", other, torch.randn(7, 3))
        _tensor("for an environment with 3 observations and 2 actions, the action scores", out[0], (7, 2))

    return verdict("AACPolicyNet", check, strict)


def check_aac_agent(AACPolicyAgent, strict: bool = False) -> bool:
    """``AACPolicyAgent.current_action_distribution`` uses the policy head of a (scores, values) network."""
    return check_agent_distribution(AACPolicyAgent, strict=strict, aac=True)


def check_aac_loss(AACPolicyGradientLoss, strict: bool = False) -> bool:
    """``AACPolicyGradientLoss(delta)(batch, (action_scores, state_values))`` -> (loss, dict)."""

    def check():
        expected = load_expected()
        _, batch, scores, values = expected_batch(expected)
        losses = expected["losses"]
        loss_fn = call_student("AACPolicyGradientLoss(delta=1.0)", AACPolicyGradientLoss, 1.0)
        s = scores.clone().requires_grad_(True)
        v = values.view(-1, 1).clone().requires_grad_(True)
        loss = _loss_value(
            "AACPolicyGradientLoss", call_student("loss_fn(batch, (action_scores, state_values))", loss_fn, batch, (s, v))
        )
        got, want = loss.item(), losses["aac_delta1"]
        if not _close(got, want, 1e-4):
            if _close(got, losses["vpg"] + losses["aac_loss_v"], 1e-4):
                hint = "the policy part should weigh log pi by the advantage q - v, not by q."
            elif _close(got, losses["aac_loss_p"], 1e-4):
                hint = "add the value loss: delta * mean((v - q)^2)."
            elif _close(got, losses["aac_loss_v"] - losses["aac_loss_p"], 1e-4):
                hint = "the sign of the policy part is flipped: minimise -(q - v) * log pi."
            else:
                hint = "loss = -mean((q - v) * log pi(a|s)) + delta * mean((v - q)^2)."
            raise Problem(f"on the stored batch with delta=1 the loss should be {want:.4f}, got {got:.4f}. Hint: {hint}")
        loss.backward()
        n = len(batch)
        want_grad = 2.0 * (values - batch.q_vals) / n  # only the value loss may push the values
        if v.grad is None or not torch.allclose(v.grad.view(-1), want_grad, atol=1e-5):
            raise Problem(
                "the gradient with respect to the state values should come from the value loss alone. "
                "Hint: use state_values.detach() in the advantage, so the policy loss does not move v."
            )
        half = _loss_value(
            "AACPolicyGradientLoss(0.5)",
            call_student("AACPolicyGradientLoss(0.5)(...)", AACPolicyGradientLoss(0.5), batch, (scores, values.view(-1, 1))),
        )
        want_half = losses["aac_loss_p"] + 0.5 * losses["aac_loss_v"]
        if not _close(half, want_half, 1e-4):
            raise Problem(
                f"with delta=0.5 the loss should be {want_half:.4f}, got {float(half):.4f}. Hint: weigh the value loss by delta."
            )

    return verdict("AACPolicyGradientLoss", check, strict)
