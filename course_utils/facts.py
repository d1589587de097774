"""Facts a check's drive reads about the student's objects, through functions bound when this
module is imported and called on the object.

A drive runs in the student's kernel (``checking.Exercise``), and whatever it reads through a
method looked up on the student's object (``net.parameters()``, ``loss.requires_grad``,
``t.detach()``, ``len(items)``) or on a class an answer can patch while the drive runs
(``torch.Tensor.sum = ...``, ``nn.Module.parameters = ...``, ``builtins.len = ...``), the answer
can make say what the check wants. The checks modules import this module in the notebook's setup
cell, before any answer runs, so the functions below are torch's, numpy's and Python's own:

- tensors: the C readers of ``torch._C.TensorBase`` (an immutable type: no answer can patch it),
  applied only to an exact ``torch.Tensor`` or ``nn.Parameter`` (``real_tensor``): a subclass
  answers every read, even through these, with its ``__torch_function__``, and so does any
  torch function or dispatch mode left active (then nothing counts as a real tensor);
- modules: their parameters and buffers found in the instances' own ``_parameters``,
  ``_buffers`` and ``_modules`` dicts (``named_parameters``), not through ``named_parameters()``
  or ``state_dict()``, which a subclass can override and ``nn.Module.parameters`` itself calls;
- sequences: the items a list or tuple (or a subclass of one) really holds (``items``);
- comparisons and conversions the drives make (``tensors_equal``, ``as_array``):
  numpy's and torch's own functions.

Calling the answer's own API (``memory.add(...)``, ``net(x)``, ``loss_fn(...)``) is what an
exercise tests and stays a call on the object; these functions read what came back.
"""

from __future__ import annotations

# The built-ins this module calls, bound here as its own globals: an answer that replaces
# builtins.len (or list, type...) later changes nothing these functions read.
from builtins import bool, dict, id, issubclass, len, list, set, slice, str, tuple, type  # noqa: UP029 (bound on purpose)

import numpy as np
import torch
from torch import nn

_TENSOR_BASE = torch._C.TensorBase
_TENSOR, _PARAMETER, _MODULE = torch.Tensor, nn.Parameter, nn.Module
_requires_grad = _TENSOR_BASE.requires_grad.__get__
_grad = _TENSOR_BASE.grad.__get__
_dtype = _TENSOR_BASE.dtype.__get__
_detach, _clone, _cpu, _numpy = _TENSOR_BASE.detach, _TENSOR_BASE.clone, _TENSOR_BASE.cpu, _TENSOR_BASE.numpy
_dim, _add, _add_, _sum = _TENSOR_BASE.dim, _TENSOR_BASE.add, _TENSOR_BASE.add_, _TENSOR_BASE.sum
_abs, _item, _sub = _TENSOR_BASE.abs, _TENSOR_BASE.item, _TENSOR_BASE.sub
_function_modes, _dispatch_modes = torch._C._len_torch_function_stack, torch._C._len_torch_dispatch_stack
_no_torch_function = torch._C.DisableTorchFunction  # neither a subclass's __torch_function__ nor a mode answers
_no_grad, _autograd_backward, _autograd_grad = torch.no_grad, torch.autograd.backward, torch.autograd.grad
_class_dict, _class_mro = type.__dict__["__dict__"].__get__, type.__dict__["__mro__"].__get__
_GETSET, _proxy_get = type(type.__dict__["__dict__"]), type(type.__dict__).get
_dict_items, _dict_get, _list_slice, _tuple_slice = dict.items, dict.get, list.__getitem__, tuple.__getitem__
_dict_set = dict.__setitem__
_np_array = np.array
tensors_equal = torch.equal
"""``torch.equal`` as torch defines it (an answer that replaces it later changes nothing here)."""
as_array = np.asarray
"""``np.asarray`` as numpy defines it."""


def modes_active() -> bool:
    """Whether a torch function or dispatch mode is active: it would answer every tensor read."""
    return _function_modes() > 0 or _dispatch_modes() > 0


