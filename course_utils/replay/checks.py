"""Checks for tutorial 4's Exercises 1-2: the circular memory's batch insert and the segment
trees. Exercise 3, the prioritized replay buffer, is checked in ``checks_buffer`` (its hidden test
builds the buffer on ``standin_trees`` and ``standin_memory``), Exercise 4, the importance-weighted TD loss, in
``checks_td``; the record their drives write is ``check_log``'s.

Each exercise is an ``Exercise`` (see ``checking``): ``drive`` runs the student's answer on a
list of cases and records what came back; ``judge`` finds the first thing wrong, with a hint.
The check cell runs both on the public cases; grading runs ``drive`` on the hidden cases in the
student's kernel and ``judge`` in the grader.
"""

from __future__ import annotations

import math
import time

import numpy as np
import torch

from course_utils import check_helpers, checking, facts
from course_utils.check_helpers import numbers
from course_utils.checking import Exercise, Problem, Timed, fmt
from course_utils.records import Opaque, StudentError
from course_utils.replay.check_log import _drive_log, _passed, _seen

# --------------------------------------------------------------------------------------
# Exercise 1: the circular memory's batch insert


def _numbered_batch(first: int, n: int) -> dict[str, torch.Tensor]:
    """n transitions numbered first .. first + n - 1 (the number is in every field)."""
    ids = torch.arange(first, first + n)
    return {
        "state": ids.float().unsqueeze(1).repeat(1, 4),
        "action": ids % 2,
        "reward": ids.float(),
        "next_state": ids.float().unsqueeze(1).repeat(1, 4) + 0.5,
        "done": (ids % 7 == 6).float(),
        "step": ids,
        "episode_id": ids // 7,
    }


def _add_cases() -> list[tuple[int, list[int]]]:
    """(capacity, the sizes of the batches added one after the other); no batch is longer than
    the memory (``prepare`` keeps only the newest ``capacity`` of a longer one)."""
    return [(20, [5] * 11 + [10]), (7, [3, 3, 3, 3, 1, 7])]


_FIELDS = ("step", "state", "reward", "episode_id")
"""The fields the check compares slot by slot."""


def _after_add(memory) -> dict:
    """What the memory holds: whether it was allocated, and its fields (None before). Read from the
    memory's own attributes and dict (``facts``): the answer's subclass could give ``memory`` a
    property, or its dict a ``__getitem__``, that shows the slots the check wants."""
    held = facts.attribute(memory, "memory")
    if held is None:
        return None
    if not issubclass(type(held), dict):
        return held
    return {key: facts.entry(held, key) for key in _FIELDS}


def _add_steps(log, memory_class, capacity: int, sizes: list[int]) -> None:
    name = getattr(memory_class, "__name__", "CircularMemory")
    memory = log.call("new", f"{name}({capacity}, batch_size=4, warmup=1)", memory_class, capacity, 4, 1, keep=False)
    count, adder = 0, memory
    for index, size in enumerate(sizes):
        batch = _numbered_batch(count, size)
        before = f"after adding {count} transitions" if count else "into an empty memory"
        result = log.call(f"{index}: add", f"add (a batch of {size}, {before}, capacity {capacity})",
                          lambda adder, batch: adder.add(batch), adder, batch, keep=False)
        log.note(f"{index}: returned", "self" if result is memory else "nothing" if result is None else "other")
        adder = _next_adder(memory, result)
        log.call(f"{index}: memory", "memory.memory", _after_add, memory)
        # len(memory) is CircularReplayMemory's self.size, and sampling reads self.size: read that
        # (an overridden __len__ could report the right length over a wrong size), and the pointer.
        log.call(f"{index}: len", "len(memory)", facts.attribute, memory, "size")
        log.call(f"{index}: pointer", "memory.pointer", facts.attribute, memory, "pointer")
        count += size


