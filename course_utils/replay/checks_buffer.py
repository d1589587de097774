"""Tutorial 4's Exercise 3 check (the prioritized replay buffer, ``BUFFER``); its hidden test builds
the buffer on ``standin_trees`` and ``standin_memory`` (which, once full, overwrites its slots in
another order than a ring). The judge reads which slot each transition took from what ``store``
returned (checked against the rewards sampled there), so it judges the buffer on any memory. The
drive writes a ``check_log._Log``, as the tutorial's other checks do.
"""

from __future__ import annotations

import math

import numpy as np

from course_utils import facts
from course_utils.check_helpers import number, numbers
from course_utils.checking import TIME_LIMIT, Exercise, Problem, Timeout, fmt, time_limit
from course_utils.replay.check_log import _drive_log, _Log, _passed, _seen

# --------------------------------------------------------------------------------------
# Exercise 3: the prioritized replay buffer
#
# Five parts, each a buffer built from plain parameters: "first" (new transitions get the max
# priority, updates, refusals), "newest" (the newest transition counts in the total), "uniform"
# (alpha 0: a batch of n from n takes each once), "frequencies" (P(i) and the weights) and
# "overwrite" (once the memory is full, a new transition's priority goes to the slot store
# returned, which is not len(self) - 1 on a ring nor on the hidden test's stand-in memory).
# Sampling uses a numpy Generator the drive makes from the case's seed.

KEYS = ("obs", "next_obs", "acts", "rews", "done", "weights", "indices")
"""What ``sample_batch`` returns."""

_NAN = float("nan")


def _buffer_cases() -> dict:
    return {
        "first": {"size": 8, "batch_size": 2, "alpha": 0.5, "stored": 3, "high": [1, 9.0], "low": [0, 0.25],
                  "bad_priorities": [0.0, -1.0, _NAN], "bad_indices": [4, 7, 8, -1]},
        "newest": {"size": 8, "batch_size": 4, "alpha": 1.0, "stored": 5, "priorities": [1.0, 1.0, 1.0, 1.0, 96.0],
                   "beta": 0.4, "seeds": [0]},
        "uniform": {"size": 4, "batch_size": 4, "alpha": 0.0, "stored": 4, "priorities": [0.01, 1.0, 10.0, 100.0],
                    "beta": 1.0, "seeds": [0, 1, 2, 3, 4]},
        "frequencies": {"size": 6, "batch_size": 4, "alpha": 0.6, "stored": 6,
                        "priorities": [0.1, 1.0, 2.0, 4.0, 0.5, 8.0], "beta": 0.5, "seeds": [4], "draws": 1000},
        "overwrite": {"size": 4, "batch_size": 2, "alpha": 0.5, "priorities": [4.0, 0.25, 1.0, 2.25], "more": 2},
    }


def _new(log: _Log, buffer_class, part: dict, name: str):
    size, batch_size, alpha = part["size"], part["batch_size"], part["alpha"]
    what = f"PrioritizedReplayBuffer(obs_dim=2, size={size}, batch_size={batch_size}, alpha={alpha})"
    return log.call(f"{name}: new", what, buffer_class, 2, size, batch_size, alpha, keep=False)


def _store(buffer, t: int):
    return buffer.store([t, -t], t % 2, float(t), [t + 1, -t - 1], t % 5 == 4)


def _fill(log: _Log, buffer, n: int, start: int = 0, name: str = "") -> None:
    """Store transitions ``start .. start + n - 1``; with a ``name``, record the slots ``store``
    returned under ``"{name}: slots"``."""
    slots = [log.call(f"store {t}", f"store (transition {t})", _store, buffer, t, keep=False) for t in range(start, start + n)]
    if name:
        log.note(f"{name}: slots", [facts.as_array(slot).tolist() for slot in slots])


def _leaf(buffer, tree: str, index: int):
    return getattr(buffer, tree)[index]


def _refusal(fn, *args) -> dict:
    """How a call that must be refused ended: the exception's type name and what it is an
    instance of, or ``raised: None`` when it was accepted."""
    try:
        with time_limit(TIME_LIMIT):
            fn(*args)
    except Timeout:
        return {"raised": "Timeout", "value_error": False, "index_error": False}
    except Exception as error:
        # By the error's real type: isinstance would also believe a __class__ the error claims.
        kind = type(error)
        return {"raised": kind.__name__, "value_error": issubclass(kind, ValueError), "index_error": issubclass(kind, IndexError)}
    return {"raised": None, "value_error": False, "index_error": False}


