"""Values the course stored for tutorial 2's notebook, read from ``assets/colour_expected.json``:
the optional ``discounted_returns`` check's cases with their returns, the replay actor loss check's
public cases with the values its hints compare a wrong answer with, and the A2C loss and its
gradient's norm on the notebook's replayed step (the mode-2 agent on one step of mode-1 trials).

Student side: this module only reads the file. The file is written at release time by
``course_admin.colour.expected`` with the exercises' harvested solutions, so the student package
holds no reference implementation to compare with.
"""

from __future__ import annotations

import json
from pathlib import Path

from course_utils.paths import ASSETS

EXPECTED_FILE = ASSETS / "colour_expected.json"


def load_expected(path: Path = EXPECTED_FILE) -> dict:
    """``{"discounted_returns": [{"rewards", "gamma", "what", "returns"}, ...],
    "replay_actor_cases": [{"log_pi", "mu", "advantage", "rho_max", "what", "hints"}, ...],
    "replayed_step": {"loss", "grad_norm", ...}}``."""
    return json.loads(path.read_text())


def replayed_step() -> dict:
    """The course's ``loss`` and ``grad_norm`` on the notebook's replayed step (its own actor term),
    and how that step is made (``made``)."""
    return load_expected()["replayed_step"]