def _next_adder(memory, returned):
    """What the next batch is added through: what ``add`` returned, or the memory when it returned
    nothing. Everything is read from ``memory``, so an ``add`` that returns another object (a copy)
    shows in the slots the judge compares, whatever the record says it returned."""
    return memory if returned is None else returned


def _drive_add(cases, memory_class) -> list[dict]:
    return [_drive_log(_add_steps, memory_class, capacity, sizes) for capacity, sizes in cases]


def _judge_add(got: list, expected: list, cases) -> None:
    for (capacity, sizes), log, want in zip(cases, got, expected, strict=True):
        _passed(log, "new")
        count = 0
        for index, size in enumerate(sizes):
            _passed(log, f"{index}: add", "Hint: when the batch runs past the last slot, write the first part up to the end "
                  "and the rest from slot 0.")
            count += size
            _judge_memory(log, want, index, count, f"capacity {capacity}, after adding batches of sizes "
                          f"{_sizes_so_far(sizes, count)}")


def _judge_memory(log: dict, want: dict, index: int, count: int, what: str) -> None:
    """The memory after the ``index``-th add (``count`` transitions added in all), against the
    course's record of its own memory after the same adds (``want``)."""
    fields = _seen(log, f"{index}: memory")
    if fields is None:
        raise Problem(f"{what}: memory.memory is still None. Call `self.prepare(batch)` first: it allocates it.")
    if type(fields) is not dict:
        raise Problem(f"{what}: memory.memory is {fields!r}, expected a dict of tensors.")
    right = _seen(want, f"{index}: memory")
    held = numbers(right["step"], "the course's steps").astype(int).tolist()  # unfilled slots hold zeros
    steps = numbers(fields.get("step"), f"{what}: the field 'step'")
    got = (steps.astype(int) if np.all(steps == np.round(steps)) else steps).tolist()
    if got != held:
        raise Problem(f"{what}: the slots hold steps {got}, expected {held}. {_add_hint(got, held)}")
    for key in ("state", "reward", "episode_id"):
        values = fields.get(key)
        if isinstance(values, Opaque) or not np.array_equal(numbers(values, f"{what}: the field {key!r}"),
                                                            numbers(right[key], f"the course's field {key!r}")):
            raise Problem(
                f"{what}: the field {key!r} does not match 'step' slot by slot. "
                "Hint: write every field of the batch (loop over `batch.items()`), into the same slots."
            )
    size = check_helpers.number(_seen(log, f"{index}: len"), "len(memory)")
    if size != _seen(want, f"{index}: len"):
        raise Problem(
            f"{what}: len(memory) is {size}, expected {_seen(want, f'{index}: len')}. "
            "Hint: self.size grows by n but never beyond the capacity: min(self.size + n, self.capacity)."
        )
    got_pointer = check_helpers.number(_seen(log, f"{index}: pointer"), "memory.pointer")
    pointer = _seen(want, f"{index}: pointer")
    if got_pointer != pointer:
        raise Problem(
            f"{what}: memory.pointer is {got_pointer}, expected {pointer} (the slot the next transition goes to). "
            "Hint: move it on by n and wrap it with % self.capacity."
        )
    if _seen(log, f"{index}: returned") not in ("self", "nothing"):
        raise Problem("add should return the memory itself (`return self`) or nothing.")


def _sizes_so_far(sizes: list[int], total: int) -> list[int]:
    out, count = [], 0
    for size in sizes:
        if count >= total:
            break
        out.append(size)
        count += size
    return out


def _add_hint(got: list[int], expected: list[int]) -> str:
    if sorted(got) == sorted(expected):
        return "The right transitions are held but in the wrong slots: the part that does not fit goes to slots 0, 1, ..."
    return (
        "Hint: write the batch from slot self.pointer on; the part that runs past the last slot goes to the start "
        "(slots 0, 1, ...)."
    )


ADD = Exercise(
    name="CircularReplayMemory.add",
    grade_id="test_memory_add",
    cases=_add_cases,
    drive=_drive_add,
    judge=_judge_add,
    reference=("CircularMemory",),
    one_per_case="scripts",
)


