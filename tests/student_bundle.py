"""The student bundle, built and installed the way a student installs it, for the tests that run
notebooks from it (``tests/grading/test_bundle.py`` and the browser suite's JupyterLab)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from once_per_run import once_per_run

from course_admin.grading.bundle import build_bundle

SHIELD = '''"""Test harness, not part of the bundle: this environment has the instructor's package
installed in editable mode, whose import finder fills in every module the student wheel leaves
out (``course_admin``: the grader, the solutions). A student has no such install: drop its finder."""
import sys

sys.meta_path[:] = [f for f in sys.meta_path if not getattr(f, "__module__", "").startswith("__editable__")]
sys.path_hooks[:] = [h for h in sys.path_hooks if not getattr(h, "__module__", "").startswith("__editable__")]
'''


def installed(tmp_path_factory) -> dict:
    """The student bundle built (``course bundle``) and its wheel installed the way a student
    installs it, once per test run for every test that runs notebooks from it (``once_per_run``:
    the bundle tests and the browser suite's JupyterLab may run in different workers). Returns
    what ``build_bundle`` returns, with ``site`` and ``pythonpath`` (``install``'s)."""

    def build_and_install(folder: Path) -> dict:
        bundle = build_bundle(folder / "out" / "rl-course-bundle")
        site, path = install(bundle, folder)
        return {**bundle, "site": site, "pythonpath": path}

    return once_per_run(tmp_path_factory, "student-bundle", build_and_install)


def install(bundle: dict, folder: Path) -> tuple[Path, str]:
    """The bundle's wheel installed (without dependencies: they are this environment's) into
    ``folder/student-site``. Returns that folder and the ``PYTHONPATH`` under which ``import
    course_utils`` finds the student package and nothing of the instructor's (the editable
    install's finder is dropped by a ``sitecustomize`` of the harness, in ``folder/harness``)."""
    site, shield = folder / "student-site", folder / "harness"
    shield.mkdir()
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), str(bundle["wheel"])],
                   check=True, capture_output=True, timeout=300)
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
