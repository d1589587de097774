"""Helpers shared by tutorial 3's checks (``agents`` and ``losses``)."""

from __future__ import annotations

import torch

from course_utils.checking import Problem, raise_if_error
from course_utils.records import Opaque


class _FakeSpace:
    def __init__(self, n=None, shape=None):
        self.n, self.shape = n, shape


class _FakeEnv:
    """Just the spaces, for ``build_for_env`` with other sizes than LunarLander's."""

    def __init__(self, n_obs: int, n_actions: int):
        self.observation_space = _FakeSpace(shape=(n_obs,))
        self.action_space = _FakeSpace(n=n_actions)


def tensor_of(what: str, value, shape=None) -> torch.Tensor:
    """A decoded record value that must be a torch tensor (of ``shape``); a ``Problem`` saying
    what came back instead (the student's error, an object, another type or shape)."""
    raise_if_error(value)
    if not isinstance(value, torch.Tensor):
        kind = value.description if isinstance(value, Opaque) else type(value).__name__
        raise Problem(f"{what} should be a torch tensor, got {kind}.")
    if shape is not None and tuple(value.shape) != tuple(shape):
        raise Problem(f"{what} should have shape {tuple(shape)}, got {tuple(value.shape)}.")
    return value


# ---------------------------------------------------------------------------------------------
# Experiments use the student's code where it works
