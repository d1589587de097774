"""Expected values for tutorial 3's checks, read from ``assets/lunar_expected.json``: inputs
and the reference implementations' outputs for ``calc_qvals``, ``from_episodes``, the losses and
the optional exercises (``load_expected``), and the stored episodes (``stored_episode``; the
stored test batch is ``checks.stored_batch``).

Student side: this module only reads the file. It uses none of the exercises' solutions (the
file is written at release time by ``course_admin.lunar.reference``), so the checks can run
where the solutions are not installed.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import torch

from course_utils.lunar.harness import Experience
from course_utils.paths import ASSETS

EXPECTED_FILE = ASSETS / "lunar_expected.json"


def load_expected(path: Path = EXPECTED_FILE) -> dict:
    return json.loads(path.read_text())


@dataclass(eq=False, kw_only=True)
class StoredEpisode:
    """One stored episode, for code that reads episodes (``TrainBatch.from_episodes``):
    ``experiences`` (``Experience(state, action, reward, is_done)``), ``total_reward`` and
    ``calc_qvals(gamma)``, which returns the stored q-values.

    Only the values the checks need are known, both stored: for the case's gamma and for gamma 1.0
    (the plain reward-to-go); any other gamma raises a ``ValueError``. Built with keywords only
    (``StoredEpisode(experiences=..., ...)``), so it cannot stand in for the tutorial's
    ``Episode(total_reward, experiences)``."""

    experiences: list[Experience]
    total_reward: float
    stored_gamma: float
    stored_qvals: list[float]
    stored_undiscounted: list[float]

    def calc_qvals(self, gamma) -> list[float]:
        gamma = float(gamma)
        if math.isclose(gamma, self.stored_gamma, rel_tol=0.0, abs_tol=1e-6):
            return list(self.stored_qvals)
        if gamma == 1.0:
            return list(self.stored_undiscounted)
        unknown_gamma = (
            f"the check's stored episodes know their q-values for gamma {self.stored_gamma:g} (and 1) only, "
            f"not for gamma {gamma:g}: pass the gamma given to from_episodes on to calc_qvals"
        )
        raise ValueError(unknown_gamma)

    def __repr__(self) -> str:
        return f"StoredEpisode(total_reward={self.total_reward:.2f}, steps={len(self.experiences)})"


def stored_episode(ep: dict, gamma: float, qvals) -> StoredEpisode:
    """A ``StoredEpisode`` from its ``states``, ``actions``, ``rewards`` and ``q_vals_undiscounted``
    (lists in ``ep``) and its q-values for ``gamma``; the last step is the terminal one."""
    length = len(ep["rewards"])
    experiences = [
        Experience(torch.tensor(s, dtype=torch.float32), a, r, t == length - 1)
        for t, (s, a, r) in enumerate(zip(ep["states"], ep["actions"], ep["rewards"], strict=True))
    ]
    return StoredEpisode(experiences=experiences, total_reward=float(sum(ep["rewards"])), stored_gamma=gamma,
                         stored_qvals=list(qvals), stored_undiscounted=list(ep["q_vals_undiscounted"]))
