"""The checks' shared vocabulary (``course_utils.check_helpers``) and the record length the
framework checks (``checking.check_length``, ``Exercise.one_per_case``)."""

import numpy as np
import pytest
import torch

from course_utils import records
from course_utils.check_helpers import (
    as_number,
    attribute,
    close,
    close_arrays,
    flag,
    is_error,
    method,
    number,
    numbers,
    shown,
    tensor_of,
)
from course_utils.checking import Exercise, Problem, check_length


@pytest.mark.parametrize("value, read", [
    (3, 3), (2.5, 2.5), (np.int64(4), 4), (np.float32(0.5), 0.5), (np.array([7]), 7), (torch.tensor([[1.5]]), 1.5),
    (torch.tensor(2), 2),
])
def test_one_rule_reads_a_decoded_number(value, read):
    assert as_number(value) == read and type(as_number(value)) is type(read)
    assert number(value, "x") == read


@pytest.mark.parametrize("value", [True, np.bool_(False), "3", [3.0], {"a": 1}, None, np.array([1, 2]),
                                   torch.tensor([True]), records.Opaque("a Foo object")])
def test_what_is_not_one_number_is_named(value):
    assert as_number(value) is None
    with pytest.raises(Problem, match="the total should be one number, got"):
        number(value, "the total")


def test_a_students_error_comes_through_as_it_was():
    with pytest.raises(Problem, match="^boom$"):
        number(records.StudentError("boom"), "x")
    assert is_error(records.error("boom")) and not is_error({"x": 1})


def test_shown_quotes_objects_arrays_and_long_values():
    assert shown(records.Opaque("a Foo object")) == "a Foo object"
    assert shown(np.zeros((3, 2))) == "a ndarray of shape (3, 2)"
    assert shown("x" * 500, 300) == repr("x" * 500)[:300] + "..."
    assert shown(4) == "4"


def test_numbers_flag_and_tensors():
    assert numbers([1, 2], "x").tolist() == [1.0, 2.0]
    with pytest.raises(Problem, match="the state: expected numbers, got a Foo"):
        numbers(records.Opaque("a Foo"), "the state")
    assert flag("done", np.array([1])) is True and flag("done", 0) is False
    with pytest.raises(Problem, match="done should be True or False"):
        flag("done", "yes")
    with pytest.raises(Problem, match="should have shape"):
        tensor_of("the scores", torch.zeros(2), (3,))


def test_close_is_relative_above_one_and_close_arrays_needs_the_same_shape():
    assert close(1000.05, 1000.0, 1e-4) and not close(1000.2, 1000.0, 1e-4)
    assert close(0.00005, 0.0, 1e-4) and not close(0.0002, 0.0, 1e-4)
    assert close_arrays([1.0, 2.0], [1.0, 2.0001], rtol=1e-4, atol=1e-5)
    assert not close_arrays([1.0, 2.0], [[1.0, 2.0]], rtol=1e-4, atol=1e-5)


def test_probes_turn_a_missing_attribute_into_an_error_record():
    class Agent:
        def act(self, x):
            return x + 1

    assert method("act", Agent(), "act", 1) == 2
    missing = attribute("agent.reset", Agent(), "reset")
    assert is_error(missing) and "has no `reset`" in missing["__error__"]
    assert is_error(method("agent.reset()", Agent(), "reset"))


def test_the_framework_checks_a_records_length_once_before_judging():
    judged = []
    exercise = Exercise(name="square", grade_id="test_square", cases=lambda: [1, 2, 3],
                        drive=lambda cases, f: [f(c) for c in cases], judge=lambda got, expected, cases: judged.append(got),
                        reference=("square",), one_per_case="squares")
    with pytest.raises(Problem, match="the record holds 2 squares instead of 3"):
        exercise.judge_record(records.dump([1, 4]), None, hidden=False)
    with pytest.raises(Problem, match="the record holds no list of squares instead of 3"):
        exercise.judge_record(records.dump({"a": 1}), None, hidden=False)
    exercise.judge_record(records.dump([1, 4, 9]), None, hidden=False)
    assert judged == [[1, 4, 9]]
    with pytest.raises(Problem, match="the record holds 1 runs instead of 2"):
        check_length([0], [0, 1], "runs")
