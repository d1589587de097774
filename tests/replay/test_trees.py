import math
import re

import numpy as np
import pytest
from verdicts import graded, not_yet

from course_admin.grading import judging
from course_admin.replay.solutions import MinSegmentTree, SumSegmentTree  # the exercise's reference (instructor side)
from course_admin.replay.trees import (
    VectorMinTree,
    VectorSumTree,
    validate_priorities,
)
from course_utils.checking import Problem
from course_utils.replay import checks
from course_utils.replay.checks import SPEED, TREES, check_segment_trees
from course_utils.replay.standin_trees import SlowMinTree, SlowSumTree

GROWS = "your sum grows with the capacity: it is not O(log n)"
"""The speed part's hint for a tree whose cost grows faster than log(capacity)."""

# --------------------------------------------------------------------------------------
# The one priority check


BAD_PRIORITIES = [0.0, -1.0, -1e-300, float("nan"), float("inf"), -float("inf")]


@pytest.mark.parametrize("bad", BAD_PRIORITIES)
def test_validate_priorities_refuses_non_positive_and_non_finite_values(bad):
    with pytest.raises(ValueError, match=r"priorities must be finite and > 0 \(use \|TD error\| \+ a small eps"):
        validate_priorities(np.array([1.0, bad, 2.0]))
    with pytest.raises(ValueError, match="finite and > 0") as scalar:
        validate_priorities(bad)
    assert repr(float(bad)) in str(scalar.value)


def test_validate_priorities_shows_only_the_bad_values():
    with pytest.raises(ValueError, match=r"got \[-2\., nan\]\.$"):
        validate_priorities([1.0, -2.0, 3.0, float("nan"), 5.0])
    many = np.full(100, -1.0)
    with pytest.raises(ValueError, match=r"\.\.\."):  # long lists are cut short
        validate_priorities(many)


def test_validate_priorities_returns_flat_float64_and_accepts_empty():
    out = validate_priorities(np.array([[1, 2], [3, 4]]))  # any shape of positive numbers, even ints
    assert out.dtype == np.float64 and out.shape == (4,)
    np.testing.assert_array_equal(out, [1.0, 2.0, 3.0, 4.0])
    assert validate_priorities([], length=0).shape == (0,)
    assert validate_priorities(3) == 3.0 and isinstance(validate_priorities(3), float)


@pytest.mark.parametrize(
    "priorities, length", [([1.0, 2.0], 3), ([1.0, 2.0, 3.0], 2), ([[1.0], [2.0]], 1), (1.0 + np.zeros(0), 1)]
)
def test_validate_priorities_wants_one_priority_per_index(priorities, length):
    with pytest.raises(ValueError, match="indices and priorities must have the same length"):
        validate_priorities(np.asarray(priorities), length=length)


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf")])
def test_tree_leaves_may_be_zero_but_must_be_finite_and_non_negative(bad):
    assert validate_priorities(0.0, allow_zero=True) == 0.0
    np.testing.assert_array_equal(validate_priorities([0.0, 2.0], allow_zero=True), [0.0, 2.0])
    with pytest.raises(ValueError, match=r"sum-tree leaves must be finite and >= 0 \(a priority to the power alpha"):
        validate_priorities([0.0, bad], allow_zero=True, name="sum-tree leaves")


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf")])
def test_the_vector_sum_tree_checks_its_leaves_with_validate_priorities(bad):
    with pytest.raises(ValueError) as vector:
        VectorSumTree(4).update([0, 1], [1.0, bad])
    assert str(vector.value) == _message(validate_priorities, [bad], allow_zero=True, name="sum-tree leaves")


def _message(function, *args, **kwargs) -> str:
    with pytest.raises(ValueError) as error:
        function(*args, **kwargs)
    return str(error.value)


# --------------------------------------------------------------------------------------
# Segment trees


@pytest.mark.parametrize("tree_class", [VectorSumTree, VectorMinTree])
@pytest.mark.parametrize("capacity", [0, -4, 3, 6, 100, 2.0, True, "8"])
def test_capacity_must_be_a_positive_power_of_two(tree_class, capacity):
    with pytest.raises(ValueError, match="power of two"):
        tree_class(capacity)


