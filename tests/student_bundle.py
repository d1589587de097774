"""The student bundle, built and installed the way a student installs it, for the tests that run
notebooks from it (``tests/grading/test_bundle.py`` and the browser suite's JupyterLab)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from course_admin.grading.bundle import build_bundle

SHIELD = '''"""Test harness, not part of the bundle: this environment has the instructor's package
installed in editable mode, whose import finder fills in every module the student wheel leaves
out (``course_admin.grading``, the solutions). A student has no such install: drop its finder."""
import sys

sys.meta_path[:] = [f for f in sys.meta_path if not getattr(f, "__module__", "").startswith("__editable__")]
sys.path_hooks[:] = [h for h in sys.path_hooks if not getattr(h, "__module__", "").startswith("__editable__")]
'''


def build(tmp_path_factory) -> dict:
    """``course bundle`` into a new temporary folder: what ``build_bundle`` returns."""
    return build_bundle(tmp_path_factory.mktemp("out") / "rl-course-bundle")


def install(bundle: dict, tmp_path_factory) -> tuple[Path, str]:
    """The bundle's wheel installed (without dependencies: they are this environment's) into a new
    folder. Returns the folder and the ``PYTHONPATH`` under which ``import course_utils`` finds
    the student package and nothing of the instructor's (the editable install's finder is
    dropped by a ``sitecustomize`` of the harness, in a folder of its own)."""
    site = tmp_path_factory.mktemp("student-site")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), str(bundle["wheel"])],
                   check=True, capture_output=True, timeout=300)
    shield = tmp_path_factory.mktemp("harness")
    (shield / "sitecustomize.py").write_text(SHIELD)
    return site, os.pathsep.join([str(site), str(shield)])


INSTRUCTOR_MODULES = ("course_admin",)
"""The instructor package, which the student wheel leaves out whole."""

_PROBE = ("import importlib.util, json, course_utils; print(json.dumps([course_utils.__file__, "
          "[m for m in {modules!r} if importlib.util.find_spec(m) is not None]]))")


def what_imports(env: dict, cwd: Path) -> tuple[Path, list[str]]:
    """In a Python started with ``env`` in ``cwd``: where ``course_utils`` comes from, and which
    of ``INSTRUCTOR_MODULES`` can be imported (none, for a student's install)."""
    run = subprocess.run([sys.executable, "-c", _PROBE.format(modules=INSTRUCTOR_MODULES)], env=env, cwd=cwd,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    where, visible = json.loads(run.stdout.strip().splitlines()[-1])
    return Path(where), visible
