"""The student bundle: what an instructor hands out (``course bundle OUT``).

``build_bundle(out)`` writes a folder, and a zip of it, holding:

- ``notebooks/``: the released student notebooks (no solutions, no hidden tests);
- ``wheels/``: the student package, the course's wheel without the instructor package: every
  module of ``course_utils`` with its assets, nothing of ``course_admin`` (the harvested
  solutions, the grader, the trainers and benchmarks). ``course_utils`` never imports
  ``course_admin`` (``make lint`` holds that contract), so what is left runs on its own;
- ``README.md``: getting started, for students (``STUDENT_README``);
- ``Makefile``: ``make lab`` and ``make check`` for those who have make (the same two commands
  run without it: ``course lab`` and ``course check``).

The build refuses an existing ``out`` folder, and a tree whose released notebooks, harvested
solutions or check data are stale (run ``course release`` first).
"""

from __future__ import annotations

import base64
import hashlib
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from course_utils.paths import NOTEBOOKS, ROOT

STUDENT_PACKAGE = "course_utils"
INSTRUCTOR_PACKAGE = "course_admin"
"""The top-level folder of the course's wheel that the student wheel leaves out."""


class BundleError(RuntimeError):
    """The bundle cannot be built; the message says what to do."""


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def student_wheel(full_wheel: Path, out_dir: Path) -> tuple[Path, list[str]]:
    """A copy of ``full_wheel`` without the instructor package (RECORD rewritten), and the files
    it left out."""
    dropped = []
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / full_wheel.name
    with zipfile.ZipFile(full_wheel) as source, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as wheel:
        record_name = next(n for n in source.namelist() if n.endswith(".dist-info/RECORD"))
        lines = []
        for info in source.infolist():
            if info.filename.startswith(f"{INSTRUCTOR_PACKAGE}/"):
                dropped.append(info.filename)
                continue
            if info.filename == record_name:
                continue
            data = source.read(info)
            wheel.writestr(info, data)
            lines.append(_record_line(info.filename, data))
        wheel.writestr(record_name, "\n".join([*lines, f"{record_name},,"]) + "\n")
    return target, dropped


def build_wheel(out_dir: Path) -> Path:
    """The package's full wheel, built from a fresh copy of its sources (a ``build/`` folder
    left in the repository by an earlier build would otherwise put stale modules in it)."""
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "source"
        source.mkdir()
        for name in ("pyproject.toml", "README.md"):
            shutil.copy2(ROOT / name, source / name)
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
        for package in (STUDENT_PACKAGE, INSTRUCTOR_PACKAGE):
            shutil.copytree(ROOT / package, source / package, ignore=ignore)
        shutil.copytree(ROOT / "assets", source / "assets", ignore=ignore)
        command = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w", str(out_dir)]
        result = subprocess.run([*command, str(source)], capture_output=True, text=True)
    if result.returncode != 0:
        raise BundleError(f"building the package's wheel failed:\n{result.stderr[-3000:]}")
    return next(Path(out_dir).glob("rl_course-*.whl"))


