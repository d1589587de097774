"""The action scores of a notebook's network computed in NumPy, where the course can show it is
the same function: what the rollout workers (``rollouts.Shard``) draw actions with.

Why: a batch's episodes take one forward of the student's network per step on the 5-8 landers
of a shard still playing, and on such small batches a torch forward is nearly all per-operation
overhead (about 60 us for two 128-unit networks, more than box2d's step); the same matrix
products in NumPy cost a fraction of it. Only the scores are computed: an actor-critic's values
are not needed to act.

When: ``torch.fx`` traces the network's ``forward``, and every operation the scores depend on is
one the course knows (``nn.Linear``; ``ReLU``, ``Tanh``, ``Sigmoid``, ``LeakyReLU``, ``ELU``,
``Identity`` as modules, functions or tensor methods), each applied to one tensor. Anything else
(control flow fx cannot trace, dropout, a custom module or operation, a network returning something
other than scores or ``(scores, ...)``) gets ``None`` from ``numpy_scores``, and the caller runs
the torch forward. ``NumpyScores.agrees`` compares the two on a probe batch with the current
weights; the rollouts check it on every batch's weights and use the torch forward where it fails.

The NumPy arrays are views of the network's own parameter tensors: ``load_state_dict`` copies new
weights into those tensors, and the views see them.

Shapes: ``n`` observations of ``d`` features, ``A`` actions.
"""

from __future__ import annotations

import contextlib
import io

import numpy as np
import torch
from torch import nn
from torch.nn import functional


def _relu(x):
    return np.maximum(x, np.float32(0.0))


def _relu_in_place(x):
    return np.maximum(x, np.float32(0.0), out=x)


def _tanh_in_place(x):
    return np.tanh(x, out=x)


_IN_PLACE = {_relu: _relu_in_place, np.tanh: _tanh_in_place}
"""The two common activations written into their input's array, where no other step reads it."""


def _sigmoid(x):
    return np.float32(1.0) / (np.float32(1.0) + np.exp(-x))


def _leaky_relu(slope):
    slope = np.float32(slope)
    return lambda x: np.where(x > 0, x, x * slope)


def _elu(alpha):
    alpha = np.float32(alpha)
    return lambda x: np.where(x > 0, x, alpha * np.expm1(np.minimum(x, np.float32(0.0))))


def _identity(x):
    return x


_MODULES = {
    nn.ReLU: lambda m: _relu,
    nn.Tanh: lambda m: np.tanh,
    nn.Sigmoid: lambda m: _sigmoid,
    nn.LeakyReLU: lambda m: _leaky_relu(m.negative_slope),
    nn.ELU: lambda m: _elu(m.alpha),
    nn.Identity: lambda m: _identity,
}
"""Elementwise modules (their exact type, so a subclass with its own ``forward`` is not taken for
one) -> a builder of the NumPy function of the module."""

_FUNCTIONS = {torch.relu: _relu, functional.relu: _relu, torch.tanh: np.tanh, functional.tanh: np.tanh,
              torch.sigmoid: _sigmoid, functional.sigmoid: _sigmoid}
"""Elementwise functions of one tensor (extra keyword arguments allowed: ``inplace`` only)."""

_METHODS = {"relu": _relu, "tanh": np.tanh, "sigmoid": _sigmoid}
"""Tensor methods of no further argument."""


class NumpyScores:
    """``scores(obs)``: the action scores (n, A) float32 of observations (n, d) float32, computed in
    NumPy by ``steps``: each ``(output name, input name, function)``, the input ``"x"`` the
    observations. Built by ``numpy_scores``; ``net`` is the torch network it mirrors."""

    def __init__(self, net: nn.Module, steps: list, result: str):
        self.net, self.steps, self.result = net, steps, result

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        values = {"x": obs}
        for name, source, function in self.steps:
            values[name] = function(values[source])
        return values[self.result]

    def agrees(self, d: int, samples: int = 64, seed: int = 0) -> bool:
        """Whether the scores match the torch network's on ``samples`` random observations of ``d``
        features with its current weights (float32 rounding apart: relative 1e-4 of the largest score)."""
        probe = np.random.default_rng(seed).normal(0.0, 1.0, (samples, d)).astype(np.float32)
        with torch.no_grad():
            output = self.net(torch.from_numpy(probe))
        expected = (output[0] if isinstance(output, tuple) else output).detach().numpy()
        ours = self(probe)
        if ours.shape != expected.shape or not np.all(np.isfinite(expected)):
            return False
        scale = max(1.0, float(np.abs(expected).max()))
        return bool(np.abs(ours - expected).max() <= 1e-4 * scale)


