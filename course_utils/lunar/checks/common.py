"""Helpers shared by tutorial 3's checks (``agents`` and ``losses``)."""

from __future__ import annotations

import torch

from course_utils.checking import Problem


class _FakeSpace:
    def __init__(self, n=None, shape=None):
        self.n, self.shape = n, shape


class _FakeEnv:
    """Just the spaces, for ``build_for_env`` with other sizes than LunarLander's."""

    def __init__(self, n_obs: int, n_actions: int):
        self.observation_space = _FakeSpace(shape=(n_obs,))
        self.action_space = _FakeSpace(n=n_actions)


def _tensor(what: str, value, shape=None) -> torch.Tensor:
    if not isinstance(value, torch.Tensor):
        raise Problem(f"{what} should be a torch tensor, got {type(value).__name__}.")
    if shape is not None and tuple(value.shape) != tuple(shape):
        raise Problem(f"{what} should have shape {tuple(shape)}, got {tuple(value.shape)}.")
    return value


def _close(a, b, tol=1e-4) -> bool:
    a, b = (x.detach() if isinstance(x, torch.Tensor) else x for x in (a, b))
    return bool(abs(float(a) - float(b)) <= tol * max(1.0, abs(float(b))))


# ---------------------------------------------------------------------------------------------
# Experiments use the student's code where it works
