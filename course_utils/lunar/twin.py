"""``numpy_scores(net)``: the action scores of a notebook's policy network computed with NumPy,
for playing episodes (``rollouts.Shard``) and evaluating them.

Why: while the episodes of a batch are played, the network runs once per step on 1-16
observations. On inputs that small PyTorch's per-operation overhead is the whole cost: the
actor-critic's forward took more CPU than the physics of the 8 landers it steered (Sections
6-8). The same arithmetic with NumPy costs a fraction of that.

How: the network's ``forward`` is traced once with ``torch.fx`` into its operations. If every
operation is one this module knows (``OPS``: linear layers and the usual activations, taking an
item of a tuple), they are replayed with NumPy on views of the network's own parameter
tensors, so weights loaded or trained in place are used at once. Only the operations the
action scores depend on are replayed (an actor-critic's value head is skipped). Anything else
(a forward that branches on its input, an operation not in ``OPS``, a result that differs from
PyTorch's by more than float32 rounding on a test batch) gives None: the caller runs the
network with PyTorch, as before. The student's classes stay plain PyTorch either way.

Shapes: ``N`` observations of ``d`` features, ``A`` action scores.
"""

from __future__ import annotations

import operator

import numpy as np
import torch
from torch import nn


def _linear(module: nn.Linear):
    weight_t = module.weight.detach().numpy().T  # a view: in-place updates of the weights are seen
    bias = None if module.bias is None else module.bias.detach().numpy()
    return (lambda x: x @ weight_t) if bias is None else (lambda x: x @ weight_t + bias)


def _relu(x):
    return np.maximum(x, np.float32(0.0))


def _leaky_relu(module: nn.LeakyReLU):
    slope = np.float32(module.negative_slope)
    return lambda x: np.where(x > 0, x, slope * x)


MODULES = {
    nn.Linear: _linear,
    nn.ReLU: lambda m: _relu,
    nn.Tanh: lambda m: np.tanh,
    nn.LeakyReLU: _leaky_relu,
    nn.Identity: lambda m: (lambda x: x),
}
"""Module types the NumPy forward replays: type -> (module -> function of one array)."""

FUNCTIONS = {
    torch.relu: _relu, torch.nn.functional.relu: _relu, torch.tanh: np.tanh, torch.nn.functional.tanh: np.tanh,
    operator.getitem: operator.getitem,
}
"""Functions (and ``Tensor`` methods, by name in ``METHODS``) the NumPy forward replays."""

METHODS = {"relu": _relu, "tanh": np.tanh}


def numpy_scores(net: nn.Module, in_features: int = 8):
    """``scores(obs)``: ``net``'s action scores (N, A) float32 for observations ``obs`` (N, d)
    float32 (``d = in_features``), computed with NumPy; or None where ``net``'s forward cannot be
    replayed (see the module). The scores are the output, or its first item for a network that
    returns ``(scores, values)``."""
    try:
        graph = torch.fx.symbolic_trace(net).graph
        steps, names = _plan(net, graph)
    except Exception:  # noqa: BLE001 - a forward fx cannot trace or replay: PyTorch runs it
        return None

    def scores(obs: np.ndarray) -> np.ndarray:
        values = {names[0]: obs}
        for name, fn, args in steps:
            values[name] = fn(*(values[a] if isinstance(a, _Ref) else a for a in args))
        return values[names[1]]

    probe = np.random.default_rng(0).normal(size=(5, in_features)).astype(np.float32)
    try:
        with torch.no_grad():
            expected = net(torch.from_numpy(probe))
        expected = (expected[0] if isinstance(expected, tuple) else expected).numpy()
        got = scores(probe)
    except Exception:  # noqa: BLE001
        return None
    if got.shape != expected.shape or not np.allclose(got, expected, rtol=1e-4, atol=1e-4):
        return None
    return scores


class _Ref(str):
    """The name of an earlier result, among an operation's arguments."""


def _plan(net: nn.Module, graph):
    """The operations the scores need, in order: ``[(name, fn, args)]``, and the names of the
    input and of the scores. Raises for anything ``numpy_scores`` does not replay."""
    modules = dict(net.named_modules())
    inputs = [node for node in graph.nodes if node.op == "placeholder"]
    (output,) = [node for node in graph.nodes if node.op == "output"]
    if len(inputs) != 1:
        raise ValueError("forward must take one input")
    result = output.args[0]
    if isinstance(result, tuple):
        result = result[0]
    if not isinstance(result, torch.fx.Node):
        raise ValueError("the scores are not computed from the input")
    needed, stack = set(), [result]
    while stack:  # the nodes the scores depend on
        node = stack.pop()
        if node.name not in needed:
            needed.add(node.name)
            stack.extend(node.all_input_nodes)
    steps = []
    for node in graph.nodes:
        if node.name not in needed or node.op == "placeholder":
            continue
        if node.kwargs:
            raise ValueError(f"keyword arguments in {node.format_node()}")
        args = tuple(_Ref(a.name) if isinstance(a, torch.fx.Node) else a for a in node.args)
        if any(isinstance(a, (list, tuple, dict)) for a in args):
            raise ValueError(f"nested arguments in {node.format_node()}")
        if node.op == "call_module":
            module = modules[node.target]
            fn = MODULES[type(module)](module)
        elif node.op == "call_function":
            fn = FUNCTIONS[node.target]
        elif node.op == "call_method":
            fn = METHODS[node.target]
        else:
            raise ValueError(f"cannot replay {node.format_node()}")
        steps.append((node.name, fn, args))
    return steps, (inputs[0].name, result.name)