def _sample(log: _Log, buffer, beta: float, rng, name: str) -> None:
    """One ``sample_batch``: which keys are missing and the raw indices, rewards and weights."""
    batch = log.call(f"{name}: batch", f"sample_batch(beta={beta})", lambda: buffer.sample_batch(beta, rng), keep=False)
    missing = log.call(f"{name}: missing", "sample_batch's keys", lambda: [key for key in KEYS if key not in batch])
    for key in ("indices", "rews", "weights"):
        if key not in missing:
            log.call(f"{name}: {key}", f"sample_batch()[{key!r}]", lambda key: batch[key], key)


_FULL = 20
"""Batches recorded whole (keys, indices, rewards, weights) per seed; the frequencies' later
draws record only their indices (the record stays small)."""


def _indices_of(buffer, beta: float, rng) -> list:
    return facts.as_array(buffer.sample_batch(beta, rng)["indices"]).tolist()


def _buffer_steps(log: _Log, buffer_class, cases: dict) -> None:
    part = cases["first"]
    buffer = _new(log, buffer_class, part, "first")
    stored, (high, high_p), (low, low_p) = part["stored"], part["high"], part["low"]
    _fill(log, buffer, stored)
    log.each("leaves", [(f"sum_tree[{i}]", _leaf, buffer, "sum_tree", i) for i in range(stored)])
    log.call("update high", f"update_priorities([{high}], [{high_p}])", lambda: buffer.update_priorities([high], [high_p]))
    log.call("update low", f"update_priorities([{low}], [{low_p}])", lambda: buffer.update_priorities([low], [low_p]))
    log.call("max_priority", "max_priority", lambda: buffer.max_priority)
    log.each("low leaves", [(f"{tree}[{low}]", _leaf, buffer, tree, low) for tree in ("sum_tree", "min_tree")])
    _fill(log, buffer, 1, start=stored)
    log.each("new leaves", [(f"{tree}[{stored}]", _leaf, buffer, tree, stored) for tree in ("sum_tree", "min_tree")])
    log.note("refused priorities", [_refusal(buffer.update_priorities, [low], [bad]) for bad in part["bad_priorities"]])
    log.note("refused indices", [_refusal(buffer.update_priorities, [bad], [1.0]) for bad in part["bad_indices"]])
    log.call("after refusals", f"sum_tree[{low}]", _leaf, buffer, "sum_tree", low)
    for name in ("newest", "uniform", "frequencies"):
        part = cases[name]
        buffer = _new(log, buffer_class, part, name)
        _fill(log, buffer, part["stored"], name=name)
        n = min(part["stored"], part["size"])
        update = (lambda b, i, p: b.update_priorities(i, p))
        log.call(f"{name}: update", "update_priorities", update, buffer, np.arange(n), np.array(part["priorities"]), keep=False)
        for seed in part["seeds"]:
            rng = np.random.default_rng(seed)
            draws = part.get("draws", 1)
            for draw in range(min(draws, _FULL)):
                _sample(log, buffer, part["beta"], rng, f"{name} {seed} {draw}")
            if draws > _FULL:  # the rest only for the frequencies: their indices, as plain lists
                what = f"sample_batch(beta={part['beta']})"
                more = [(what, _indices_of, buffer, part["beta"], rng) for _ in range(_FULL, draws)]
                log.each(f"{name} {seed}: more indices", more)
    if "overwrite" in cases:
        _overwrite_steps(log, buffer_class, cases["overwrite"])


