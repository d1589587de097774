"""``course release`` writes ``assets/colour_expected.json`` here: what tutorial 2's notebook
compares the student's code with, computed with the harvested solutions (which the student
package does not hold).

- ``discounted_returns``: the optional check's cases (rewards, gamma, what they test) and their
  returns;
- ``replay_actor_cases``: the public cases of the replay actor loss's check, each with the values
  its hints compare a wrong answer with (``rho_judge.with_hints``);
- ``replayed_step``: the A2C loss and its gradient's norm when the pretrained mode-2 agent takes
  one step, with the course's actor term, on 100 mode-1 trials the pretrained mode-1 agent played
  (``evaluate_agent(ColourEnv(), mode1, mode=1, num_trials=100, rng=0)``, the notebook's
  ``one_step``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from course_admin import stored_json
from course_admin.colour import rho_judge, solutions
from course_utils.colour.env import ColourEnv
from course_utils.colour.expected import EXPECTED_FILE
from course_utils.colour.training import evaluate_agent, load_agent, replayed_step


def _returns_cases() -> list[tuple[list[float], float, str]]:
    """(rewards, gamma, what) for each call of the optional check."""
    rng = np.random.default_rng(2)
    return [
        ([1.0, 1.0, 1.0], 0.5, "three rewards of 1 with gamma 0.5"),
        ([0.0, 0.0, 1.0], 0.9, "a single reward at the end"),
        ([2.0], 0.91, "a single trial"),
        ([0.25, 0.5, 0.75, 1.0], 0.0, "gamma 0: each return is its own reward"),
        ([0.25, 0.5, 0.75, 1.0], 1.0, "gamma 1: each return is the sum of what is left"),
        ([float(r) for r in rng.integers(1, 5, 100) / 4], 0.91, "100 trials like the agent's, gamma 0.91"),
    ]


def make_expected() -> dict:
    returns = [{"rewards": rewards, "gamma": gamma, "what": what,
                "returns": [round(float(q), 9) for q in solutions.discounted_returns(rewards, gamma)]}
               for rewards, gamma, what in _returns_cases()]
    one_step = evaluate_agent(ColourEnv(), load_agent("mode1"), mode=1, num_trials=100, rng=0).experience()
    step = replayed_step(load_agent("mode2"), one_step, solutions.replay_actor_loss)
    return {
        "discounted_returns": returns,
        "replay_actor_cases": rho_judge.public_cases(),
        "replayed_step": {
            "loss": round(step["loss"], 6),
            "grad_norm": round(step["grad_norm"], 6),
            "made": "the mode-2 agent, one step on evaluate_agent(ColourEnv(), mode1 agent, mode=1, num_trials=100, "
                    "rng=0)",
        },
    }


def write_expected(path: Path = EXPECTED_FILE) -> Path:
    """Regenerate ``assets/colour_expected.json``; returns the path written."""
    return stored_json.write(path, make_expected())


def stale_expected(path: Path = EXPECTED_FILE) -> list[str]:
    """Why ``path`` no longer holds what ``make_expected()`` computes (``stored_json.stale``): one line
    per differing section, or ``[]`` when it is up to date."""
    return stored_json.stale(path, make_expected())