@pytest.mark.parametrize("capacity", [1, 2, 8, 64])
def test_sum_and_min_over_random_ranges_match_numpy(capacity):
    rng = np.random.default_rng(capacity)
    values = rng.uniform(0.0, 10.0, capacity)
    sums, mins = SumSegmentTree(capacity), MinSegmentTree(capacity)
    for i, v in enumerate(values):
        sums[i] = v
        mins[i] = v
    assert [sums[i] for i in range(capacity)] == values.tolist()
    assert [mins[i] for i in range(capacity)] == values.tolist()
    assert sums.sum() == pytest.approx(values.sum())
    assert mins.min() == values.min()
    for _ in range(200):
        start, end = sorted(rng.integers(0, capacity + 1, 2))
        assert sums.sum(start, end) == pytest.approx(values[start:end].sum(), abs=1e-9)
        assert mins.min(start, end) == (values[start:end].min() if end > start else math.inf)


def test_overwriting_leaves_keeps_every_range_correct():
    rng = np.random.default_rng(1)
    values = np.zeros(32)
    sums, mins = SumSegmentTree(32), MinSegmentTree(32)
    mins_values = np.full(32, np.inf)
    for _ in range(500):
        i, v = int(rng.integers(32)), float(rng.uniform(0, 5))
        sums[i], values[i] = v, v
        mins[i], mins_values[i] = v, v
        start, end = sorted(rng.integers(0, 33, 2))
        assert sums.sum(start, end) == pytest.approx(values[start:end].sum(), abs=1e-9)
        assert mins.min(start, end) == (mins_values[start:end].min() if end > start else math.inf)


def test_sum_is_half_open_so_the_newest_leaf_counts():
    tree = SumSegmentTree(8)
    for i in range(5):  # leaves 0..4 filled, 4 is the newest
        tree[i] = 1.0
    tree[4] = 100.0
    assert tree.sum(0, 5) == 104.0  # sum(0, n) includes leaf n - 1
    assert tree.sum(0, 4) == 4.0  # the old bug: sum(0, len - 1) missed the newest leaf
    assert tree.sum(4, 5) == 100.0
    assert tree.sum(2, 2) == 0.0
    assert tree.sum() == 104.0


def test_tree_index_and_range_errors():
    tree, mins = SumSegmentTree(4), MinSegmentTree(4)
    for bad in (4, -1, 10):
        with pytest.raises(IndexError, match="out of range"):
            tree[bad] = 1.0
        with pytest.raises(IndexError, match="out of range"):
            mins[bad] = 1.0
    with pytest.raises(ValueError, match="0 <= start <= end <= 4"):
        tree.sum(0, 5)
    with pytest.raises(ValueError, match="0 <= start <= end <= 4"):
        mins.min(3, 2)


def _reference_retrieve(values: np.ndarray, prefix_sums: np.ndarray) -> np.ndarray:
    """Smallest i with cumsum[i] > prefix_sum."""
    return np.searchsorted(np.cumsum(values), prefix_sums, side="right")


def test_retrieve_matches_cumsum_searchsorted_on_random_queries():
    rng = np.random.default_rng(2)
    values = rng.uniform(0.0, 3.0, 128)
    values[rng.choice(128, 20, replace=False)] = 0.0  # zero leaves must never be returned
    tree = SumSegmentTree(128)
    for i, v in enumerate(values):
        tree[i] = v
    queries = rng.uniform(0.0, tree.sum(), 2000)
    got = np.array([tree.retrieve(q) for q in queries])
    np.testing.assert_array_equal(got, _reference_retrieve(values, queries))
    assert np.all(values[got] > 0)


def test_retrieve_at_exact_boundaries_uses_exceeds():
    values = np.array([1.0, 0.0, 2.0, 3.0, 0.0, 1.0, 0.0, 0.0])  # integers: sums are exact
    tree = SumSegmentTree(8)
    for i, v in enumerate(values):
        tree[i] = v
    boundaries = np.array([0.0, 1.0, 2.5, 3.0, 6.0, 6.5])
    got = [tree.retrieve(q) for q in boundaries]
    assert got == [0, 2, 2, 3, 5, 5]
    np.testing.assert_array_equal(got, _reference_retrieve(values, boundaries))
    vector = VectorSumTree(8)
    vector.update(np.arange(8), values)
    np.testing.assert_array_equal(vector.retrieve(boundaries), got)
    assert tree.retrieve(7.0) == 5  # prefix_sum == total: the last positive leaf
    assert vector.retrieve(7.0) == 5
    with pytest.raises(ValueError, match=r"\[0, total\]"):
        vector.retrieve(7.5)
    with pytest.raises(ValueError, match=r"\[0, total\]"):
        vector.retrieve(-0.1)
    with pytest.raises(ValueError, match="empty"):
        VectorSumTree(4).retrieve(0.0)


