"""``course bench ci``: what CI runs, timed on a clean clone, against a baseline commit in the
same run (issue 17, target 6: the whole CI in at most 10 minutes on 2 cores).

CI runs ``bash .ci/run`` on a clean clone of main with ``CI=true`` and no stdin: it creates the
virtual environment, installs everything, lints, checks the release and runs the whole test
suite. This benchmark does exactly that, in a new temporary folder per run, first for
``baseline`` and then for this checkout's ``HEAD``, and reports for each: wall-clock, the CPU
time of every process the run waited for, and pytest's own summary (tests and their seconds).
Installs reuse pip's download cache, as a CI machine with a warm cache would. It needs a git
checkout of the course (the student package alone has no ``.ci/run``).
"""

from __future__ import annotations

import os
import re
import resource
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from course_utils.paths import ROOT

BASELINE = "bdd59b9"
"""The commit before the work on CI time (issue 17, target 6): the baseline the course is timed against."""

SUMMARY = re.compile(r"=+ (?P<counts>.*?) in (?P<seconds>[\d.]+)s")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_ci_run(repo: Path, revision: str, timeout_s: float = 90 * 60) -> dict:
    """Clone ``repo`` into a new temporary folder, check out ``revision`` and run ``bash .ci/run``
    there as CI does (``CI=true``, no stdin). Returns the commit, ``wall_s``, ``cpu_s`` (user +
    system seconds of every process the run waited for), ``tests_s`` and ``tests`` (pytest's last
    summary line: its seconds and its counts; None if it printed none), the return code, and the
    last lines of the output when the run failed. The folder is removed afterwards."""
    if shutil.which("git") is None or not (Path(repo) / ".git").exists():
        raise RuntimeError(f"course bench ci needs git and a git checkout of the course; {repo} is not one.")
    folder = Path(tempfile.mkdtemp(prefix="course-bench-ci-"))
    try:
        clone = folder / "rl-course"
        subprocess.run(["git", "clone", "--quiet", str(repo), str(clone)], check=True, capture_output=True, timeout=600)
        subprocess.run(["git", "checkout", "--quiet", revision], cwd=clone, check=True, capture_output=True, timeout=60)
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=clone, check=True, capture_output=True,
                                text=True, timeout=60).stdout.strip()
        env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
        env["CI"] = "true"
        cpu, start = _children_cpu(), time.perf_counter()
        run = subprocess.run(["bash", ".ci/run"], cwd=clone, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                             text=True, timeout=timeout_s)
        wall, cpu = time.perf_counter() - start, _children_cpu() - cpu
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    summaries = SUMMARY.findall(run.stdout)
    out = {
        "revision": revision, "commit": commit, "returncode": run.returncode, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
        "tests_s": float(summaries[-1][1]) if summaries else None, "tests": summaries[-1][0] if summaries else None,
    }
    if run.returncode != 0:
        out["tail"] = (run.stdout + run.stderr)[-2000:]
    return out


def bench_ci(baseline: str = BASELINE, repo: Path = ROOT) -> dict:
    """``course bench ci``: ``time_ci_run`` for ``baseline``, then for ``HEAD``, one after the
    other (about half an hour on 2 cores). The target: ``course.wall_s`` <= 600."""
    base = time_ci_run(repo, baseline)
    course = time_ci_run(repo, "HEAD")
    return {"benchmark": "ci", "cores": os.cpu_count(), "target_wall_s": 600, "course": course, "baseline": base,
            "speedup": round(base["wall_s"] / course["wall_s"], 2) if course["wall_s"] else None}