def real_tensor(value) -> bool:
    """``value`` is exactly a ``torch.Tensor`` or ``nn.Parameter`` (not a subclass) and no torch
    mode is active: the readers below then see its own numbers."""
    return type(value) in (_TENSOR, _PARAMETER) and not modes_active()


def requires_grad(value) -> bool:
    """Whether ``value`` is a tensor (a subclass too) that autograd tracks, as autograd itself
    says: no ``requires_grad`` property of a subclass or of a patched ``torch.Tensor`` answers."""
    if not issubclass(type(value), _TENSOR):
        return False
    with _no_torch_function():
        return bool(_requires_grad(value))


def dim(value) -> int | None:
    """The number of dimensions of a real tensor; None for anything else."""
    return _dim(value) if real_tensor(value) else None


def copy(tensor: torch.Tensor) -> torch.Tensor:
    """A detached copy of a real tensor (its numbers now, whatever happens to it later)."""
    return _clone(_detach(tensor))


def numbers(tensor: torch.Tensor) -> np.ndarray:
    """A real tensor's numbers as a new numpy array (same dtype and shape)."""
    return _np_array(_numpy(_cpu(_detach(tensor))), copy=True)


def dtype_name(tensor: torch.Tensor) -> str:
    """A real tensor's dtype as text, "float32"."""
    return str(_dtype(tensor)).removeprefix("torch.")


def sum_backward(*tensors: torch.Tensor) -> None:
    """Back-propagate the sum of every element of the real tensors ``tensors`` (through
    ``torch.autograd.backward`` as it was when this module was imported)."""
    total = _sum(tensors[0])
    for tensor in tensors[1:]:
        total = _add(total, _sum(tensor))
    _autograd_backward(total)


def attached(tensor: torch.Tensor) -> torch.Tensor:
    """``tensor - tensor.detach()`` of a real tensor: zero everywhere, with the gradient ``tensor``
    carries (none when it is detached). Added to what a drive back-propagates, or to an input it
    hands over, it turns "this is detached" into a gradient the judge compares by value."""
    return _sub(tensor, _detach(tensor))


def plus_attached(value: torch.Tensor, tensor: torch.Tensor) -> torch.Tensor:
    """``value + (tensor - tensor.detach())``: ``value``'s numbers, tied to ``tensor``'s gradient."""
    return _add(value, attached(tensor))


def backward(loss: torch.Tensor) -> None:
    """``loss.backward()`` through ``torch.autograd.backward`` as it was when this module was
    imported (``torch.Tensor.backward`` is a Python method an answer can replace)."""
    _autograd_backward(loss)


def gradient(loss: torch.Tensor, wrt: torch.Tensor) -> torch.Tensor | None:
    """The gradient of a real scalar tensor ``loss`` with respect to the real tensor ``wrt`` (a copy;
    None where ``loss`` does not depend on it), through ``torch.autograd.grad`` as it was when this
    module was imported; the graph is kept, so ``backward`` can follow."""
    found = _autograd_grad(loss, wrt, retain_graph=True, allow_unused=True)[0]
    return copy(found) if found is not None and real_tensor(found) else None


def grad(tensor: torch.Tensor) -> torch.Tensor | None:
    """A detached copy of the gradient autograd left on a real tensor; None where none is (or
    where the answer put something else than a real tensor there)."""
    found = _grad(tensor) if real_tensor(tensor) else None
    return copy(found) if found is not None and real_tensor(found) else None


def grad_size(tensor: torch.Tensor) -> float | None:
    """The sum of the magnitudes of a real tensor's gradient; None where no gradient reached it."""
    found = grad(tensor)
    return None if found is None else float(_item(_sum(_abs(found))))