def test_vector_tree_agrees_with_plain_tree_on_random_updates_with_duplicates():
    rng = np.random.default_rng(3)
    capacity = 64
    plain, vector = SumSegmentTree(capacity), VectorSumTree(capacity)
    for _ in range(100):
        indices = rng.integers(0, capacity, 16)
        indices[:4] = indices[4]  # force duplicates: the last write must win
        values = rng.uniform(0.0, 5.0, 16)
        vector.update(indices, values)
        for i, v in zip(indices.tolist(), values.tolist(), strict=True):
            plain[i] = v
        np.testing.assert_array_equal(vector.tree[1:], plain.tree[1:])  # same leaves and same inner sums
    assert vector.total() == plain.sum()
    queries = rng.uniform(0.0, vector.total(), 500)
    queries[-1] = vector.total()
    np.testing.assert_array_equal(vector.retrieve(queries), [plain.retrieve(q) for q in queries])
    grid = vector.retrieve(queries[:6].reshape(2, 3))
    assert grid.shape == (2, 3) and grid.dtype == np.int64


def test_vector_tree_duplicate_index_keeps_last_value_and_recomputes_parents():
    tree = VectorSumTree(4)
    tree.update([0, 1, 2, 3], [1.0, 1.0, 1.0, 1.0])
    tree.update([2, 2, 2], [5.0, 7.0, 3.0])  # adding deltas would give 1 + 4 + 6 + 2
    assert tree.tree[4 + 2] == 3.0
    assert tree.total() == 6.0
    tree.update([1], 0.5)  # a scalar value
    assert tree.total() == 5.5
    with pytest.raises(IndexError, match="out of range"):
        tree.update([4], [1.0])
    with pytest.raises(ValueError, match=">= 0"):
        tree.update([0], [-1.0])
    with pytest.raises(ValueError, match=r"\[0, total\]"):
        tree.retrieve([0.0, 6.0])


def test_vector_tree_of_capacity_one():
    tree = VectorSumTree(1)
    tree.update([0, 0], [2.0, 3.0])
    assert tree.total() == 3.0
    np.testing.assert_array_equal(tree.retrieve([0.0, 1.5, 3.0]), [0, 0, 0])


# --------------------------------------------------------------------------------------
# Vectorised min tree and deep trees


def test_vector_min_tree_matches_plain_min_tree():
    rng = np.random.default_rng(8)
    plain, vector = MinSegmentTree(256), VectorMinTree(256)
    assert vector.min() == math.inf
    for _ in range(50):
        indices, values = rng.integers(0, 256, 64), rng.uniform(0.0, 5.0, 64)
        vector.update(indices, values)
        for i, v in zip(indices.tolist(), values.tolist(), strict=True):
            plain[i] = v
        np.testing.assert_array_equal(vector.tree[1:], plain.tree[1:])
    assert vector.min() == plain.min()
    with pytest.raises(ValueError, match="NaN"):
        vector.update([0], [float("nan")])


