"""Stored data for tutorial 4's checks, from the course's own code: ``assets/replay_expected.json``
holds what each typical mistake of the TD loss gives on the public cases (``td_judge.variants``),
which the check cell's hints read (``course_utils.replay.td_judge``), and the total of the segment
trees' speed part for the public seed (``tree_judge.speed_total``). ``course release`` writes it
(``write_expected``) and ``course release --check`` fails when it is stale (``stale_expected``).
"""

from __future__ import annotations

from pathlib import Path

from course_admin import stored_json
from course_admin.replay import td_judge, tree_judge
from course_utils.replay.checks import TREES
from course_utils.replay.checks_td import TD
from course_utils.replay.expected import EXPECTED_FILE, case_key


def _rounded(value):
    """Floats to 9 decimals, in nested lists and dicts: the file does not change with the last bits
    of a float64 computation, far below the judge's tolerance."""
    if isinstance(value, float):
        return round(value, 9)
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    return value


def make_expected() -> dict:
    """``{"td_loss": {case_key(case): td_judge.variants(case)}}`` over the TD loss's public cases, and
    ``{"segment_trees": {case_key([speed, seed]): total}}`` for the trees' public speed part."""
    speed = TREES.cases_for(hidden=False)["speed"]
    return {"td_loss": {case_key(case): _rounded(td_judge.variants(case)) for case in TD.cases_for(hidden=False)},
            "segment_trees": {case_key([speed, speed["seed"]]): tree_judge.speed_total(speed, speed["seed"])}}


def write_expected(path: Path = EXPECTED_FILE) -> Path:
    """Regenerate ``assets/replay_expected.json``; returns the path written."""
    return stored_json.write(path, make_expected())


def stale_expected(path: Path = EXPECTED_FILE) -> list[str]:
    """Why ``path`` no longer holds what ``make_expected()`` computes (``stored_json.stale``): one line
    per differing section, or ``[]`` when it is up to date."""
    return stored_json.stale(path, make_expected())
