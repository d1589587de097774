"""Tutorial 3, exercises 6-8, judged from records: the check cell and the grader give the same
verdict (and the same hint) on the course's answers and on typical mistakes, the hidden cases are
not the public ones, and an answer tuned to the public cases fails in grading."""

from __future__ import annotations

import contextlib
import io

import pytest
import torch
from verdicts import graded

from course_admin.grading import judging
from course_admin.lunar import solutions
from course_utils import checking
from course_utils.lunar.checks import aac_checks, losses
from course_utils.lunar.checks.aac_checks import AAC_AGENT, AAC_LOSS, AAC_NET
from course_utils.lunar.checks.losses import BPG_LOSS, ENTROPY_LOSS, POLICY_TRAINER, VPG_LOSS

from .mistakes import (
    AACNotDetached,
    AACWithoutAdvantage,
    BroadcastAAC,
    DetachedVanilla,
    FlippedVanilla,
    IgnoresLossInput,
    NoBaseline,
    NoStep,
    NoZeroGrad,
    PositiveEntropy,
    ScoresToEveryLoss,
    UnnormalisedEntropy,
    WrongAxisAAC,
    WrongAxisBaseline,
    WrongAxisEntropy,
    WrongAxisVanilla,
)

LOSS_EXERCISES = {**losses.EXERCISES, **aac_checks.EXERCISES}
"""Exercises 6-8."""