def _linear(module: nn.Linear):
    weight_t = module.weight.detach().numpy().T  # a view: it follows load_state_dict
    bias = None if module.bias is None else module.bias.detach().numpy()
    if bias is None:
        return lambda x: x @ weight_t

    def forward(x):
        out = x @ weight_t
        out += bias  # in place: the product is a new array
        return out

    return forward


def trace(net: nn.Module) -> torch.fx.GraphModule | None:
    """``net``'s forward traced by ``torch.fx``, or None where fx cannot trace it (the caller then
    runs the network whole). A forward that prints would print while it is traced: swallowed."""
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            return torch.fx.symbolic_trace(net)
    except Exception:  # noqa: BLE001 - any code fx cannot trace keeps the torch forward
        return None


def numpy_scores(net: nn.Module) -> NumpyScores | None:
    """The NumPy scores of ``net`` (see the module's docstring), or None where the course cannot
    show they are the same function (the caller then runs the torch forward). ``net`` must be in
    eval or train mode alike: none of the operations taken behaves differently in either."""
    traced = trace(net)
    if traced is None:
        return None
    nodes = list(traced.graph.nodes)
    placeholders = [node for node in nodes if node.op == "placeholder"]
    outputs = [node for node in nodes if node.op == "output"]
    if len(placeholders) != 1 or len(outputs) != 1:
        return None
    returned = outputs[0].args[0]
    if isinstance(returned, (tuple, list)) and returned:
        returned = returned[0]
    if not isinstance(returned, torch.fx.Node):
        return None
    needed, todo = set(), [returned]
    while todo:
        node = todo.pop()
        if node not in needed:
            needed.add(node)
            todo.extend(node.all_input_nodes)
    steps = []
    for node in nodes:
        if node not in needed or node.op == "placeholder":
            continue
        function = _step(net, node)
        if function is None:
            return None
        source = node.args[0]
        readers = [user for user in source.users if user in needed]
        if source.op != "placeholder" and len(readers) == 1:
            function = _IN_PLACE.get(function, function)  # nothing else reads the input: overwrite it
        steps.append((node.name, "x" if source.op == "placeholder" else source.name, function))
    if returned.op == "placeholder":
        return None
    return NumpyScores(net, steps, returned.name)


def _step(net: nn.Module, node: torch.fx.Node):
    """The NumPy function of one traced operation of one tensor, or None if the course does not know it."""
    if not node.args or not isinstance(node.args[0], torch.fx.Node) or len(node.args) != 1:
        return None
    if node.op == "call_module":
        if node.kwargs:
            return None
        module = net.get_submodule(node.target)
        if type(module) is nn.Linear:
            return _linear(module)
        builder = _MODULES.get(type(module))
        return None if builder is None else builder(module)
    if node.op == "call_function":
        if set(node.kwargs) - {"inplace"}:
            return None
        return _FUNCTIONS.get(node.target) if not isinstance(node.target, str) else None
    if node.op == "call_method":
        if node.kwargs:
            return None
        return _METHODS.get(node.target)
    return None


def one_blas_thread() -> bool:
    """Make NumPy's OpenBLAS compute in this process's own thread: for a worker process that runs
    ``NumpyScores`` (call it there, not in a notebook's kernel). Why: on a product of a few
    observations by a 128 x 128 matrix OpenBLAS starts its other threads, which then keep a core
    busy waiting for the next product (a run of 1000 episodes took 13.9 CPU-s with them against
    9.7 without). Returns whether a loaded OpenBLAS was found and set (Linux: read from
    ``/proc/self/maps``; elsewhere nothing is done)."""
    import ctypes
    import re

    try:
        with open("/proc/self/maps") as maps:
            paths = sorted(set(re.findall(r"(/\S*openblas\S*\.so\S*)", maps.read())))
    except OSError:
        return False
    found = False
    for path in paths:
        library = ctypes.CDLL(path)
        for name in ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads", "openblas_set_num_threads"):
            setter = getattr(library, name, None)
            if setter is not None:
                setter(1)
                found = True
                break
    return found