def build_bundle(out: Path, stale: list[str] | None = None) -> dict:
    """Write the student bundle to ``out`` (a new folder) and ``out.zip``; returns what it wrote.

    ``stale`` lists what is out of date in this tree (``course release --check``'s findings): a
    non-empty list stops the build, since the bundle would hand out old notebooks or check data.
    """
    out = Path(out)
    if out.exists():
        raise BundleError(f"{out} already exists: choose a new folder, or remove it first (nothing was written).")
    if stale:
        raise BundleError("this tree is stale, run `course release` and commit, then build again:\n  " + "\n  ".join(stale))
    with tempfile.TemporaryDirectory() as tmp:
        full = build_wheel(Path(tmp))
        staging = Path(tmp) / out.name
        wheel, dropped = student_wheel(full, staging / "wheels")
        shutil.copytree(NOTEBOOKS, staging / "notebooks", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
        (staging / "README.md").write_text(student_readme(wheel.name))
        (staging / "Makefile").write_text(STUDENT_MAKEFILE.replace("{wheel}", wheel.name))
        shutil.copytree(staging, out)
    archive = shutil.make_archive(str(out), "zip", root_dir=out.parent, base_dir=out.name)
    wheel = out / "wheels" / wheel.name
    return {"folder": out, "zip": Path(archive), "wheel": wheel, "dropped": sorted(dropped)}


STUDENT_MAKEFILE = """\
# The course's two commands. Without make, run what each one runs, in a terminal in this folder.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: lab check install

$(VENV)/.installed:
\t$(PYTHON) -m venv $(VENV)
\t$(PY) -m pip install --quiet --upgrade pip
\t$(PY) -m pip install --quiet wheels/{wheel}
\ttouch $(VENV)/.installed

install: $(VENV)/.installed

lab: install
\t$(VENV)/bin/course lab

check: install
\t$(VENV)/bin/course check
"""


def student_readme(wheel: str) -> str:
    """The bundle's README for students, its table of tutorials from the course's timetable."""
    from course_admin.schedule import student_table

    return STUDENT_README.replace("{wheel}", wheel).replace("{table}", student_table())


STUDENT_README = """\
# Reinforcement learning, memory and replay: getting started

Four interactive tutorials in Jupyter notebooks. You play two small games, write the key pieces of
reinforcement-learning agents yourself, and get feedback on each exercise as soon as you run its
check cell.

{table}

Take them in this order: tutorial 2 reuses the actor-critic of tutorial 1, and tutorial 4
assumes the replay ideas of tutorial 2.

## What you need to know first
- Python and NumPy: functions, classes, arrays, indexing.
- PyTorch basics: tensors, `nn.Module`, a loss, `backward()` and an optimizer step.
- Reinforcement learning basics: states, actions, rewards, returns and the discount factor.
  Tutorial 4 also assumes Q-learning (the TD target).

## Install (once)
You need Python 3.11 or newer. Everything installs into a folder of its own (a virtual
environment), and nothing needs the internet afterwards.

**Linux and macOS, with make:** open a terminal in this folder and run `make lab`. It creates
`.venv`, installs the course and starts JupyterLab. Later, `make lab` starts it again.

**Linux and macOS, without make:**
```bash
python3 -m venv .venv
.venv/bin/python -m pip install wheels/{wheel}
.venv/bin/course lab
```

**Windows** (PowerShell or Command Prompt, in this folder):
```bat
py -m venv .venv
.venv\\Scripts\\python -m pip install wheels\\{wheel}
.venv\\Scripts\\course lab
```

**A laptop without an NVIDIA GPU:** install PyTorch's CPU-only build first. It is much smaller,
and it is all the course needs:
`python -m pip install torch --index-url https://download.pytorch.org/whl/cpu`.
Run this with the `.venv` python, after creating `.venv` and before installing the course.

**Check the install:** `course check` (or `make check`) loads every pretrained model and
asset the notebooks use and says what is wrong, if anything.

## Where to run the notebooks
The games are widgets with Left and Right buttons. Use **JupyterLab** (what `course lab` starts) or
**Jupyter Notebook 7**: there the game cell waits for your clicks, so *Run all* stops at the game
until you have played. Some front-ends (VS Code and Google Colab, depending on their set-up)
cannot pass clicks to a cell while it runs. The game finds this out within about ten seconds
and says so in one sentence; then play it, and run the next cell when you have finished (that
cell reminds you if the game is not over yet). The rest of the course works everywhere.

## Exercises and grading
Each exercise is a cell with `raise NotImplementedError()` to replace with your code. The cell
after it checks your answer and says what is wrong, with a hint. Run the check as often as
you like. A few written questions have an answer cell. Graded cells are marked in each
notebook. When an exercise does not pass its check yet, later sections still run: they say so
in one line and show the course's own results instead of yours.

To submit, save each notebook (File > Save) and hand in the `.ipynb` files the way your
instructor asks: one notebook per file, or a zip of them. Do not rename the notebooks or delete
cells. Your instructor grades them with hidden tests and by reading your written answers.
"""