def checked(exercise, *answers) -> tuple[bool, str]:
    """The check cell's verdict (on the public cases, against the stored record): whether it
    passed, and what it printed."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        passed = exercise.check(*answers)
    return passed, printed.getvalue()


# ---------------------------------------------------------------------------------------------
# Wrong answers beside tests/lunar/mistakes.py (the hint tests' own, and a few more)


class SummedVanilla(solutions.VanillaPolicyGradientLoss):
    def forward(self, batch, scores):
        loss, info = super().forward(batch, scores)
        return loss * len(batch), info


class PerEpisodeVanilla(solutions.VanillaPolicyGradientLoss):
    def forward(self, batch, scores):
        loss, info = super().forward(batch, scores)
        return loss * len(batch) / len(batch.total_rewards), info


class NoBaselineRecorded(solutions.BaselinePolicyGradientLoss):
    def forward(self, batch, scores):
        loss, info = super().forward(batch, scores)
        return loss, dict(loss_p=info["loss_p"])


class LossOnly(solutions.VanillaPolicyGradientLoss):
    def forward(self, batch, scores):
        return super().forward(batch, scores)[0]


class BetaIgnored(solutions.ActionEntropyLoss):
    def forward(self, batch, scores):
        loss, info = super().forward(batch, scores)
        return loss / self.beta, info


class WrongMaxEntropy(solutions.ActionEntropyLoss):
    def calc_max_entropy(self):
        return 1.0


class ScoresOnly(solutions.AACPolicyNet):
    def forward(self, x):
        return self.actor(x)


class ConstantValue(solutions.AACPolicyNet):
    def forward(self, x):
        scores, values = super().forward(x)
        return scores, values * 0


class LunarOnlyNet(solutions.AACPolicyNet):
    @classmethod
    def build_for_env(cls, env, **hp):
        return cls(env.observation_space.shape[0], 4)


class WholeOutput(solutions.AACPolicyAgent):
    def current_action_distribution(self):
        with torch.no_grad():
            scores, values = self.p_net(self.curr_state.unsqueeze(0))
            both = torch.cat([scores, values], dim=-1)
        return torch.softmax(both, dim=-1).squeeze(0)[:4]


class ValueAgent(solutions.AACPolicyAgent):
    def current_action_distribution(self):
        with torch.no_grad():
            scores, values = self.p_net(self.curr_state.unsqueeze(0))
        return torch.softmax(scores + 3 * values * torch.arange(4), dim=-1).squeeze(0)


class NoValueLoss(solutions.AACPolicyGradientLoss):
    def forward(self, batch, output):
        loss, info = super().forward(batch, output)
        return loss - self.delta * torch.tensor(info["loss_v"]), info


class DeltaIgnored(solutions.AACPolicyGradientLoss):
    def forward(self, batch, output):
        loss, info = super().forward(batch, output)
        return loss + (1 - self.delta) * torch.tensor(info["loss_v"]), info


class LastDictOnly(solutions.PolicyTrainer):
    def train_batch(self, batch):
        output = self.model(batch.states)
        total, info = 0.0, {}
        for loss_fn in self.loss_fns:
            loss, info = loss_fn(batch, self.loss_input(loss_fn, output))
            total = total + loss
        self.optimizer.zero_grad()
        total.backward()
        self.optimizer.step()
        return total.item(), info


class Todo(solutions.VanillaPolicyGradientLoss):
    def forward(self, batch, scores):
        raise NotImplementedError()


WRONG = [
    (VPG_LOSS, FlippedVanilla, "sign is flipped"),
    (VPG_LOSS, DetachedVanilla, "no gradient"),
    (VPG_LOSS, SummedVanilla, "not the sum"),
    (VPG_LOSS, PerEpisodeVanilla, "number of steps"),
    (VPG_LOSS, LossOnly, "should return a pair"),
    (VPG_LOSS, Todo, "not implemented yet"),
    (BPG_LOSS, NoBaseline, "baseline was not subtracted"),
    (BPG_LOSS, NoBaselineRecorded, "also record the baseline"),
    (ENTROPY_LOSS, PositiveEntropy, "sign is flipped"),
    (ENTROPY_LOSS, UnnormalisedEntropy, "max_entropy"),
    (ENTROPY_LOSS, BetaIgnored, "multiply by beta"),
    (ENTROPY_LOSS, WrongMaxEntropy, "max_entropy for"),
    (POLICY_TRAINER, NoZeroGrad, "zero_grad"),
    (POLICY_TRAINER, NoStep, "sum of all loss"),
    (POLICY_TRAINER, LastDictOnly, "merge the dicts"),
    (POLICY_TRAINER, solutions.PolicyTrainer.__base__, "not implemented yet"),
    (AAC_NET, ScoresOnly, "a pair (action_scores, state_values)"),
    (AAC_NET, ConstantValue, "same outputs"),
    (AAC_NET, LunarOnlyNet, "should have shape"),
    (AAC_AGENT, WholeOutput, "apply a softmax to the action scores"),
    (AAC_AGENT, ValueAgent, "the first of the network's two outputs"),
    (AAC_LOSS, AACWithoutAdvantage, "advantage q - v"),
    (AAC_LOSS, AACNotDetached, "detach"),
    (AAC_LOSS, NoValueLoss, "add the value loss"),
    (AAC_LOSS, DeltaIgnored, "weigh the value loss by delta"),
    (POLICY_TRAINER, IgnoresLossInput, "self.loss_input(loss_fn, output)"),
    (POLICY_TRAINER, ScoresToEveryLoss, "needs_values = True"),
    (AAC_LOSS, BroadcastAAC, "(N, N) matrix"),
    (VPG_LOSS, WrongAxisVanilla, "not over the batch (dim=0)"),
    (BPG_LOSS, WrongAxisBaseline, "not over the batch (dim=0)"),
    (ENTROPY_LOSS, WrongAxisEntropy, "not over the batch (dim=0)"),
    (AAC_LOSS, WrongAxisAAC, "not over the batch (dim=0)"),
]
RIGHT = [(exercise, getattr(solutions, exercise.reference[0]), "") for exercise in LOSS_EXERCISES.values()]


def _id(value) -> str:
    return getattr(value, "grade_id", None) or getattr(value, "__name__", None) or str(value)[:20]


@pytest.mark.parametrize("exercise, answer, hint", RIGHT + WRONG, ids=_id)
def test_the_check_cell_and_the_grader_give_the_same_verdict(exercise, answer, hint):
    right = not hint
    assert checking.passes(exercise.check, answer) is right
    passed, message = graded(exercise, answer)
    assert passed is right, message
    if hint:  # the same specific hint in the gradebook as in the check cell
        assert hint in message and hint in checked(exercise, answer)[1], message


def test_the_exercises_are_judged_from_records():
    assert {grade_id: judging.exercise_for(grade_id) for grade_id in LOSS_EXERCISES} == LOSS_EXERCISES


@pytest.mark.parametrize("exercise", list(LOSS_EXERCISES.values()), ids=_id)
def test_hidden_cases_are_not_the_public_ones(exercise):
    assert exercise.cases_for(True) != exercise.cases()
    assert judging.reference_record(exercise.grade_id) != checking.stored_record(exercise.grade_id)


def test_a_loss_tuned_to_the_public_batch_passes_the_check_but_not_the_grader():
    stored = checking.stored_record(VPG_LOSS.grade_id)["calls"][0]
    value, raised, gradient = float(stored["loss"]), float(stored["shifted"]["loss"]), stored["grad"]

    class Tuned(torch.nn.Module):
        def forward(self, batch, scores):  # the stored number, with the stored gradient to look right
            number = raised if float(batch.q_vals.mean()) > -5 else value
            if scores.shape != gradient.shape:
                return scores.sum() * 0 + number, dict(loss_p=number)
            linear = (scores * gradient).sum()
            return linear - linear.detach() + number, dict(loss_p=number)

    assert checking.passes(VPG_LOSS.check, Tuned)
    passed, message = graded(VPG_LOSS, Tuned)
    assert not passed and "should be" in message


def test_a_trainer_that_replays_the_public_record_fails_in_grading():
    stored = checking.stored_record(POLICY_TRAINER.grade_id)

    class Replay(solutions.PolicyTrainer):
        def train_batch(self, batch):  # the public record of the case whose model this is, step by step
            params = dict(self.model.named_parameters())
            case = next(
                (c for c in stored if all(n in params and params[n].shape == p.shape for n, p in c["initial"].items())),
                stored[0],
            )
            self.calls = getattr(self, "calls", -1) + 1
            step = case["steps"][self.calls % len(case["steps"])]
            with torch.no_grad():
                for name, p in self.model.named_parameters():
                    if name in step["params"] and p.shape == step["params"][name].shape:
                        p.copy_(step["params"][name])
            for loss_fn in self.loss_fns:  # hand each stand-in loss what it wants, as the record shows
                loss_fn.received.append("pair" if getattr(loss_fn, "needs_values", False) else "scores")
            return float(step["total"]), dict(step["info"])

    assert checking.passes(POLICY_TRAINER.check, Replay)
    assert not graded(POLICY_TRAINER, Replay)[0]