def check_memory_add(memory_class) -> bool:
    """Check the ``add`` method of a ``CircularReplayMemory`` subclass.

    Replays batches added one by one (filling the memory, then overwriting the oldest, and
    batches that wrap round the end, split in the middle). After every step it compares the
    ``step`` numbers in each slot, the other fields, ``len`` and ``pointer``.
    """
    return ADD.check(memory_class)


# --------------------------------------------------------------------------------------
# Exercise 2: segment trees
#
# A small tree of exact values (sums and minimums over ranges, retrieve at boundaries, a leaf
# overwritten), a big one of random values, and a speed part: wide range sums on a 65 536-leaf
# and a 1 048 576-leaf tree, in alternating blocks. The big tree's CPU time is held to a budget,
# and its ratio to the small tree's to ``GROWTH``: a sum in O(log capacity) costs about as much on
# both, one in O(capacity) (a numpy reduction over the leaves) 16 times as much, less its fixed
# costs. Every timed sum is new work: a fresh random range, after a leaf has changed, so a tree
# that remembers its answers (a slow sum behind a cache) gains nothing; the total of the sums is
# recorded, so the work must also be right. The check cell times the steps in the kernel; when the
# notebook is graded, the grader times them from outside the answer's process (``SPEED``:
# ``checking.Timed``), on steps drawn afresh for each submission. One function, ``_speed_entry``,
# turns either measurement into what the judge reads.


def _tree_cases() -> dict:
    small = {
        "values": [1.0, 0.0, 2.0, 3.0, 0.0, 1.0, 0.0, 0.0],
        "sums": [(0, 8), (0, 4), (0, 3), (3, 4), (2, 6), (5, 5), (1, 7), (7, 8), (0, 1)],
        "mins": [(0, 8), (0, 1), (1, 4), (2, 4), (5, 8), (3, 3)],
        "queries": [0.0, 0.5, 1.0, 2.9, 3.0, 5.99, 6.0, 6.5, 7.0],
        "overwrite": (3, 10.0, -1.0),
        # the nodes of a sum tree on other leaves, put in place of the tree's own
        "swap": {"values": [0.0, 2.0, 1.0, 0.0, 0.0, 3.0, 1.0, 1.0],
                 "nodes": [0.0, 8.0, 3.0, 5.0, 2.0, 1.0, 3.0, 2.0, 0.0, 2.0, 1.0, 0.0, 0.0, 3.0, 1.0, 1.0],
                 "sums": [(0, 8), (0, 4), (4, 8), (2, 6), (1, 7), (6, 8)], "queries": [0.0, 1.5, 2.0, 5.5, 7.9]},
    }
    return tree_cases(small, seed=7, capacity=1024, speed={"capacity": 1 << 20, "seed": 11})