def _overwrite_steps(log: _Log, buffer_class, part: dict) -> None:
    """Fill the buffer, give every slot a priority, store ``more`` transitions over the oldest and
    record the slots ``store`` returned, the rewards held there and both trees' leaves."""
    size = part["size"]
    buffer = _new(log, buffer_class, part, "overwrite")
    _fill(log, buffer, size)
    update = (lambda b, p: b.update_priorities(np.arange(size), p))
    log.call("overwrite: update", "update_priorities", update, buffer, np.array(part["priorities"]), keep=False)
    _fill(log, buffer, part["more"], start=size, name="overwrite")
    rewards = (lambda b, slots: facts.as_array(b._batch(np.asarray(slots, dtype=np.int64))["rews"]).tolist())
    log.call("overwrite: rews", "self._batch(slots)['rews']", rewards, buffer, log.seen["overwrite: slots"])
    log.each("overwrite: leaves", [(f"{tree}[{i}]", _leaf, buffer, tree, i) for tree in ("sum_tree", "min_tree")
                                   for i in range(size)])


def _drive_buffer(cases: dict, buffer_class) -> dict:
    return _drive_log(_buffer_steps, buffer_class, cases)


def _slots(got: dict, name: str, n: int, size: int) -> list[int]:
    """The ``n`` slots ``store`` returned in part ``name``, each an int in 0 .. size - 1."""
    slots = _seen(got, f"{name}: slots")
    if type(slots) is not list or len(slots) != n or any(type(s) is not int or not 0 <= s < size for s in slots):
        raise Problem(f"store should return the slot the transition took (an int in 0-{size - 1}), got {slots}. "
                      "Hint: return the index super().store returned.")
    return slots


def _stored_rewards(got: dict, name: str, part: dict) -> np.ndarray:
    """The reward of the transition in each slot: transition t, reward t, went to the t-th slot
    ``store`` returned (a later one overwrites an earlier one)."""
    rewards = np.zeros(part["size"])
    for t, slot in enumerate(_slots(got, name, part["stored"], part["size"])):
        rewards[slot] = t
    return rewards


