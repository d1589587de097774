"""Records: what a student's code returned, as plain data that crosses a process boundary.

A check drives the student's code and writes down what came back (``encode``): numbers,
strings, lists, arrays with their dtype and shape, and a description of anything else. The
judging reads it back (``decode``) into values built by the reader itself (plain ``float``,
``int``, ``str``, ``list``, ``dict``, ``numpy.ndarray``), so nothing the student defined (a
subclass of ``float`` or ``ndarray``, an object whose ``__eq__`` always says yes, a tensor
subclass) takes part in the judging. When the notebook is graded, ``encode`` runs in the
student's kernel and ``decode`` in the grader's process: the record travels as JSON text inside the
hidden test cell's output, under ``RECORD_MIME``.

Encoding (by exact type, never ``isinstance``)::

    None, bool, int, float, str       as themselves (NaN and infinities too)
    list, tuple                       a list of encoded items
    dict with str keys                a dict of encoded values
    numpy.ndarray, torch.Tensor       {"__array__": {"kind": "ndarray"|"tensor", "dtype": "float32", "shape": [..], "data": [..]}}
    numpy scalars (float32, int64..)  {"__scalar__": {"dtype": "int64", "value": 3}}
    an error from the student's code  {"__error__": "message"}     (``error``)
    anything else                     {"__object__": "module.Class (why)"}

>>> decode(json.loads(dump({"returns": np.array([1.5, 0.5]), "n": 2})))["returns"].tolist()
[1.5, 0.5]
"""

from __future__ import annotations

import json
import math

import numpy as np

RECORD_MIME = "application/vnd.rl-course.record"
"""The MIME type of a hidden test's record in the cell's outputs: JSON text (a string, so that
the grader parses it itself, with ``load``)."""

MAX_ITEMS = 1_000_000
"""Most numbers a record may hold in all (a check never needs more)."""

_SCALARS = {np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8, np.bool_}
_DTYPES = {"float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"}


class Opaque:
    """An encoded value that is not plain data, as the reader sees it: only its description.

    Compares equal to nothing but itself, so a check that compares it with a number fails."""

    def __init__(self, description: str):
        self.description = description

    def __repr__(self) -> str:
        return f"<{self.description}>"


class StudentError:
    """An error the student's code raised (or a time-out), as the reader sees it."""

    def __init__(self, message: str):
        self.message = message

    def __repr__(self) -> str:
        return f"<error: {self.message}>"


class RecordError(ValueError):
    """A record that does not follow the encoding (damaged, forged or too large)."""


def error(message: str) -> dict:
    """The record of a call into student code that failed (``message`` says how)."""
    return {"__error__": str(message)}


def _describe(value, why: str) -> dict:
    kind = type(value)
    return {"__object__": f"{kind.__module__}.{kind.__qualname__} ({why})"}


def encode(value):
    """``value`` as JSON-able plain data (see the module's docstring)."""
    kind = type(value)
    if value is None or kind in (bool, int, float, str):
        return value
    if kind in (list, tuple):
        return [encode(item) for item in value]
    if kind is dict:
        if not all(type(key) is str for key in value):
            return _describe(value, "a dict whose keys are not all strings")
        return {key: encode(item) for key, item in value.items()}
    if kind in _SCALARS:
        return {"__scalar__": {"dtype": np.dtype(kind).name, "value": value.item()}}
    if kind is np.ndarray:
        return _array(value, "ndarray")
    if kind.__module__ == "torch" and kind.__name__ == "Tensor":  # exactly torch.Tensor, not a subclass
        # Read through torch's own functions, bound before any answer ran (``facts``): an answer
        # that patches torch.Tensor.numpy or .detach cannot change the numbers written down.
        from course_utils import facts

        if not facts.real_tensor(value):
            return _describe(value, "not a tensor that can be read (a look-alike, or a torch mode was active)")
        return _array(facts.numbers(value), "tensor", facts.dtype_name(value))
    if isinstance(value, float | int | np.ndarray | list | tuple | dict | str):
        return _describe(value, f"a subclass of {_base_name(value)}")
    return _describe(value, "not plain data")


