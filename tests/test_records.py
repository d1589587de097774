"""Records: plain data out of the student's kernel, read back with values the reader builds."""

import json
import math

import numpy as np
import pytest
import torch

from course_utils import records


class RiggedFloat(float):
    def __eq__(self, other):
        return True

    __hash__ = float.__hash__


class RiggedArray(np.ndarray):
    def __eq__(self, other):
        return np.ones(np.shape(other), dtype=bool)


class RiggedTensor(torch.Tensor):
    pass


def roundtrip(value):
    return records.load(records.dump(value))


def test_plain_values_come_back_as_plain_values():
    value = {"n": 3, "x": 0.25, "s": "a", "ok": True, "none": None, "items": (1, [2.5, "b"])}
    assert roundtrip(value) == {"n": 3, "x": 0.25, "s": "a", "ok": True, "none": None, "items": [1, [2.5, "b"]]}


def test_arrays_and_tensors_keep_dtype_and_shape():
    got = roundtrip({"a": np.arange(6, dtype=np.float32).reshape(2, 3), "t": torch.ones(2, 2, requires_grad=True)})
    assert type(got["a"]) is np.ndarray and got["a"].dtype == np.float32 and got["a"].shape == (2, 3)
    assert type(got["t"]) is torch.Tensor and got["t"].dtype == torch.float32 and got["t"].shape == (2, 2)
    scalar = roundtrip(np.int64(7))
    assert type(scalar) is np.int64 and scalar == 7


def test_nan_is_read_back_as_nan():
    assert math.isnan(roundtrip(float("nan")))


@pytest.mark.parametrize(
    "value, described",
    [
        (RiggedFloat(1.0), "subclass of float"),
        (np.zeros(3).view(RiggedArray), "subclass of ndarray"),
        (torch.zeros(2).as_subclass(RiggedTensor), "not plain data"),
        (object(), "not plain data"),
        ({1: "a"}, "keys are not all strings"),
        (np.array(["a"], dtype=object), "not numbers"),
    ],
)
def test_anything_else_becomes_an_opaque_description_that_equals_nothing(value, described):
    got = roundtrip(value)
    assert isinstance(got, records.Opaque) and described in got.description
    assert got != 1.0 and got != [0.0, 0.0, 0.0]


def test_errors_of_the_student_code_are_read_as_errors():
    got = roundtrip([records.error("write() raised KeyError")])
    assert isinstance(got[0], records.StudentError) and "KeyError" in got[0].message


def test_a_value_nested_too_deeply_is_described_not_a_crash():
    deep = []
    for _ in range(100_000):
        deep = [deep]
    assert isinstance(roundtrip(deep), records.Opaque)


@pytest.mark.parametrize(
    "text, reason",
    [
        ("{not json", "not valid JSON"),
        ("[" * 100_000 + "]" * 100_000, "JSON|deeply"),
        (json.dumps({"__array__": {"kind": "ndarray", "dtype": "float64", "shape": [10**9], "data": []}}), "more than"),
        (json.dumps({"__array__": {"kind": "ndarray", "dtype": "float64", "shape": [3], "data": [1, 2]}}), "does not match"),
        (json.dumps({"__array__": {"kind": "ndarray", "dtype": "object", "shape": [1], "data": [1]}}), "dtype"),
        (json.dumps({"__scalar__": {"dtype": "int64", "value": "7"}}), "not a number"),
        (json.dumps({"__eval__": "os.system('x')"}), "unknown"),
        (json.dumps({"__error__": "x", "extra": 1}), "extra keys"),
    ],
)
def test_a_damaged_or_forged_record_is_refused_with_a_reason(text, reason):
    with pytest.raises(records.RecordError, match=reason):
        records.load(text)
