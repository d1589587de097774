"""What tutorial 4's judges know beyond the course's record of its own answer: values the course
computes with its reference code, which the student's package does not hold.

- for the public cases, they are stored in ``assets/replay_expected.json`` (``course release``
  writes it with ``course_admin.replay.reference``): ``stored(section)[case_key(case)]``;
- for any other case (the hidden ones, which only the grader judges), the grader computes them
  with its oracles, which it hands the judges (``checking.grader_oracle``): the student's kernel
  has none.
"""

from __future__ import annotations

import functools
import hashlib
import json

from course_utils.paths import ASSETS

EXPECTED_FILE = ASSETS / "replay_expected.json"


def case_key(case) -> str:
    """A case's name in the stored file: the SHA-256 of its JSON text."""
    return hashlib.sha256(json.dumps(case, sort_keys=True).encode()).hexdigest()


@functools.cache
def _file() -> dict:
    try:
        return json.loads(EXPECTED_FILE.read_text())
    except (OSError, ValueError):
        return {}


def stored(section: str) -> dict:
    """``{case_key: value}`` of one section of the stored file (empty when it has none)."""
    return _file().get(section, {})

