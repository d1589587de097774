"""Which submissions ``course autograde`` need not grade again: a key per submission (a hash of
everything that decides its grade and feedback) and the index in the course folder of the key
each student's last graded submission had."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
from pathlib import Path

from course_admin import PACKAGE as ADMIN
from course_admin.grading.sandbox import Limits
from course_utils.paths import ASSETS, PACKAGE, ROOT

INDEX = "autograde_index.json"
"""In the course folder: per ``student/assignment``, the key of the last graded submission
and the problems found, so an unchanged submission is not graded again."""
GRADER_VERSION = "3"  # part of every key: bump when grading itself changes results


@functools.lru_cache(maxsize=1)
def course_fingerprint() -> str:
    """SHA-256 of everything besides the notebooks that a grade depends on: the course
    packages' code (the checks and the grader), the assets (expected values, checkpoints'
    registry), the nbgrader configuration, and the versions of the course,
    nbgrader and Python. A fixed check changes it, so the next run grades again."""
    from importlib import metadata

    digest = hashlib.sha256()
    files = sorted(PACKAGE.rglob("*.py")) + sorted(ADMIN.rglob("*.py")) + sorted(ASSETS.rglob("*.json"))
    files.append(ROOT / "nbgrader_config.py")
    for path in files:
        if path.is_file():
            digest.update(str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name).encode())
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    for name in ("rl-course", "nbgrader"):
        try:
            digest.update(f"{name}={metadata.version(name)}".encode())
        except metadata.PackageNotFoundError:
            digest.update(f"{name}=?".encode())
    digest.update(sys.version.encode())
    return digest.hexdigest()


def submission_key(content: bytes, source: bytes, limits: Limits, feedback: str = "pass_fail") -> str:
    """Content hash of what decides a grade and its feedback: the submission, the instructor's
    notebook (solutions and hidden tests), the limits, the course package
    (``course_fingerprint``), the feedback policy and the grader's version."""
    digest = hashlib.sha256(GRADER_VERSION.encode())
    parts = (content, source, json.dumps(limits.as_dict(), sort_keys=True).encode(), course_fingerprint().encode(),
             f"feedback={feedback}".encode())
    for part in parts:
        digest.update(hashlib.sha256(part).digest())
    return digest.hexdigest()


def load_index(course_dir: Path) -> dict:
    try:
        return json.loads((course_dir / INDEX).read_text())
    except (OSError, json.JSONDecodeError):
        return {}


def save_index(course_dir: Path, index: dict) -> None:
    temporary = course_dir / f".{INDEX}.tmp"
    temporary.write_text(json.dumps(index, indent=1, sort_keys=True))
    os.replace(temporary, course_dir / INDEX)