def tree_cases(small: dict, seed: int, capacity: int, speed: dict) -> dict:
    """The small hand-made tree ``small``, a big random one of ``capacity`` leaves with its ranges
    and queries (drawn from ``seed``), and the speed test's tree (``speed``: its capacity and seed)."""
    rng = np.random.default_rng(seed)
    values = rng.uniform(0.0, 2.0, capacity)
    ranges = [sorted(int(x) for x in rng.integers(0, capacity + 1, 2)) for _ in range(100)]
    queries = rng.uniform(0.0, float(values.sum()), 300)
    big = {"values": values.tolist(), "ranges": ranges, "queries": queries.tolist()}
    # count sums on each tree; seconds: the budget of each tree's sums, in CPU seconds
    return {"small": small, "big": big, "speed": {**speed, "small": speed["capacity"] // 16, "count": 1000, "seconds": 0.75}}


def _setter(tree, index: int, value: float) -> None:
    tree[index] = value


def _build(log, cls, values: list[float], name: str):
    tree = log.call(f"{name}: new", f"{cls.__name__}({len(values)})", cls, len(values), keep=False)
    for i, v in enumerate(values):
        log.call(f"{name}: tree[{i}]", f"{cls.__name__}: tree[{i}] = {v:g}", _setter, tree, i, float(v), keep=False)
    return tree


# Bound when this module is imported (the notebook's setup cell, before any answer runs): an answer
# that later replaces time.process_time (a clock that stands still) cannot make a slow tree look
# fast, nor one that replaces np.random.default_rng make every timed range the same (nor builtins.float
# or math.fsum the total).
_cpu, _default_rng, _float, _fsum = time.process_time, np.random.default_rng, float, math.fsum

GROWTH = 2.5
"""The most the big tree's sums may cost, in CPU time per step, per the small tree's (16 times fewer leaves).

Measured timed apart as the grader does (1000 steps per tree in 8 alternating blocks, CPU from the
child's CPU-time clock) on the 2-core grading machine, 3 to 10 runs each. At load 10-13: the
course's tree 1.1-1.25, the same walks over a numpy array 1.2-1.5, a recursive range sum 0.7-1.15;
right trees whose sum is a numpy reduction over the leaves (a copy kept beside the tree, the tree
as a numpy array, no tree at all) 5.1-14; one rebuilt level by level after every write 19. At load
14-17, through ``timed_steps.measure``: the course's tree 1.04-1.11, numpy walks 1.09-1.32, the
recursive sum 1.04-1.43, nodes in a dict 0.99-1.08; the numpy reductions 4.3-6.9 (their fixed cost
per step weighs more under load). Blocks run one tree after the other, not alternating, spread the
course tree's ratio to 0.94-1.39. The limit sits 1.75 times above the highest right tree's ratio
and 1.7 times below the lowest numpy reduction's."""

BLOCKS = 8
"""Blocks of steps per tree, alternating small and big: a change in the machine's load while the
speed part runs falls on both trees alike."""


def _speed_work(capacity: int, count: int, rng) -> dict[str, list[int]]:
    """Work for one tree: before sum k, leaf ``leaves[k]`` is set to ``values[k]`` (a whole number,
    so that every sum is exact in float64); sum k covers [``starts[k]``, ``ends[k]``), at least
    three quarters of the tree."""
    return {
        "leaves": rng.integers(0, capacity, count).tolist(),
        "values": rng.integers(1, 64, count).tolist(),
        "starts": rng.integers(0, capacity // 8, count).tolist(),
        "ends": (capacity - rng.integers(0, capacity // 8, count)).tolist(),
    }


def _speed_works(speed: dict, seed: int) -> list[dict[str, list[int]]]:
    """The speed part's work drawn from ``seed``: the small tree's, then the big tree's."""
    rng = _default_rng(seed)
    return [_speed_work(capacity, speed["count"], rng) for capacity in (speed["small"], speed["capacity"])]


def _speed_steps(cases: dict, seed: int) -> tuple[list, float]:
    """The speed part's steps drawn from ``seed`` (``checking.Timed.steps``): blocks of steps
    [tree, leaf, value, start, end], tree 0 the small one and 1 the big one, alternating; and the
    budget of each tree's steps in CPU seconds (the big tree's is the one that counts)."""
    speed = cases["speed"]
    parts = [list(zip(work["leaves"], work["values"], work["starts"], work["ends"], strict=True))
             for work in _speed_works(speed, seed)]
    size = -(-speed["count"] // BLOCKS)
    blocks = [(part, [[part, *step] for step in steps[first : first + size]])
              for first in range(0, speed["count"], size) for part, steps in enumerate(parts)]
    return blocks, float(speed["seconds"])


def _speed_trees(cases: dict, sum_tree_class, min_tree_class) -> tuple:
    speed = cases["speed"]
    return sum_tree_class(speed["small"]), sum_tree_class(speed["capacity"])


def _speed_step(trees: tuple, step: list[int]) -> float:
    """One timed step: set a leaf, then sum a wide range (a number now: nothing computes later)."""
    part, leaf, value, start, end = step
    tree = trees[part]
    tree[leaf] = _float(value)
    return _float(tree.sum(start, end))


def _speed_entry(cases: dict, measured) -> dict | StudentError | None:
    """The record entry ``_judge_speed`` reads, from a measurement (``checking.Timed.measure``'s,
    the grader's from outside or the check cell's in the kernel): how many steps were answered,
    whether a tree's CPU time ran past the budget, its ratio to the small tree's when that is
    past ``GROWTH`` (None within it, so that the course's stored record holds no timing), and the
    total of the sums (None unless every step was answered with a number)."""
    speed = cases["speed"]
    seed = measured.get("seed") if type(measured) is dict else None
    if type(seed) is not int:
        return StudentError("the grader could not time the speed part of your tree (its run ended before the first "
                            "timed sum).")
    if type(measured.get("error")) is str:
        return StudentError(measured["error"][:500])
    done, counts, seconds, answers = (measured.get(key) for key in ("done", "counts", "cpu_seconds", "answers"))
    if (type(done) is not int or type(answers) is not list or not _pair(seconds, float) or not _pair(counts, int)
            or sum(counts) != done):
        return None
    (small, big), (small_steps, big_steps) = seconds, counts
    complete = done == 2 * speed["count"] and len(answers) == done and all(type(a) is float for a in answers)
    # per step, so that a run stopped past the budget is measured on the steps it did
    growth = (big / big_steps) / (small / small_steps) if small_steps and big_steps and small > 0 else None
    return {"done": done, "over_time": max(small, big) > speed["seconds"],
            "growth": round(growth, 1) if growth is not None and growth > GROWTH else None,
            "total": _fsum(answers) if complete else None, "seed": seed}


def _pair(value, kind: type) -> bool:
    return type(value) is list and len(value) == 2 and all(type(v) is kind for v in value)


SPEED = Timed(start=_speed_trees, answer=_speed_step, steps=_speed_steps, entry=_speed_entry, key="speed")
"""The segment trees' speed part as the grader times it (see ``checking.Timed``)."""


def _speed_here(cases: dict, sum_tree_class, min_tree_class):
    """The check cell's speed part: the steps of the case's own seed, timed in this process's CPU
    time, and judged by the same entry as the grader's measurement."""
    trees = SPEED.start(cases, sum_tree_class, min_tree_class)
    measured = SPEED.measure(cases, cases["speed"]["seed"], lambda step: SPEED.answer(trees, step), _cpu)
    return SPEED.entry(cases, measured)


def _spaced(number: int) -> str:
    return f"{number:,}".replace(",", " ")


def _tree_steps(log, sum_tree_class, min_tree_class, cases: dict) -> None:
    small = cases["small"]
    sums, mins = _build(log, sum_tree_class, small["values"], "sums"), _build(log, min_tree_class, small["values"], "mins")
    # the nodes themselves, read from the instance (no property takes part): the exercise is the tree
    log.note("sums nodes", facts.attribute(sums, "tree"))
    log.note("mins nodes", facts.attribute(mins, "tree"))
    log.each("leaves", [("tree[i]", lambda i: sums[i], i) for i in range(len(small["values"]))])
    log.call("sum()", "sum()", lambda: sums.sum())
    for start, end in small["sums"]:
        log.call(f"sum({start}, {end})", f"sum({start}, {end})", lambda s, e: sums.sum(s, e), start, end)
    for start, end in small["mins"]:
        log.call(f"min({start}, {end})", f"min({start}, {end})", lambda s, e: mins.min(s, e), start, end)
    for prefix_sum in small["queries"]:
        log.call(f"retrieve({prefix_sum})", f"retrieve({prefix_sum})", lambda q: sums.retrieve(q), prefix_sum)
    leaf, in_sum, in_min = small["overwrite"]
    log.call("overwrite", f"tree[{leaf}] = {in_sum:g}", _setter, sums, leaf, in_sum, keep=False)
    log.call("overwrite min", f"tree[{leaf}] = {in_min:g}", _setter, mins, leaf, in_min, keep=False)
    log.each("after overwrite", [("sum()", lambda: sums.sum()), ("min()", lambda: mins.min())])
    # The tree is its nodes: with another tree's nodes put in `self.tree`, sum and retrieve answer
    # for that tree's leaves (a copy of the leaves kept elsewhere answers for the old ones).
    swap = small["swap"]
    swapped = _build(log, sum_tree_class, small["values"], "swap")
    facts.replace_attribute(swapped, "tree", list(swap["nodes"]))
    log.each("swap sums", [(f"sum({s}, {e})", lambda s, e: swapped.sum(s, e), s, e) for s, e in swap["sums"]])
    log.each("swap retrieves", [(f"retrieve({q})", lambda q: swapped.retrieve(q), q) for q in swap["queries"]])
    big = cases["big"]
    sums, mins = _build(log, sum_tree_class, big["values"], "big sums"), _build(log, min_tree_class, big["values"], "big mins")
    log.each("big sums", [(f"sum({s}, {e})", lambda s, e: sums.sum(s, e), s, e) for s, e in big["ranges"]])
    log.each("big mins", [(f"min({s}, {e})", lambda s, e: mins.min(s, e), s, e) for s, e in big["ranges"]])
    log.each("big retrieves", [("retrieve", lambda q: sums.retrieve(q), q) for q in big["queries"]])
    if checking.SUBMISSIONS is None:  # graded, the speed part is timed apart (SPEED) and this entry not read
        speed = cases["speed"]
        log.call("speed", f"{speed['count']} sums over a range of a {_spaced(speed['small'])}-leaf and of a "
                 f"{_spaced(speed['capacity'])}-leaf tree", _speed_here, cases, sum_tree_class, min_tree_class)


def _drive_trees(cases: dict, sum_tree_class, min_tree_class) -> dict:
    return _drive_log(_tree_steps, sum_tree_class, min_tree_class, cases)


def _judge_trees(got: dict, expected: dict, cases: dict) -> None:
    from course_utils.replay.tree_judge import judge_layout  # never in the grader's drive

    small = cases["small"]
    values = np.array(small["values"])
    total = float(values.sum())
    leaves = [check_helpers.number(v, f"tree[{i}]") for i, v in enumerate(_listed(_seen(got, "leaves"), len(values)))]
    if leaves != values.tolist():
        raise Problem(
            f"after setting leaves {fmt(values)}, reading them back gave {fmt(leaves)}. Hint: leaf i is node capacity + i."
        )
    got_total = check_helpers.number(_seen(got, "sum()"), "sum()")
    if got_total != total:
        raise Problem(
            f"leaves {fmt(values)}: sum() gave {got_total}, expected {total:g}. "
            "Hint: after setting a leaf, update every ancestor up to the root (node 1)."
        )
    for start, end in small["sums"]:
        value = check_helpers.number(_seen(got, f"sum({start}, {end})"), f"sum({start}, {end})")
        want = float(values[start:end].sum())
        if value != want:
            hint = (
                "Hint: ranges are half-open: sum(start, end) adds leaves start .. end - 1; sum(0, n) includes leaf n - 1."
                if value == float(values[start : end - 1].sum()) or value == float(values[start : end + 1].sum())
                else "Hint: walk up from both ends of the range, taking a node alone when it sticks out of the range."
            )
            raise Problem(f"leaves {fmt(values)}: sum({start}, {end}) gave {value}, expected {want}. {hint}")
    for start, end in small["mins"]:
        want = float(values[start:end].min()) if end > start else math.inf
        value = check_helpers.number(_seen(got, f"min({start}, {end})"), f"min({start}, {end})")
        if value != want:
            raise Problem(
                f"leaves {fmt(values)}: min({start}, {end}) gave {value}, expected {want} (min of an empty range: inf)."
            )
    for prefix_sum in small["queries"]:
        value = check_helpers.number(_seen(got, f"retrieve({prefix_sum})"), f"retrieve({prefix_sum})")
        want = check_helpers.number(_seen(expected, f"retrieve({prefix_sum})"), "the course's retrieve")
        if value != want:
            hint = (
                "Hint: never step into a subtree whose sum is 0 (at prefix_sum == total, go left when the right child is 0)."
                if prefix_sum == total
                else "Hint: go left if prefix_sum < the left child's sum; otherwise subtract that sum and go right."
            )
            raise Problem(
                f"leaves {fmt(values)}: retrieve({prefix_sum}) gave {value}, expected {want} "
                f"(the smallest i with leaf[0] + ... + leaf[i] > {prefix_sum}). {hint}"
            )
    _passed(got, "overwrite")
    _passed(got, "overwrite min")
    leaf, in_sum, in_min = small["overwrite"]
    changed = values.copy()
    changed[leaf] = in_sum
    in_mins = values.copy()
    in_mins[leaf] = in_min
    after = [check_helpers.number(v, "after overwriting a leaf") for v in _listed(_seen(got, "after overwrite"), 2)]
    if after != [float(changed.sum()), float(in_mins.min())]:
        raise Problem(
            f"after overwriting leaf {leaf}, the totals are wrong. Hint: recompute the parents from both children, do not add."
        )
    _judge_swap(got, expected, small["swap"])
    judge_layout(_seen(got, "sums nodes"), values, "SumSegmentTree")
    judge_layout(_seen(got, "mins nodes"), values, "MinSegmentTree")
    _judge_big(got, expected, cases["big"])
    _judge_speed(got, cases["speed"])


def _judge_swap(got: dict, expected: dict, swap: dict) -> None:
    values = np.array(swap["values"])
    hint = ("Hint: sum and retrieve must read the tree's nodes in `self.tree` (a copy of the leaves kept elsewhere, "
            "or one built from them, answers for the leaves it was made from).")
    what = f"with `self.tree` replaced by the nodes of a sum tree on leaves {fmt(values)}"
    sums = _listed(_seen(got, "swap sums"), len(swap["sums"]))
    for (start, end), value in zip(swap["sums"], sums, strict=True):
        value, want = check_helpers.number(value, f"sum({start}, {end})"), float(values[start:end].sum())
        if value != want:
            raise Problem(f"{what}, sum({start}, {end}) gave {value}, expected {want:g}. {hint}")
    found = _listed(_seen(got, "swap retrieves"), len(swap["queries"]))
    wanted = _listed(_seen(expected, "swap retrieves"), len(swap["queries"]))
    for prefix_sum, value, want in zip(swap["queries"], found, wanted, strict=True):
        value = check_helpers.number(value, f"retrieve({prefix_sum})")
        if value != want:
            raise Problem(f"{what}, retrieve({prefix_sum}) gave {value}, expected {want}. {hint}")


def _listed(value, n: int) -> list:
    if type(value) is not list or len(value) != n:
        raise Problem("the record of your answer is damaged (a list of the wrong length).")
    return value


def _judge_big(got: dict, expected: dict, big: dict) -> None:
    values, ranges, queries = np.array(big["values"]), big["ranges"], np.array(big["queries"])
    n = len(values)
    sums = _listed(_seen(got, "big sums"), len(ranges))
    mins = _listed(_seen(got, "big mins"), len(ranges))
    for (start, end), in_sum, in_min in zip(ranges, sums, mins, strict=True):
        value, want = check_helpers.number(in_sum, f"sum({start}, {end})"), float(values[start:end].sum())
        if not math.isclose(value, want, rel_tol=1e-9, abs_tol=1e-9):
            raise Problem(f"{n} random leaves: sum({start}, {end}) gave {value}, expected {want}.")
        value = check_helpers.number(in_min, f"min({start}, {end})")
        if value != (values[start:end].min() if end > start else math.inf):
            raise Problem(f"{n} random leaves: min({start}, {end}) gave {value}, expected {values[start:end].min()}.")
    found = [check_helpers.number(v, "retrieve") for v in _listed(_seen(got, "big retrieves"), len(queries))]
    wanted = _listed(_seen(expected, "big retrieves"), len(queries))  # the course's tree's answers
    mismatches = [(q, g, e) for q, g, e in zip(queries.tolist(), found, wanted, strict=True) if g != e]
    if len(mismatches) > 1:  # allow one rounding coincidence at a boundary
        q, g, e = mismatches[0]
        raise Problem(f"{n} random leaves: retrieve({q:.6g}) gave {g}, expected {e}.")


def _judge_speed(got: dict, speed: dict) -> None:
    record = _seen(got, "speed")
    count, budget = speed["count"], speed["seconds"]
    small, capacity = _spaced(speed["small"]), _spaced(speed["capacity"])
    if (type(record) is not dict or type(record.get("done")) is not int or type(record.get("over_time")) is not bool
            or "growth" not in record or type(record["growth"]) not in (float, type(None))):
        raise Problem("the record of the speed test is damaged.")
    if record["growth"] is not None:
        raise Problem(
            f"your sum grows with the capacity: it is not O(log n). {count} sums over a range (each after changing a leaf) "
            f"took {record['growth']:g} times as much CPU time on a {capacity}-leaf tree as on a {small}-leaf one; with "
            f"about log2(capacity) steps each they would take about as long (at most {GROWTH:g} times). Hint: a numpy "
            "reduction or a loop over the leaves of the range reads every leaf; walk up from both ends of the range, "
            "as described above."
        )
    if record["over_time"] or record["done"] < 2 * count:
        slow = (f"only {record['done']} of the {2 * count} sums over a range of a {small}-leaf and a {capacity}-leaf tree "
                f"were done before those on one tree took {budget:g} s of CPU time" if record["done"] < 2 * count else
                f"the {count} sums over a range of a {capacity}-leaf tree took more than {budget:g} s of CPU time")
        raise Problem(
            f"{slow} (each after changing a leaf; with about log2(capacity) steps each they take a few milliseconds in "
            "all): a loop over all the leaves in the range is too slow. Hint: walk up from both ends of the range, as "
            "described above."
        )
    from course_utils.replay.tree_judge import speed_total  # never in the grader's drive

    seed = speed["seed"] if record.get("seed") is None else record["seed"]
    want = speed_total(speed, seed)
    if want is None:  # neither stored nor computable here: only the grader draws other seeds, and it computes
        return
    if type(record.get("total")) is not float or record["total"] != want:
        raise Problem(
            f"the {2 * count} sums of the speed test, each over a new range after changing a leaf, add up to {want:g}, "
            f"yours to {record.get('total')!r}. Hint: setting a leaf must update every ancestor up to the root."
        )


TREES = Exercise(
    name="SumSegmentTree / MinSegmentTree",
    grade_id="test_segment_trees",
    cases=_tree_cases,
    drive=_drive_trees,
    judge=_judge_trees,
    reference=("SumSegmentTree", "MinSegmentTree"),
    timed=SPEED,
)


def check_segment_trees(sum_tree_class, min_tree_class) -> bool:
    """Check ``SumSegmentTree`` (``tree[i] = v``, ``tree[i]``, ``sum(start, end)``,
    ``retrieve(prefix_sum)``) and ``MinSegmentTree`` (``min(start, end)``): ranges are
    half-open, [start, end); ``end=None`` means the capacity."""
    return TREES.check(sum_tree_class, min_tree_class)


EXERCISES = {exercise.grade_id: exercise for exercise in (ADD, TREES)}
"""This module's exercises by the grade id of their hidden-test cells."""
