"""Tutorial 1's Exercise 3 check: Lamarckian inheritance (``lamarckian_individual``), what a
population keeps of an individual when its learning is written back.

The exercise's ``Exercise`` (``LAMARCK``) serves the check cell and the hidden test, as in
``checks``, whose helpers for reading agents it uses.
"""

from __future__ import annotations

import numpy as np
import torch

from course_utils import facts
from course_utils.check_helpers import is_error, shown
from course_utils.checking import Exercise, Problem, attempt, raise_if_error
from course_utils.harlow.agent import HYPER_MUTATION, PARAMETER_NOISE, ActorCritic
from course_utils.harlow.checks import _hyperparameters, _same, _seed, _tensors_seen, _unchanged, _weights, _weights_seen
from course_utils.records import encode

# A case is an individual: the agent it was born as (weights from a seed, hyperparameters other
# than the defaults) and the weights its copies ended with on its tasks (one state dict per task:
# the born weights moved by a different amount on each task, a stand-in for training). The drive
# records the weights and hyperparameters of what the answer keeps, and facts about it: whether
# it is the born agent itself, whether its weights equal the born ones or one copy's, whether the
# call changed what it was given, and whether changing it afterwards changes them (a tensor shared
# instead of copied).


def _lamarck_cases() -> list[dict]:
    return [lamarck_case(5, 3, 0.002, 0.8, 0.25, 0.01), lamarck_case(6, 10, 0.0004, 0.95, 0.55, 0.0003)]


def lamarck_case(seed, tasks, learning_rate, gamma, value_cost, entropy_cost) -> dict:
    """One case: the seed of the born agent, the number of tasks it learns, its hyperparameters."""
    return {"seed": seed, "tasks": tasks, "hypers": {"learning_rate": learning_rate, "gamma": gamma,
                                                      "value_cost": value_cost, "entropy_cost": entropy_cost}}


def _individual(case: dict) -> tuple[ActorCritic, list[dict[str, torch.Tensor]]]:
    """The case's born agent and its trained copies' weights (each moved by its own seeded amount)."""
    _seed(case["seed"])
    born = ActorCritic()
    for name, value in case["hypers"].items():
        setattr(born, name, value)
    start = {name: t.detach().clone() for name, t in born.state_dict().items()}
    trained = [{name: t + torch.randn_like(t) * 0.3 for name, t in start.items()} for _ in range(case["tasks"])]
    return born, trained


def _copies(trained: list) -> list[dict[str, torch.Tensor]]:
    """The numbers the trained weights hold now (``facts.copy``: the answer may change the tensors)."""
    return [{name: facts.copy(t) for name, t in weights.items()} for weights in trained]


def _given_seen(born, trained: list) -> dict:
    """What the answer was given, as it is now: the born agent's weights (``_weights_seen``) and
    hyperparameters, and each trained copy's weights; the judge compares it with the course's
    record of the same before the call."""
    return {"born": _weights_seen(born), "hypers": _hyperparameters(born),
            "trained": [_tensors_seen(weights) for weights in trained]}


def _same_given(now, before, part: str | None = None) -> bool:
    """Whether ``now`` (``_given_seen``) is ``before``, in every part or in ``part`` ("born", "trained")."""
    if type(now) is not dict or type(before) is not dict:
        return False
    born = _unchanged(now.get("born"), before["born"]) and now.get("hypers") == before["hypers"]
    trained = type(now.get("trained")) is list and len(now["trained"]) == len(before["trained"]) and all(
        _unchanged(a, b) for a, b in zip(now["trained"], before["trained"], strict=True))
    return {"born": born, "trained": trained}.get(part, born and trained)


def _drive_lamarck(cases, lamarckian_individual) -> list[dict]:
    out = []
    for case in cases:
        born, trained = _individual(case)
        saved_born, saved_trained = _weights(born), _copies(trained)
        before = _given_seen(born, trained)
        given = [dict(weights) for weights in trained]  # the answer gets its own list and dicts, the check keeps these
        kept = attempt("lamarckian_individual(born, trained)", lamarckian_individual, born, given)
        if is_error(kept):
            out.append({"error": kept})
            continue
        seen = {"is_agent": facts.is_instance(kept, ActorCritic), "returned": type(kept).__name__, "given_before": before}
        if not seen["is_agent"]:
            out.append(seen)
            continue
        weights = _weights(kept)
        seen["same_object"] = kept is born
        seen["equals"] = next((k for k, w in enumerate([saved_born, *saved_trained]) if _same(weights, w)), None)
        seen["given_after"] = _given_seen(born, trained)  # the judge compares it with the course's before the call
        seen["weights"] = {name: encode(facts.numbers(t)) for name, t in weights.items()}
        seen["hypers"] = _hyperparameters(kept)
        facts.add_to_parameters(kept, 1.0)  # a kept tensor that is still the born agent's or a copy's moves it too
        seen["given_after_moving_kept"] = _given_seen(born, trained)
        out.append(seen)
    return out