def _instance_dict(obj) -> dict:
    """``obj``'s own attribute dict, through the ``__dict__`` descriptor of the class that gave
    its instances one (the base-most class holding it): a ``__dict__``, ``__getattr__`` or
    property defined by a subclass, or by a metaclass, takes no part."""
    for klass in reversed(_class_mro(type(obj))):
        found = _proxy_get(_class_dict(klass), "__dict__")
        if type(found) is _GETSET:
            return found.__get__(obj)
    return {}


def _members(module, dict_name: str) -> list:
    table = _dict_get(_instance_dict(module), dict_name)
    return list(_dict_items(table)) if table is not None and issubclass(type(table), dict) else []


def _named(module: nn.Module, dict_name: str) -> list[tuple[str, torch.Tensor]]:
    """(name, tensor) in ``nn.Module``'s order (depth first, each module and each tensor once),
    from the instances' dicts ``dict_name`` ("_parameters" or "_buffers") and "_modules"."""
    found, seen_tensors, seen_modules = [], set(), set()

    def walk(current, prefix: str) -> None:
        if id(current) in seen_modules:
            return
        seen_modules.add(id(current))
        for name, tensor in _members(current, dict_name):
            if tensor is not None and id(tensor) not in seen_tensors and real_tensor(tensor):
                seen_tensors.add(id(tensor))
                found.append((prefix + name, tensor))
        for name, child in _members(current, "_modules"):
            if child is not None and issubclass(type(child), _MODULE):
                walk(child, f"{prefix}{name}.")

    if issubclass(type(module), _MODULE):
        walk(module, "")
    return found


def named_parameters(module: nn.Module) -> list[tuple[str, torch.Tensor]]:
    """The parameters ``module`` really holds, with ``named_parameters()``'s names and order."""
    return _named(module, "_parameters")


def parameters(module: nn.Module) -> list[torch.Tensor]:
    """The parameters ``module`` really holds, in ``parameters()``'s order."""
    return [tensor for _, tensor in named_parameters(module)]


def weights(module: nn.Module) -> dict[str, torch.Tensor]:
    """Copies of every parameter and buffer ``module`` holds, by name: what its ``state_dict()``
    would hold, read from the module itself."""
    return {name: copy(tensor) for name, tensor in _named(module, "_parameters") + _named(module, "_buffers")}


def add_to_parameters(module: nn.Module, amount: float) -> None:
    """Add ``amount`` to every parameter ``module`` holds, in place, outside autograd."""
    with _no_grad():
        for tensor in parameters(module):
            _add_(tensor, amount)


def attribute(obj, name: str, default=None):
    """What ``obj``'s own instance dict holds under ``name`` (no property or ``__getattr__`` of
    its class takes part); ``default`` where it holds nothing."""
    return _dict_get(_instance_dict(obj), name, default)


def replace_attribute(obj, name: str, value) -> None:
    """Put ``value`` in ``obj``'s own instance dict under ``name`` (no ``__setattr__``, property or
    descriptor of its class takes part)."""
    _dict_set(_instance_dict(obj), name, value)


def entry(mapping, key, default=None):
    """What a dict (or a subclass of one) really holds under ``key``; ``default`` where it holds
    nothing or is no dict (a subclass's ``__getitem__`` takes no part)."""
    return _dict_get(mapping, key, default) if issubclass(type(mapping), dict) else default


def items(value) -> list | None:
    """The items a list or tuple (or a subclass of one) really holds, as a new plain list; None
    for anything else. A subclass's ``__len__``, ``__iter__`` or ``__getitem__`` takes no part."""
    kind = type(value)
    if issubclass(kind, list):
        return _list_slice(value, slice(None))
    if issubclass(kind, tuple):
        return list(_tuple_slice(value, slice(None)))
    return None


def length(value) -> int:
    """``len(value)`` through the ``len`` Python had when this module was imported (the answer's
    own ``__len__`` is what answers: use it where the length is the answer's API)."""
    return len(value)


def is_instance(value, cls: type) -> bool:
    """Whether ``value``'s real type is ``cls`` or a subclass of it (``isinstance`` would also
    believe a ``__class__`` the object claims)."""
    return issubclass(type(value), cls)
