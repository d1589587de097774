"""Tutorial 2's exercise checks (colour replay): the replay memory and the replay actor loss (the
advantage-weighted log-probability times the capped, detached ratio). The optional discounted
returns have their own, ungraded check (``colour.optional``).

Each exercise is an ``Exercise`` (see ``checking``): ``drive`` runs the student's answer on a
list of cases and records what came back; ``judge`` compares that with the course's own answer
on the same cases. The check cell runs both on the public cases; grading runs ``drive`` on the
hidden cases in the student's kernel and ``judge`` in the grader.
"""

from __future__ import annotations

import numpy as np
import torch

from course_utils import facts
from course_utils.check_helpers import close, is_error, shown
from course_utils.checking import Exercise, Problem, attempt, fmt, raise_if_error
from course_utils.colour.expected import load_expected
from course_utils.records import Opaque, StudentError, encode

# --------------------------------------------------------------------------------------
# Exercise 1: the replay memory
#
# A case is a script: ("new", capacity), ("write", item), or a look at the memory, ("slots",
# first_n_or_None, what), ("write_pointer", what), ("len", what), ("read", n, what, last_n_or_None),
# each look with the hint shown when it differs from the course's memory.

_PUBLIC_MEMORY = [
    [
        ("new", 3), ("write", "a"),
        ("slots", None, "after writing 'a' into an empty memory of capacity 3, slots", "write into slots[write_pointer]."),
        ("write_pointer", "then write_pointer", "move the write pointer one slot on after writing."),
        ("len", "then len(memory)", "count every write in n_written."),
        ("read", 2, "reading twice from a memory that holds only 'a'", None,
         "read slots[read_pointer], then move the read pointer on, wrapping after the last filled slot: % len(self)."),
        ("write", "b"), ("write", "c"),
        ("slots", None, "after writing 'a', 'b', 'c', slots", "write into slots[write_pointer]."),
        ("write_pointer", "then write_pointer", "after the last slot the write pointer wraps to 0: % self.capacity."),
        ("write", "d"),
        ("slots", None, "writing 'd' into a full memory of capacity 3, slots",
         "when full, the oldest experience (in slot 0) is overwritten first."),
        ("len", "then len(memory)", "the memory never holds more than its capacity."),
    ],
    [
        ("new", 3), *[("write", item) for item in "abcd"],
        ("read", 5, "reading 5 times after writing 'a' to 'd' into capacity 3", None,
         "reads go round the slots in order, starting at slot 0."),
    ],
    [
        ("new", 250), *[("write", item) for item in range(1000)],
        ("len", "after 1000 writes into capacity 250, len(memory)", "len is min(n_written, capacity)."),
        ("slots", 3, "and the first 3 slots", "the newest 250 experiences are kept."),
        ("read", 251, "and 251 reads end with", 2, "the read pointer wraps back to slot 0."),
    ],
]


def _memory_cases() -> list[list[tuple]]:
    return _PUBLIC_MEMORY


def _drive_memory(cases, ReplayMemory) -> list[list]:  # noqa: N803 (the exercise's class name)
    """For each script, what each step gave: None for a write, a value for a look, or an error
    (after which the script stops)."""
    out = []
    for script in cases:
        seen, memory = [], None
        for step in script:
            kind = step[0]
            if kind == "new":
                memory = attempt(f"ReplayMemory({step[1]})", ReplayMemory, step[1])
                value = memory if is_error(memory) else None
            elif kind == "write":
                value = attempt(f"write({step[1]!r})", lambda m, item: m.write(item), memory, step[1])
            elif kind == "slots":
                value = attempt("slots", lambda m, n: list(m.slots)[:n] if n else list(m.slots), memory, step[1])
            elif kind == "write_pointer":
                value = attempt("write_pointer", lambda m: m.write_pointer, memory)
            elif kind == "len":
                value = attempt("len(memory)", len, memory)
            else:
                value = []
                for _ in range(step[1]):
                    item = attempt("read()", lambda m: m.read(), memory)
                    if is_error(item):
                        value = item
                        break
                    value.append(item)
                else:
                    value = value[-step[3] :] if step[3] else value
            seen.append(encode(value))
            if is_error(value):
                break
        out.append(seen)
    return out


def _look(step: tuple) -> tuple[str, str]:
    """What a look step shows the student, and its hint."""
    return (step[2], step[-1]) if step[0] in ("slots", "read") else (step[1], step[2])


def _judge_memory(got: list[list], expected: list[list], cases) -> None:
    for script, mine, reference in zip(cases, got, expected, strict=True):
        for index, step in enumerate(script):
            if index >= len(mine):
                raise Problem("the record of your memory stops early.")
            value = mine[index]
            raise_if_error(value)
            if step[0] in ("new", "write"):
                continue
            what, hint = _look(step)
            if isinstance(value, Opaque) or value != reference[index]:
                raise Problem(f"{what}: expected {reference[index]!r}, got {shown(value)}. Hint: {hint}")