def _judge_sample(got: dict, name: str, part: dict, held: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sampled indices and weights, after the checks every batch must pass (``held``: the
    reward of the transition in each slot)."""
    _passed(got, f"{name}: batch")
    missing = _seen(got, f"{name}: missing")
    for key in KEYS:
        if type(missing) is not list or key in missing:
            raise Problem(
                f"sample_batch returned no {key!r}. It should return the arrays of ReplayBuffer plus 'weights' and 'indices'."
            )
    indices = numbers(_seen(got, f"{name}: indices"), "sample_batch's indices")
    if indices.shape != (part["batch_size"],):
        raise Problem(f"sample_batch gave {indices.size} indices, expected batch_size = {part['batch_size']}.")
    n = min(part["stored"], part["size"])
    if np.any(indices != np.round(indices)) or indices.min() < 0 or indices.max() >= n:
        bad = indices[(indices != np.round(indices)) | (indices < 0) | (indices >= n)][0]
        raise Problem(f"sample_batch gave index {bad:g} but only 0-{n - 1} hold transitions.")
    indices = indices.astype(int)
    rewards = numbers(_seen(got, f"{name}: rews"), "sample_batch's rews")
    if rewards.shape != indices.shape or not np.array_equal(rewards, held[indices]):
        raise Problem("the rewards returned do not belong to the indices returned. Hint: use self._batch(indices).")
    return indices, numbers(_seen(got, f"{name}: weights"), "sample_batch's weights").reshape(-1)


def _judge_first(got: dict, part: dict) -> None:
    stored, (_, high_p), (low, low_p), alpha = part["stored"], part["high"], part["low"], part["alpha"]
    leaves = [number(v, f"sum_tree[{i}]") for i, v in enumerate(_seen(got, "leaves"))]
    if leaves != [1.0] * stored:
        raise Problem(
            f"after storing {stored} transitions into a new buffer, the sum tree's leaves 0-{stored - 1} are {leaves}, "
            "expected 1.0 each (max_priority 1.0 to the power alpha). Hint: set both trees in store."
        )
    _seen(got, "update high")
    _seen(got, "update low")
    max_priority = number(_seen(got, "max_priority"), "max_priority")
    if max_priority != high_p:
        raise Problem(
            f"after priorities {high_p} then {low_p}, max_priority is {max_priority}, expected {high_p} (it never shrinks)."
        )
    in_sum, in_min = (number(v, f"leaf {low}") for v in _seen(got, "low leaves"))
    if not math.isclose(in_sum, low_p**alpha) or not math.isclose(in_min, low_p**alpha):
        raise Problem(
            f"priority {low_p} with alpha {alpha}: leaf {low} should be {low_p} ** {alpha} = {low_p**alpha:g} in both trees, "
            f"got {in_sum} and {in_min}."
        )
    in_sum, in_min = (number(v, f"leaf {stored}") for v in _seen(got, "new leaves"))
    if not math.isclose(in_sum, high_p**alpha) or not math.isclose(in_min, high_p**alpha):
        raise Problem(
            f"a transition stored after max_priority reached {high_p:g} should get {high_p:g} ** {alpha} = "
            f"{high_p**alpha:g} in both trees, got {in_sum} and {in_min}."
        )
    for bad, how in zip(part["bad_priorities"], _refusals(got, "refused priorities", part["bad_priorities"]), strict=True):
        call = f"update_priorities([{low}], [{bad}])"
        _judge_refusal(how, call, "ValueError", "value_error", f"{call} was accepted; priorities must be > 0: raise ValueError.")
    n = stored + 1
    for bad, how in zip(part["bad_indices"], _refusals(got, "refused indices", part["bad_indices"]), strict=True):
        call = f"update_priorities([{bad}], [1.0])"
        _judge_refusal(how, f"{call} with {n} transitions stored", "IndexError", "index_error",
                       f"{call} was accepted with {n} transitions stored; indices must be in [0, len(self)): raise IndexError.")
    if not math.isclose(number(_seen(got, "after refusals"), f"sum_tree[{low}]"), low_p**alpha):
        raise Problem("a refused update_priorities call changed the tree: check everything before writing.")


def _refusals(got: dict, name: str, calls: list) -> list:
    refused = _seen(got, name)
    if type(refused) is not list or len(refused) != len(calls):
        raise Problem(f"the record of your answer is damaged ({name}).")
    return refused


def _judge_refusal(how, call: str, wanted: str, flag: str, accepted: str) -> None:
    if type(how) is not dict or type(how.get("raised")) not in (str, type(None)):
        raise Problem(f"the record of {call} is damaged.")
    if how["raised"] == "Timeout":
        raise Problem(f"{call} did not finish within {TIME_LIMIT:g} s. Look for a loop that never ends.")
    if how["raised"] is None:
        raise Problem(accepted)
    if how.get(flag) is not True:
        raise Problem(f"{call} raised {how['raised']}; it should raise {wanted}.")


def _judge_buffer(got: dict, expected: dict, cases: dict) -> None:
    _judge_first(got, cases["first"])
    part = cases["newest"]
    n = part["stored"]
    scaled = np.array(part["priorities"]) ** part["alpha"]
    held = _stored_rewards(got, "newest", part)
    _passed(got, "newest: update")
    for seed in part["seeds"]:
        indices, _ = _judge_sample(got, f"newest {seed} 0", part, held)
        if np.sum(indices == n - 1) < part["batch_size"] - 1:
            raise Problem(
                f"{n} transitions, the newest (index {n - 1}) with {scaled[-1] / scaled.sum():.0%} of the priority: it came "
                f"{int(np.sum(indices == n - 1))} times in a batch of {part['batch_size']}. Hint: the total is "
                "sum_tree.sum(0, len(self)) (half-open: it includes the newest) or simply sum_tree.sum()."
            )
    part = cases["uniform"]
    n = min(part["stored"], part["size"])
    held = _stored_rewards(got, "uniform", part)
    _passed(got, "uniform: update")
    for seed in part["seeds"]:
        indices, weights = _judge_sample(got, f"uniform {seed} 0", part, held)
        if sorted(indices.tolist()) != list(range(n)):
            raise Problem(
                f"alpha 0, {n} transitions, batch of {part['batch_size']}: got indices {indices.tolist()}, expected each once. "
                "Hint: stratify: cut the total into batch_size equal segments and draw one prefix sum in each."
            )
        if weights.shape != indices.shape or not np.allclose(weights, 1.0):
            raise Problem(f"alpha 0 (uniform): every weight should be 1, got {fmt(weights)}.")
    _judge_frequencies(got, cases["frequencies"])
    if "overwrite" in cases:
        _judge_overwrite(got, cases["overwrite"])


def _judge_frequencies(got: dict, part: dict) -> None:
    alpha, beta, n = part["alpha"], part["beta"], min(part["stored"], part["size"])
    priorities = np.array(part["priorities"])
    scaled = priorities**alpha
    p = scaled / scaled.sum()
    max_weight = (n * p.min()) ** -beta
    counts = np.zeros(n)
    held = _stored_rewards(got, "frequencies", part)
    _passed(got, "frequencies: update")
    for seed in part["seeds"]:
        for draw in range(min(part["draws"], _FULL)):
            indices, weights = _judge_sample(got, f"frequencies {seed} {draw}", part, held)
            np.add.at(counts, indices, 1)
            expected = (n * p[indices]) ** -beta / max_weight
            if weights.shape != expected.shape or not np.allclose(weights, expected, rtol=1e-4):
                raise Problem(
                    f"priorities {fmt(priorities)}, alpha {alpha}, beta {beta}: for indices {indices.tolist()} the weights "
                    f"were {fmt(weights)}, expected {fmt(expected)}. Hint: w_i = (N * P(i)) ** -beta divided by the "
                    "largest possible weight, (N * p_min / total) ** -beta, with p_min from the min tree."
                )
        later = _seen(got, f"frequencies {seed}: more indices") if part["draws"] > _FULL else []
        if type(later) is not list or len(later) != max(part["draws"] - _FULL, 0):
            raise Problem("the record of your answer is damaged (the frequencies' draws).")
        for more in later:
            indices = numbers(more, "sample_batch's indices")
            if indices.shape != (part["batch_size"],) or np.any(indices != np.round(indices)) or not np.all(
                (indices >= 0) & (indices < n)
            ):
                raise Problem(
                    f"sample_batch gave indices {more}, expected batch_size = {part['batch_size']} indices in 0-{n - 1}."
                )
            np.add.at(counts, indices.astype(int), 1)
    frequencies = counts / counts.sum()
    if not np.allclose(frequencies, p, atol=0.02):
        raise Problem(
            f"priorities {fmt(priorities)} with alpha {alpha}: sampled frequencies {fmt(frequencies)}, expected "
            f"P(i) = p_i^alpha / sum_k p_k^alpha = {fmt(p)}."
        )


def _judge_overwrite(got: dict, part: dict) -> None:
    size, alpha, more = part["size"], part["alpha"], part["more"]
    _passed(got, "overwrite: update")
    slots = _slots(got, "overwrite", more, size)
    rewards = _seen(got, "overwrite: rews")
    if type(rewards) is not list or [number(r, "a reward") for r in rewards] != list(range(size, size + more)):
        raise Problem(f"once the buffer is full, store returned slots {slots} for transitions {size}-{size + more - 1}, "
                      f"but those slots hold rewards {rewards}. Hint: return the index super().store returned.")
    leaves = [number(v, "a leaf") for v in _seen(got, "overwrite: leaves")]
    top = max(1.0, *part["priorities"]) ** alpha
    expected = [p**alpha for p in part["priorities"]]
    for slot in slots:
        expected[slot] = top
    for tree, got_leaves in (("sum_tree", leaves[:size]), ("min_tree", leaves[size:])):
        if not np.allclose(got_leaves, expected, rtol=1e-6):
            raise Problem(
                f"a full buffer of {size} with priorities {fmt(np.array(part['priorities']))} (alpha {alpha}), then "
                f"{more} transitions stored over the oldest, into slots {slots} (what store returned): {tree}'s leaves "
                f"are {fmt(np.array(got_leaves))}, expected {fmt(np.array(expected))} (max priority at those slots). "
                f"Hint: give the max priority to the index store returned, not to len(self) - 1 ({size - 1} once full)."
            )


BUFFER = Exercise(
    name="PrioritizedReplayBuffer",
    grade_id="test_prioritized_buffer",
    cases=_buffer_cases,
    drive=_drive_buffer,
    judge=_judge_buffer,
    reference=("PrioritizedReplayBuffer",),
)


def check_prioritized_buffer(buffer_class) -> bool:
    """Check a ``PrioritizedReplayBuffer(obs_dim, size, batch_size, alpha)`` with ``store``,
    ``sample_batch(beta, rng)`` and ``update_priorities(indices, priorities)``."""
    return BUFFER.check(buffer_class)


EXERCISES = {BUFFER.grade_id: BUFFER}
"""This module's exercise by the grade id of its hidden-test cell."""
