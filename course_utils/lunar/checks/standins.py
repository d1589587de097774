"""What tutorial 3's checks hand the student's code in place of the environment and of the other
exercises' answers (none of them is an answer to an exercise): ``_FakeEnv``, just the spaces of
an environment of any size (for ``build_for_env``); ``_ToyEnv``, an environment of any size with
scripted dynamics (``make_case_env``); ``_FixedScores``, a "network" with the same action scores
in every state (``_preferring`` one action); ``_PairNet``, a scores network dressed as an
actor-critic (with a constant state value); ``_linear_net``, a seeded linear layer. And what the network checks ask of the
student's network's layers, without building one: the weight shapes of an MLP of given sizes
(``mlp_weight_shapes``, ``missing_shapes``) and the inputs that tell an affine map (``affine_probe``).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from course_utils import facts
from course_utils.lunar.env import make_env
from course_utils.runtime import seed_torch


class _FakeSpace:
    def __init__(self, n=None, shape=None):
        self.n, self.shape = n, shape


class _FakeEnv:
    """Just the spaces, for ``build_for_env`` with other sizes than LunarLander's."""

    def __init__(self, n_obs: int, n_actions: int):
        self.observation_space = _FakeSpace(shape=(n_obs,))
        self.action_space = _FakeSpace(n=n_actions)


class _ToyEnv:
    """A check-private environment of ``n_obs`` observations and ``n_actions`` actions, with the
    gymnasium API the agents use (``reset(seed)``, ``step(action)``, ``close()``).

    Deterministic given the seed of the first ``reset``: each episode lasts 4 to 11 steps and
    ends terminated (an even length) or truncated (an odd one); the reward depends on the state
    and the action."""

    def __init__(self, n_obs: int, n_actions: int):
        self.n_obs, self.n_actions = n_obs, n_actions
        self.observation_space = _FakeSpace(shape=(n_obs,))
        self.action_space = _FakeSpace(n=n_actions)
        self._rng = np.random.default_rng(0)
        self._state, self._t, self._horizon = np.zeros(n_obs, np.float32), 0, 1

    def reset(self, seed=None, options=None):
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._t, self._horizon = 0, int(self._rng.integers(4, 12))
        self._state = self._rng.normal(0.0, 1.0, self.n_obs).astype(np.float32)
        return self._state.copy(), {}

    def step(self, action):
        action = int(action)
        reward = round(float(self._state[action % self.n_obs]) + 0.5 * action, 4)
        self._t += 1
        self._state = (0.9 * self._state + self._rng.normal(0.0, 0.3, self.n_obs)).astype(np.float32)
        ended = self._t >= self._horizon
        return self._state.copy(), reward, ended and self._horizon % 2 == 0, ended and self._horizon % 2 == 1, {}

    def close(self):
        pass


def make_case_env(case: dict):
    """The environment a case names: the course's LunarLander or a ``_ToyEnv`` of its sizes."""
    if case["env"] == "lunar":
        return make_env()
    return _ToyEnv(case["n_obs"], case["n_actions"])


class _FixedScores(nn.Module):
    """A 'network' returning the same action scores for every state (shape (N, actions))."""

    def __init__(self, scores):
        super().__init__()
        self.scores = torch.as_tensor(scores, dtype=torch.float32)

    def forward(self, x):
        return self.scores.expand(x.shape[0], -1).clone() if x.dim() == 2 else self.scores.clone()


def _preferring(action: int, n_actions: int) -> _FixedScores:
    """Scores that give ``action`` probability ~1."""
    scores = torch.full((n_actions,), -30.0)
    scores[action] = 30.0
    return _FixedScores(scores)


def _linear_net(seed: int = 0, n_obs: int = 8, n_actions: int = 4) -> nn.Module:
    """A linear layer seeded with ``seed``; the same weights wherever it is built (the global
    torch generator is left as it was)."""
    with torch.random.fork_rng(devices=[]):
        seed_torch(seed)
        return nn.Linear(n_obs, n_actions)


class _PairNet(nn.Module):
    """Wrap a scores network as an AAC network returning (scores, state values (N, 1) all equal to ``value``)."""

    def __init__(self, net, value: float = 0.0):
        super().__init__()
        self.net, self.value = net, value

    def forward(self, x):
        scores = self.net(x)
        return scores, torch.full((*scores.shape[:-1], 1), float(self.value))


def mlp_weight_shapes(n_in: int, hidden, n_out: int) -> list[tuple[int, int]]:
    """The weight shapes (out, in) of the linear layers of an MLP ``n_in -> *hidden -> n_out``."""
    sizes = [n_in, *hidden, n_out]
    return [(b, a) for a, b in zip(sizes[:-1], sizes[1:], strict=True)]


def missing_shapes(have, want) -> list[tuple[int, int]]:
    """The shapes of ``want`` (with repeats) that ``have`` (the network's parameter shapes) lacks."""
    left = [tuple(shape) for shape in have]
    missing = []
    for shape in want:
        if tuple(shape) in left:
            left.remove(tuple(shape))
        else:
            missing.append(tuple(shape))
    return missing


def affine_probe(x: torch.Tensor) -> torch.Tensor:
    """Rows ``x`` (n, d), ``-x`` and one row of zeros: a map f is affine on them when
    ``f(x) + f(-x) = 2 f(0)`` (``affine_residual``), which no layers with a nonlinearity between them give."""
    return torch.cat([x, -x, torch.zeros(1, x.shape[1])])


def affine_residual(output: torch.Tensor) -> float:
    """The largest ``|f(x) + f(-x) - 2 f(0)|`` of an output (2n + 1, k) on ``affine_probe``'s rows."""
    n = (output.shape[0] - 1) // 2
    output = output.double()
    return float((output[:n] + output[n : 2 * n] - 2 * output[2 * n :]).abs().max())


DEFAULT_HIDDEN = (128, 128)
"""``build_for_env``'s hidden layers when a case names none (the notebook's given classmethod)."""


def hidden_of(case: dict) -> tuple[int, ...]:
    """The hidden layer sizes a network case builds with."""
    return tuple(case.get("hidden", DEFAULT_HIDDEN))


def build_hp(case: dict) -> dict:
    """What ``build_for_env`` is handed besides the environment: ``hidden_layers`` when the case names them."""
    return {"hidden_layers": tuple(case["hidden"])} if "hidden" in case else {}


def weight_shapes(net) -> list[list[int]]:
    """The shapes of the two-dimensional parameters the module really holds (``facts``)."""
    return [[int(n) for n in p.shape] for p in facts.parameters(net) if p.dim() == 2]


def layers_problem(case: dict, shapes, n_obs: int, n_actions: int, wants: list[list[tuple[int, int]]]) -> str | None:
    """Why the network's weight shapes ``shapes`` fit none of ``wants`` (each a list of weight shapes
    the network must hold for ``hidden_of(case)``), or None."""
    if type(shapes) is not list:
        return "the check could not read your network's parameters."
    if any(not missing_shapes(shapes, want) for want in wants):
        return None
    hidden = hidden_of(case)
    sizes = " -> ".join(str(n) for n in (n_obs, *hidden, n_actions))
    return (f"built with hidden_layers={hidden}, the network should be an MLP {sizes} (one nn.Linear per pair of "
            f"consecutive sizes: weights of shapes {[list(w) for w in wants[0]]}); its weights have shapes {shapes}. "
            "Build a hidden layer of each size in hidden_layers.")


AFFINE_HINT = ("your network's output is an affine function of its input (f(x) + f(-x) = 2 f(0)): put a nonlinearity "
               "such as nn.ReLU() between the linear layers.")