def _base_name(value) -> str:
    for base in (bool, int, float, str, list, tuple, dict, np.ndarray):
        if isinstance(value, base):
            return base.__name__
    return "a built-in type"


def _array(array: np.ndarray, kind: str, dtype: str | None = None) -> dict:
    if array.dtype.name not in _DTYPES:
        return {"__object__": f"numpy.ndarray of dtype {array.dtype} (not numbers)"}
    body = {"kind": kind, "dtype": dtype or array.dtype.name, "shape": list(array.shape), "data": array.ravel().tolist()}
    return {"__array__": body}


def dump(value) -> str:
    """``encode(value)`` as JSON text."""
    try:
        return json.dumps(encode(value))
    except RecursionError:
        return json.dumps({"__object__": "a value nested too deeply (not plain data)"})


# --------------------------------------------------------------------------------------
# Reading (the grader's side)


def decode(data, budget: list | None = None):
    """Read encoded ``data`` (parsed JSON) into values the reader builds itself (arrays as
    ``numpy.ndarray``, tensors as ``torch.Tensor``); raise
    ``RecordError`` for anything that does not follow the encoding."""
    budget = budget if budget is not None else [MAX_ITEMS]
    budget[0] -= 1
    if budget[0] < 0:
        raise RecordError(f"the record holds more than {MAX_ITEMS} values")
    kind = type(data)
    if data is None or kind in (bool, int, float, str):
        return data
    if kind is list:
        return [decode(item, budget) for item in data]
    if kind is not dict:
        raise RecordError(f"unexpected {kind.__name__} in the record")
    tags = [key for key in data if key.startswith("__")]
    if not tags:
        return {str(key): decode(item, budget) for key, item in data.items()}
    if len(data) != 1:
        raise RecordError(f"a tagged value with extra keys: {sorted(data)[:4]}")
    tag, body = tags[0], data[tags[0]]
    if tag == "__error__" and type(body) is str:
        return StudentError(body)
    if tag == "__object__" and type(body) is str:
        return Opaque(body)
    if tag == "__scalar__" and type(body) is dict and body.get("dtype") in _DTYPES:
        value = body.get("value")
        if type(value) not in (bool, int, float):
            raise RecordError("a scalar whose value is not a number")
        return np.dtype(body["dtype"]).type(value)
    if tag == "__array__" and type(body) is dict:
        return _read_array(body, budget)
    raise RecordError(f"unknown or malformed tag {tag!r}")


def _read_array(body: dict, budget: list) -> np.ndarray:
    dtype, shape, data = body.get("dtype"), body.get("shape"), body.get("data")
    if body.get("kind") not in ("ndarray", "tensor") or dtype not in _DTYPES:
        raise RecordError(f"an array of unknown kind or dtype {dtype!r}")
    if type(shape) is not list or not all(type(n) is int and n >= 0 for n in shape) or type(data) is not list:
        raise RecordError("an array with a malformed shape or data")
    size = math.prod(shape)
    budget[0] -= size
    if budget[0] < 0:
        raise RecordError(f"the record holds more than {MAX_ITEMS} values")
    if len(data) != size or not all(type(x) in (bool, int, float) for x in data):
        raise RecordError("an array whose data does not match its shape")
    array = np.array(data, dtype=dtype).reshape(shape)
    if body["kind"] == "tensor":
        import torch

        return torch.from_numpy(array)
    return array


def load(text: str):
    """Parse and ``decode`` a record's JSON text."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as problem:
        raise RecordError(f"the record is not valid JSON ({type(problem).__name__})") from None
    try:
        return decode(data)
    except RecursionError:
        raise RecordError("the record is nested too deeply") from None