MEMORY = Exercise(
    name="ReplayMemory",
    grade_id="test_replay_memory",
    cases=_memory_cases,
    drive=_drive_memory,
    judge=_judge_memory,
    reference=("ReplayMemory",),
    one_per_case="scripts",
)


def check_replay_memory(ReplayMemory) -> bool:  # noqa: N803 (the exercise's class name)
    """Check a ``ReplayMemory(capacity)`` class with ``write(x)``, ``read()`` and ``len``.

    The expected behaviour: ``write`` puts the experience in ``slots[write_pointer]`` and
    moves the pointer on, wrapping to 0 after the last slot (so the oldest is overwritten
    first); ``read`` returns ``slots[read_pointer]`` and moves that pointer on, wrapping
    after the last filled slot.
    """
    return MEMORY.check(ReplayMemory)


# --------------------------------------------------------------------------------------
# Exercise 2: the replay actor loss
#
# A case is plain data: the log-probabilities log_pi (T,) the current policy gives the stored
# actions, the probabilities mu (T,) the acting policy gave them, the advantages (T,) and the cap,
# with what the hints compare a wrong answer with (``hints``: the ratios, the loss of each typical
# mistake, the gradient when rho is not detached). The course computes those in
# ``course_admin.colour.rho_judge``; the public cases are stored with them at release time
# (``colour.expected``), and the grader's hidden cases carry their own.


def _actor_cases() -> list[dict]:
    return load_expected()["replay_actor_cases"]


HINTS = {
    "no cap": "rho is never capped. Cap the ratio itself, rho = min(pi / mu, rho_max) (torch.clamp(ratio, "
              "max=rho_max)); capping log pi changes nothing, since log pi is never above 0.",
    "inverted": "the ratio is upside down: rho = pi / mu, the current policy's probability over the one that "
                "acted (mu, stored in the memory), not mu / pi.",
    "inverted, no cap": "the ratio is upside down and never capped: rho = min(pi / mu, rho_max).",
    "cap in log space": "you capped log(pi / mu) at rho_max, which caps rho at exp(rho_max). Cap the ratio itself: "
                        "min(pi / mu, rho_max).",
    "log ratio": "your weight is log(pi / mu): exponentiate the log-ratio to get rho = pi / mu.",
    "no ratio": "your loss does not weigh the trials by rho at all: multiply each trial's -log pi * A by "
                "rho = min(pi / mu, rho_max).",
    "sign": "the sign is flipped: minimise -mean(rho * log pi * A), so that actions with a positive advantage "
            "become more likely.",
    "sum": "average over the trials (mean), do not sum them.",
    "cap below": "you took the larger of the ratio and the cap (max, or clamp(min=...)): rho = min(pi / mu, rho_max) "
                 "keeps the ratios below the cap and cuts those above it (torch.clamp(ratio, max=rho_max)).",
}
"""The hint for each typical mistake of the replay actor loss, by name."""


def _loss_hint(case: dict, got: float) -> str:
    """The hint for a loss of ``got`` on ``case`` where the right answer differs: the first typical
    mistake whose stored loss it is."""
    for name, value in case["hints"]["wrong_losses"]:
        if close(got, value, 1e-4):
            return HINTS[name]
    return "loss = -mean(min(pi / mu, rho_max) * log_pi * advantage), with pi = exp(log_pi)."


def _grad_hint(case: dict, got: np.ndarray) -> str:
    """The hint for a gradient with respect to log_pi of ``got`` where the right one differs."""
    undetached = np.asarray(case["hints"]["undetached_grad"], dtype=float)
    if got.shape == undetached.shape and np.allclose(got, undetached, rtol=1e-4, atol=1e-6):
        return ("rho is not detached: the gradient also flows through pi = exp(log_pi) inside the ratio. rho is a "
                "weight, not something to train: compute it from log_pi.detach().")
    return "the gradient should be -rho * advantage / T per trial: only log_pi carries it, rho and the advantage are detached."


def _tensor_record(value):
    """A tensor the check handed in and the answer left a gradient on, as its numbers (or None)."""
    return None if value is None else facts.numbers(value)