@pytest.mark.parametrize("capacity", [1024, 1 << 13, 1 << 15])
def test_vector_retrieve_with_the_search_level_matches_the_plain_descent(capacity):
    """Deep trees use a searchsorted on level 10, then descend; trailing empty leaves stay unreachable."""
    rng = np.random.default_rng(capacity)
    values = rng.uniform(0.0, 2.0, capacity)
    values[capacity - capacity // 3 :] = 0.0  # a partly filled buffer: zeros at the end
    values[rng.choice(capacity, capacity // 10, replace=False)] = 0.0
    plain, vector = SumSegmentTree(capacity), VectorSumTree(capacity)
    vector.update(np.arange(capacity), values)
    plain.tree = vector.tree.tolist()
    queries = np.concatenate([rng.uniform(0.0, vector.total(), 3000), [0.0, vector.total()]])
    got = vector.retrieve(queries)
    expected = np.array([plain.retrieve(float(q)) for q in queries])
    assert np.mean(got == expected) > 0.999  # boundaries may differ by a rounding error
    assert np.all(values[got] > 0)
    assert got[-1] == expected[-1] == np.flatnonzero(values)[-1]


# --------------------------------------------------------------------------------------
# The exercises' checks


class _HalfOpenBug(SumSegmentTree):
    """sum(start, end) including leaf end (an inclusive range)."""

    def sum(self, start=0, end=None):
        end = self.capacity if end is None else min(end + 1, self.capacity)
        return super().sum(start, end)


class _NoZeroGuard(SumSegmentTree):
    def retrieve(self, prefix_sum):
        node = 1
        while node < self.capacity:
            if prefix_sum < self.tree[2 * node]:
                node = 2 * node
            else:
                prefix_sum -= self.tree[2 * node]
                node = 2 * node + 1
        return node - self.capacity


class _LinearSum(SumSegmentTree):
    def sum(self, start=0, end=None):
        end = self.capacity if end is None else end
        return sum(self.tree[self.capacity + i] for i in range(start, end))


WRONG_TREES = [
    ((_HalfOpenBug, MinSegmentTree), "half-open"),
    ((_NoZeroGuard, MinSegmentTree), "never step into a subtree whose sum is 0"),
    # a Python loop over the range is too slow on the small tree already, or on a fast machine
    # reaches the big one and grows with the capacity
    ((_LinearSum, MinSegmentTree), "too slow|grows with the capacity: it is not O\\(log n\\)"),
]


def test_tree_check_accepts_the_course_trees_and_flags_mistakes(capsys):
    assert check_segment_trees(SumSegmentTree, MinSegmentTree)
    for trees, hint in WRONG_TREES:
        assert re.search(hint, not_yet(check_segment_trees, *trees))
    assert check_segment_trees(_HalfOpenBug, MinSegmentTree) is False
    assert "❌" in capsys.readouterr().out


def test_the_check_cell_judges_from_stored_values_without_the_instructor_package(monkeypatch):
    """Where ``course_admin`` is not installed (the student's kernel), the retrieves are judged
    against the course's stored record and the speed part's total is read from the stored file."""
    from course_utils import checking
    from course_utils.replay import tree_judge

    monkeypatch.setattr(checking, "ORACLES", {})
    speed = TREES.cases()["speed"]
    assert tree_judge.speed_total(speed, speed["seed"]) is not None
    assert check_segment_trees(SumSegmentTree, MinSegmentTree)
    assert "retrieve" in not_yet(check_segment_trees, _NoZeroGuard, MinSegmentTree)


def test_the_buffer_s_stand_in_trees_agree_with_the_course_trees_but_fail_the_tree_check(capsys):
    rng = np.random.default_rng(3)
    values = rng.uniform(0.0, 2.0, 16) * (rng.random(16) > 0.3)
    slow, slow_min, fast, fast_min = SlowSumTree(16), SlowMinTree(16), SumSegmentTree(16), MinSegmentTree(16)
    for i, v in enumerate(values):
        slow[i] = fast[i] = slow_min[i] = fast_min[i] = float(v)
    for start, end in [(0, 16), (3, 9), (5, 5), (0, None)]:
        assert math.isclose(slow.sum(start, end), fast.sum(start, end)) and slow_min.min(start, end) == fast_min.min(start, end)
    for q in np.linspace(0.0, float(values.sum()), 41):
        assert slow.retrieve(float(q)) == fast.retrieve(float(q))
    assert not check_segment_trees(SlowSumTree, SlowMinTree)
    assert "must read the tree's nodes in `self.tree`" in capsys.readouterr().out


class _NumpyLeaves:
    """No tree: the leaves in a numpy array, every range and search done by numpy (fast enough for
    the speed part, and right everywhere)."""

    def __init__(self, capacity):
        self.capacity, self.leaves = capacity, np.full(capacity, self.neutral)

    def __getitem__(self, index):
        return float(self.leaves[index])

    def __setitem__(self, index, value):
        self.leaves[index] = value

    def sum(self, start=0, end=None):
        return float(self.leaves[start:end].sum())

    def min(self, start=0, end=None):
        part = self.leaves[start:end]
        return float(part.min()) if len(part) else math.inf

    def retrieve(self, prefix_sum):
        index = int(np.searchsorted(np.cumsum(self.leaves), prefix_sum, side="right"))
        return index if index < self.capacity else int(np.flatnonzero(self.leaves > 0)[-1])


class _NumpySum(_NumpyLeaves):
    neutral = 0.0


class _NumpyMin(_NumpyLeaves):
    neutral = math.inf


class _ChildrenNotCombined(SumSegmentTree):
    """Leaves in `self.tree`, but the range sums come from the leaves alone: the inner nodes stay 0."""

    def __setitem__(self, index, value):
        self.tree[self.capacity + index] = value

    def reduce(self, start=0, end=None):
        end = self.capacity if end is None else end
        return sum(self.tree[self.capacity + start : self.capacity + end])

    def retrieve(self, prefix_sum):
        return _NumpySum.retrieve(type("L", (), {"leaves": np.array(self.tree[self.capacity :]), "capacity": self.capacity})(),
                                  prefix_sum)


def test_the_tree_check_reads_the_nodes_so_numpy_over_the_leaves_is_no_tree(capsys):
    """What the exercise asks is the tree: a list of 2 * capacity nodes whose inner nodes combine
    their children, which sum and retrieve read. Right answers computed another way (numpy over
    the leaves) answer for the old leaves once another tree's nodes are put in `self.tree`; a tree
    whose range sums read only its leaves fails on the inner nodes it never set."""
    assert not check_segment_trees(_NumpySum, _NumpyMin)
    assert "must read the tree's nodes in `self.tree`" in capsys.readouterr().out
    assert not check_segment_trees(_ChildrenNotCombined, MinSegmentTree)
    assert "recompute each ancestor" in capsys.readouterr().out


class _NumpyLevels:
    """The red team's tree without a walk: `self.tree` in the layout the check reads, rebuilt level
    by level with numpy after every write, and every query a numpy reduction of the leaves read
    from `self.tree` (so another tree's nodes put there are read too). Right everywhere, but each
    write and each sum costs O(capacity)."""

    neutral = 0.0

    def __init__(self, capacity):
        self.capacity, self.tree = capacity, np.full(2 * capacity, self.neutral)

    def __setitem__(self, index, value):
        self.tree[self.capacity + index] = value
        low = self.capacity
        while low > 1:
            self.tree[low // 2 : low] = self.tree[low : 2 * low : 2] + self.tree[low + 1 : 2 * low : 2]
            low //= 2

    def __getitem__(self, index):
        return float(self.tree[self.capacity + index])

    def sum(self, start=0, end=None):
        return float(np.asarray(self.tree)[self.capacity + start : self.capacity + (self.capacity if end is None else end)].sum())

    def retrieve(self, prefix_sum):
        leaves = np.asarray(self.tree)[self.capacity :]
        index = int(np.searchsorted(np.cumsum(leaves), prefix_sum, side="right"))
        return index if index < self.capacity else int(np.flatnonzero(leaves > 0)[-1])


def test_a_tree_rebuilt_with_numpy_after_every_write_grows_with_the_capacity(capsys):
    """A write in O(capacity) (numpy rebuilding every level) costs 16 times as much on the speed
    part's big tree as on its small one, where one in O(log capacity) costs about the same."""
    assert not check_segment_trees(_NumpyLevels, MinSegmentTree)
    assert GROWS in capsys.readouterr().out


class _NumpySumTree(SumSegmentTree):
    """A right tree, nodes in `self.tree` (a numpy array), whose writes and retrieve walk it, but
    whose range sum is a numpy reduction over the range's leaves read from `self.tree`: right
    everywhere, and each sum reads up to capacity leaves. Fast numpy code, it can keep within the
    big tree's budget on a quiet machine; its cost grows with the capacity."""

    def __init__(self, capacity):
        super().__init__(capacity)
        self.tree = np.zeros(2 * capacity)

    def sum(self, start=0, end=None):
        end = self.capacity if end is None else end
        return float(np.asarray(self.tree[self.capacity + start : self.capacity + end]).sum())



def test_a_sum_that_reads_every_leaf_fails_on_growth_in_the_check_cell_and_when_graded():
    """The speed part times sums on a 65 536-leaf and a 1 048 576-leaf tree: the course's tree
    costs about as much on both, a numpy reduction over the leaves several times as much (see
    ``checks.GROWTH``). The check cell times them in the kernel, the grader from outside the
    answer's process; one entry (``SPEED.entry``) decides for both."""
    assert GROWS in not_yet(check_segment_trees, _NumpySumTree, MinSegmentTree)
    passed, message = graded(TREES, _NumpySumTree, MinSegmentTree)
    assert not passed and GROWS in message, message
    passed, message = graded(TREES, SumSegmentTree, MinSegmentTree)
    assert passed, message


def test_planted_without_the_growth_limit_a_linear_sum_within_the_budget_passes(monkeypatch):
    """The limit on growth is what fails a linear sum that keeps within the budget: the course
    tree's answers with the CPU figures such a sum has on a quiet machine (the big tree 10 times
    the small one, within its budget) fail with the growth hint, and pass once the limit is off."""
    cases = TREES.cases_for(True)
    trees = SPEED.start(cases, SumSegmentTree, MinSegmentTree)
    measured = SPEED.measure(cases, 5, lambda step: SPEED.answer(trees, step), lambda: 0.0)
    measured["cpu_seconds"] = [0.06, 0.6]
    assert 0.6 < cases["speed"]["seconds"]

    def judge():
        got = judging.reference_record(TREES.grade_id)
        got["speed"] = SPEED.entry(cases, measured)
        TREES.judge(got, judging.reference_record(TREES.grade_id), cases)

    with pytest.raises(Problem, match=re.escape(GROWS)):
        judge()
    monkeypatch.setattr(checks, "GROWTH", math.inf)
    judge()