def _judge_lamarck(got: list, expected: list, cases: list) -> None:
    for case, seen, reference in zip(cases, got, expected, strict=True):
        what = f"for an individual that learned {case['tasks']} tasks"
        if type(seen) is not dict:
            raise Problem("the record of your answer could not be read.")
        raise_if_error(seen.get("error"))
        if seen.get("is_agent") is not True:
            raise Problem(f"{what}, lamarckian_individual should return an ActorCritic, got {seen.get('returned')}.")
        moved, given = seen.get("given_after_moving_kept"), reference["given_before"]
        shares_trained = not _same_given(moved, given, "trained")
        if seen.get("same_object") is not False or not _same_given(moved, given, "born") or shares_trained:
            which = "a trained copy" if shares_trained else "the agent it was born as"
            raise Problem(f"{what}, the agent you return shares its weights with {which}: training or mutating one "
                          "would change the other. Hint: build a new agent (copy.deepcopy(born)) and copy the weights "
                          "into it (load_state_dict copies the tensors it is given).")
        if not _same_given(seen.get("given_after"), given):
            raise Problem(f"{what}, your function changed the born agent or the trained weights. Hint: leave them as "
                          "they are and build a new agent.")
        if seen.get("equals") == 0:
            raise Problem(f"{what}, the individual keeps the weights it was born with: that is Baldwinian inheritance. "
                          "Hint: write what it learned back: the mean of its trained copies' weights.")
        if seen.get("equals") is not None and case["tasks"] > 1:
            raise Problem(f"{what}, the individual keeps the weights of one trained copy (task {seen['equals']} of "
                          f"{case['tasks']}): that copy learned one pair of digits. Hint: take the mean over all its "
                          "trained copies, weight by weight.")
        hypers, want_hypers = seen.get("hypers"), reference["hypers"]
        if hypers != want_hypers:
            default = ActorCritic().hyperparameters()
            told = ("they are the defaults of a new ActorCritic" if type(hypers) is dict and all(
                hypers.get(k) == default[k] for k in HYPER_MUTATION) else f"got {shown(hypers, 300)}")
            raise Problem(f"{what}, the hyperparameters should be the individual's own, {want_hypers}; {told}. Hint: "
                          "learning changes the weights only: the learning rate, gamma and the costs are inherited as "
                          "they are (copy.deepcopy(born) keeps them).")
        mine, want = seen.get("weights"), reference["weights"]
        if type(mine) is not dict or mine.keys() != want.keys():
            raise Problem(f"{what}, the kept agent should hold the same weights as the born one, got {shown(mine, 300)}.")
        gaps = np.concatenate([(np.asarray(mine[k], dtype=float) - np.asarray(want[k], dtype=float)).reshape(-1)
                               for k in want])
        if not np.allclose(gaps, 0.0, atol=1e-5):
            spread = float(np.std(gaps))
            if 0.5 * PARAMETER_NOISE < spread < 2 * PARAMETER_NOISE and abs(float(np.mean(gaps))) < PARAMETER_NOISE:
                hint = ("the weights are the mean plus noise of about PARAMETER_NOISE: do not mutate here. "
                        "create_new_agent mutates every child already, so mutation would be applied twice.")
            else:
                hint = "each weight is the mean of that weight over the trained copies (one per task)."
            raise Problem(f"{what}, the kept weights differ from the mean of the trained copies' weights by up to "
                          f"{float(np.abs(gaps).max()):.3g}. Hint: {hint}")


LAMARCK = Exercise(
    name="lamarckian_individual",
    grade_id="test_lamarckian_individual",
    cases=_lamarck_cases,
    drive=_drive_lamarck,
    judge=_judge_lamarck,
    reference=("lamarckian_individual",),
    one_per_case="individuals",
)


def check_lamarckian_individual(lamarckian_individual) -> bool:
    """Check ``lamarckian_individual(born, trained)`` -> the ActorCritic a Lamarckian population
    keeps, given the born agent and its trained copies' weights (a list of state dicts, one per
    task): the born agent's hyperparameters and the mean of the trained weights, in a new agent
    that shares no tensor with them (they are not changed)."""
    return LAMARCK.check(lamarckian_individual)


EXERCISES = {LAMARCK.grade_id: LAMARCK}
"""This module's exercise by the grade id of its hidden-test cell."""