def _drive_actor(cases, replay_actor_loss) -> list[dict]:
    out = []
    for case in cases:
        log_pi = torch.tensor(case["log_pi"], dtype=torch.float32, requires_grad=True)
        mu = torch.tensor(case["mu"], dtype=torch.float32)
        advantage = torch.tensor(case["advantage"], dtype=torch.float32, requires_grad=True)
        # The advantage handed over is the case's numbers plus log_pi - log_pi.detach() (zero): an
        # answer that does not detach it also back-propagates advantage * log_pi through that term,
        # which changes the gradient on log_pi the judge compares with the course's, whatever the
        # answer's process records of the advantage's own gradient.
        given = facts.plus_attached(advantage, log_pi)
        loss = attempt("replay_actor_loss(log_pi, mu, advantage, rho_max)", replay_actor_loss, log_pi, mu, given,
                       case["rho_max"])
        record = {"error": loss} if is_error(loss) else {}
        if not record:
            tensor = facts.real_tensor(loss)
            record["tensor"] = tensor
            record["returned"] = type(loss).__name__
            record["dim"] = facts.dim(loss)
            record["loss"] = encode(facts.numbers(loss)) if tensor else None
            record["requires_grad"] = tensor and facts.requires_grad(loss)
            if record["requires_grad"] and record["dim"] == 0:
                record["backward"] = attempt("loss.backward()", facts.backward, loss)
                record["grad_log_pi"] = encode(_tensor_record(facts.grad(log_pi)))
                record["grad_advantage"] = encode(_tensor_record(facts.grad(advantage)))
        # the inputs as they are now: the judge compares them with the case's own numbers
        record["inputs_after"] = [encode(facts.numbers(t)) for t in (log_pi, mu, given)]
        out.append(record)
    return out


def _judge_actor(got: list[dict], expected: list[dict], cases) -> None:
    for case, mine, reference in zip(cases, got, expected, strict=True):
        if type(mine) is not dict:
            raise Problem("the record of your answer could not be read.")
        what = f"on {case['what']}"
        raise_if_error(mine.get("error"))
        if mine.get("tensor") is not True or mine.get("dim") != 0:
            raise Problem(f"{what}, replay_actor_loss should return the loss as a one-number torch tensor (shape ()), "
                          f"got {mine.get('returned')} with {mine.get('dim')} dimensions. Hint: take the mean over the "
                          "trials.")
        if mine.get("requires_grad") is not True:
            raise Problem(f"{what}, your loss has no gradient. Hint: detach rho and the advantage, not log_pi: the "
                          "actor learns through log_pi.")
        got_loss = float(np.asarray(mine["loss"], dtype=float).reshape(-1)[0])
        want = float(np.asarray(reference["loss"], dtype=float).reshape(-1)[0])
        if not close(got_loss, want, 1e-4):
            raise Problem(f"{what} (rhos {fmt(case['hints']['ratios'])}, cap {case['rho_max']:g}): the loss should be "
                          f"{want:.5f}, got {got_loss:.5f}. Hint: {_loss_hint(case, got_loss)}")
        backward = mine.get("backward")
        if isinstance(backward, StudentError):
            raise_if_error(backward)
        grad_advantage = mine.get("grad_advantage")
        if grad_advantage is not None and np.any(np.asarray(grad_advantage, dtype=float) != 0):
            raise Problem(f"{what}, your loss sends a gradient into the advantage. Hint: the advantage is not detached: "
                          "use advantage.detach(), or the actor's term would train the critic too (the critic learns "
                          "from its own loss).")
        grad = mine.get("grad_log_pi")
        if grad is None or isinstance(grad, Opaque):
            raise Problem(f"{what}, no gradient reached log_pi. Hint: the actor learns through log_pi: detach rho and "
                          "the advantage, not log_pi.")
        grad = np.asarray(grad, dtype=float)
        want_grad = np.asarray(reference["grad_log_pi"], dtype=float)
        if grad.shape != want_grad.shape or not np.allclose(grad, want_grad, rtol=1e-4, atol=1e-6):
            raise Problem(f"{what}, the loss is right but its gradient with respect to log_pi is not: expected "
                          f"{fmt(want_grad)}, got {fmt(grad)}. Hint: {_grad_hint(case, grad)}")
        if not _inputs_unchanged(mine.get("inputs_after"), reference["inputs_after"]):
            raise Problem(f"{what}, your function changed the tensors it was given; compute new ones instead.")


def _inputs_unchanged(after, given) -> bool:
    """Whether the recorded inputs after the call (log_pi, mu, advantage) are ``given``: the course's
    record of them after its own answer ran on the same case (the case's numbers, as float32)."""
    if type(after) is not list or len(after) != len(given):
        return False
    try:
        return all(np.array_equal(np.asarray(got, dtype=np.float32), np.asarray(want, dtype=np.float32))
                   for got, want in zip(after, given, strict=True))
    except (TypeError, ValueError):
        return False


ACTOR = Exercise(
    name="replay_actor_loss",
    grade_id="test_replay_actor_loss",
    cases=_actor_cases,
    drive=_drive_actor,
    judge=_judge_actor,
    reference=("replay_actor_loss",),
    one_per_case="cases",
)


def check_replay_actor_loss(replay_actor_loss) -> bool:
    """Check ``replay_actor_loss(log_pi, mu, advantage, rho_max)`` -> the actor's loss, a scalar tensor:
    ``-mean(rho * log_pi * advantage)`` with ``rho = min(exp(log_pi) / mu, rho_max)``, rho and the
    advantage detached (log_pi, mu, advantage: tensors (T,))."""
    return ACTOR.check(replay_actor_loss)


EXERCISES = {exercise.grade_id: exercise for exercise in (MEMORY, ACTOR)}
"""This tutorial's exercises by the grade id of their hidden-test cell."""
