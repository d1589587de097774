"""What tutorial 3's agent checks (``agents``, ``episodes``) hand the student's code in place of
the other exercises' answers, and the small helpers their drives and judges share.

Stand-ins (none is an answer to an exercise): ``_ToyEnv``, an environment of any size with
scripted dynamics; ``_FixedScores``, a "network" with the same action scores in every state;
``_PairNet``, a scores network dressed as an actor-critic; ``_linear_net``, a seeded linear
layer.

Drive helpers (``method``, ``attribute``) turn every way of reaching into the student's object
into a value or ``records.error``; judge helpers (``number``; tensors: ``common.tensor_of``)
turn a decoded value into what the judge compares, or a ``Problem``.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from course_utils import records
from course_utils.checking import Problem, attempt, raise_if_error
from course_utils.lunar.checks.common import _FakeSpace
from course_utils.lunar.env import make_env
from course_utils.records import Opaque
from course_utils.runtime import seed_torch

# ---------------------------------------------------------------------------------------------
# Stand-ins


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
    """Wrap a scores network as an AAC network returning (scores, zero values (N, 1))."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        scores = self.net(x)
        return scores, torch.zeros(*scores.shape[:-1], 1)


# ---------------------------------------------------------------------------------------------
# Drive helpers: reach into the student's objects, never raise


def is_error(value) -> bool:
    return type(value) is dict and "__error__" in value


def _lacks(what: str, obj, name: str, error: Exception) -> dict:
    return records.error(
        f"{what}: your {type(obj).__name__} has no `{name}` ({type(error).__name__}: {str(error)[:200]}). "
        "Compare your code with the names the exercise asks for."
    )


def attribute(what: str, obj, name: str):
    """``obj.name``, or ``records.error`` saying what went wrong."""
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


def experience_record(exp, fields=("state", "action", "reward", "is_done")):
    """An ``Experience``'s fields as they came back, or an error saying it is no ``Experience``."""
    if is_error(exp):
        return exp
    if not (isinstance(exp, tuple) and all(hasattr(exp, field) for field in fields)):
        return records.error(f"step() should return an Experience(state, action, reward, is_done), got {_short(exp)}.")
    return {field: getattr(exp, field) for field in fields}


def _short(value) -> str:
    try:
        return f"{value!r:.200}"
    except Exception:
        return f"a {type(value).__name__}"


def truth(value) -> bool:
    """Whether a value the student's code returned counts as true (False when it cannot say)."""
    try:
        return bool(value)
    except Exception:
        return False


# ---------------------------------------------------------------------------------------------
# Judge helpers: decoded values into what the judge compares


def number(value) -> float | None:
    """A decoded single number as a float, or None when it is none."""
    if isinstance(value, records.StudentError | Opaque | str | list | dict) or value is None:
        return None
    try:
        return float(np.asarray(value, dtype=float).reshape(()))
    except (TypeError, ValueError):
        return None


def flag(what: str, value) -> bool:
    """A decoded value that must be True or False (a bool, a 0/1, a one-element array or tensor)."""
    raise_if_error(value)
    if type(value) in (bool, np.bool_) or (type(value) is int and value in (0, 1)):
        return bool(value)
    if (isinstance(value, torch.Tensor) and value.numel() == 1) or (isinstance(value, np.ndarray) and value.size == 1):
        return bool(value)
    shown = value.description if isinstance(value, Opaque) else f"{value!r:.100}"
    raise Problem(f"{what} should be True or False, got {shown}.")


def close(a: float, b: float, tol: float) -> bool:
    return abs(a - b) <= tol * max(1.0, abs(b))
