"""The words every tutorial's checks are written in: what a drive records of student code, and
how a judge reads a decoded record back (``course_utils.checking`` runs the two halves).

Drive side (values straight from student code; never raise):

- ``is_error``: whether a value is ``records.error``, what ``checking.attempt`` gives for a call
  that failed;
- ``attribute``, ``method``, ``safely``: reach into the student's object (read an attribute,
  call a method, look at a value with ``len`` or a conversion) and get the value or a
  ``records.error`` saying what went wrong;
- ``truth``: whether a returned value counts as true.

Judge side (decoded record values; a ``Problem`` with a hint where the value cannot be used):

- ``shown``: a value as a verdict quotes it;
- ``number`` / ``as_number`` / ``is_number``: one decoded number (the one rule is
  ``as_number``'s: an int or float, a NumPy scalar, or a one-element integer or float array or
  tensor; never a bool);
- ``numbers``: decoded numbers as a float array; ``tensor_of``: a decoded torch tensor;
- ``flag``: a decoded True or False;
- ``close`` (two numbers) and ``close_arrays`` (two arrays), each with its tolerance written at
  the call site.

How long a record's list of per-case entries is, is checked by the framework
(``checking.check_length``, which ``Exercise.one_per_case`` applies to a whole record).
"""

from __future__ import annotations

import numpy as np
import torch

from course_utils import records
from course_utils.checking import Problem, attempt, raise_if_error
from course_utils.records import Opaque

# ---------------------------------------------------------------------------------------------
# Drive side


def is_error(value) -> bool:
    """Whether ``value`` is the record of a call into student code that failed (``records.error``)."""
    return type(value) is dict and "__error__" in value


def _lacks(what: str, obj, name: str, error: Exception) -> dict:
    return records.error(
        f"{what}: your {type(obj).__name__} has no `{name}` ({type(error).__name__}: {str(error)[:200]}). "
        "Compare your code with the names the exercise asks for."
    )


def attribute(what: str, obj, name: str):
    """``obj.name``, or ``records.error`` saying what went wrong (``obj`` may itself be an error)."""
    if is_error(obj):
        return obj
    try:
        return getattr(obj, name)
    except Exception as error:
        return _lacks(what, obj, name, error)


def method(what: str, obj, name: str, *args, **kwargs):
    """``obj.name(*args, **kwargs)`` through ``attempt``, or ``records.error`` if ``obj`` has no such method."""
    found = attribute(what, obj, name)
    if is_error(found):
        return found
    return attempt(what, found, *args, **kwargs)


def safely(what: str, fn, *args):
    """``fn(*args)`` for a look at what student code returned (``len``, a conversion...), or ``records.error``."""
    try:
        return fn(*args)
    except Exception as error:
        return records.error(f"{what} failed: {type(error).__name__}: {str(error)[:200]}.")


def truth(value) -> bool:
    """Whether a value the student's code returned counts as true (False when it cannot say)."""
    try:
        return bool(value)
    except Exception:
        return False


# ---------------------------------------------------------------------------------------------
# Judge side


def _size(value) -> int | None:
    """How many elements an array or tensor holds (None for anything else)."""
    if isinstance(value, np.ndarray):
        return value.size
    if isinstance(value, torch.Tensor):
        return value.numel()
    return None


def shown(value, limit: int = 200) -> str:
    """A decoded value as a verdict quotes it: an object's description, an array or tensor of
    more than one number by its shape, anything else by its ``repr`` (cut after ``limit``
    characters)."""
    if isinstance(value, Opaque):
        return value.description
    if isinstance(value, records.StudentError):
        return value.message
    size = _size(value)
    if size is not None and size != 1:
        return f"a {type(value).__name__} of shape {tuple(value.shape)}"
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def as_number(value) -> int | float | None:
    """One decoded number as the Python int or float it holds, or None when ``value`` is none.

    The rule, the same in every tutorial: a number is an int or a float (a bool is not one), a
    NumPy integer or floating scalar, or an array or tensor holding exactly one integer or
    floating-point element. Strings, lists, dicts, objects (``Opaque``) and errors are not."""
    if type(value) in (int, float):
        return value
    if isinstance(value, np.integer | np.floating):
        return value.item()
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        if value.dtype == torch.bool or value.is_complex():
            return None
        return value.detach().reshape(-1)[0].item()
    if isinstance(value, np.ndarray) and value.size == 1 and value.dtype.kind in "iuf":
        return value.reshape(-1)[0].item()
    return None


def number(value, what: str) -> int | float:
    """One decoded number (``as_number``'s rule), or a ``Problem``: the student's error, or
    "``what`` should be one number"."""
    raise_if_error(value)
    found = as_number(value)
    if found is None:
        raise Problem(f"{what} should be one number, got {shown(value)}.")
    return found


def is_number(value) -> bool:
    """Whether ``value`` is one decoded number (``as_number``'s rule)."""
    return as_number(value) is not None


def numbers(value, what: str, dtype=float) -> np.ndarray:
    """Decoded numbers (a number, a list of them, an array, a tensor) as an array of ``dtype``,
    or a ``Problem``: the student's error, or "``what``: expected numbers"."""
    raise_if_error(value)
    if isinstance(value, Opaque):
        raise Problem(f"{what}: expected numbers, got {value.description}.")
    try:
        return np.asarray(value, dtype=dtype)
    except (TypeError, ValueError):
        raise Problem(f"{what}: expected numbers, got {shown(value)}.") from None


def tensor_of(what: str, value, shape=None) -> torch.Tensor:
    """A decoded value that must be a torch tensor (of ``shape``), or a ``Problem`` saying what came
    back instead (the student's error, an object, another type or shape)."""
    raise_if_error(value)
    if not isinstance(value, torch.Tensor):
        kind = value.description if isinstance(value, Opaque) else type(value).__name__
        raise Problem(f"{what} should be a torch tensor, got {kind}.")
    if shape is not None and tuple(value.shape) != tuple(shape):
        raise Problem(f"{what} should have shape {tuple(shape)}, got {tuple(value.shape)}.")
    return value


def flag(what: str, value) -> bool:
    """A decoded value that must be True or False (a bool, a 0/1, a one-element array or tensor)."""
    raise_if_error(value)
    if type(value) in (bool, np.bool_) or (type(value) is int and value in (0, 1)):
        return bool(value)
    if _size(value) == 1:
        return bool(value)
    raise Problem(f"{what} should be True or False, got {shown(value, 100)}.")


def close(a: float, b: float, tol: float) -> bool:
    """Whether the number ``a`` is within ``tol`` of ``b``, relative to ``b`` where ``|b| > 1``:
    ``|a - b| <= tol * max(1, |b|)``."""
    return bool(abs(a - b) <= tol * max(1.0, abs(b)))


def close_arrays(a, b, rtol: float, atol: float) -> bool:
    """Whether the arrays ``a`` and ``b`` have the same shape and ``np.allclose(a, b, rtol, atol)``."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=rtol, atol=atol))
