"""The package's shape, as import contracts (pyproject.toml, ``[tool.importlinter]``), checked by
``make lint``. Here: the contracts hold, and breaking one on purpose fails the check."""

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def lint_imports(package_root: Path) -> subprocess.CompletedProcess:
    """``lint-imports`` with the repository's contracts on the ``course_utils`` found in
    ``package_root``."""
    return subprocess.run([str(LINT_IMPORTS), "--no-cache", "--config", str(ROOT / "pyproject.toml")], cwd=package_root,
                          capture_output=True, text=True, timeout=120, env={"PYTHONPATH": str(package_root), "PATH": ""})


def test_the_contracts_hold():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout[-3000:]
    assert "0 broken" in result.stdout


def test_a_tutorial_importing_grading_breaks_the_build(tmp_path):
    shutil.copytree(ROOT / "course_utils", tmp_path / "course_utils", ignore=shutil.ignore_patterns("__pycache__"))
    training = tmp_path / "course_utils" / "colour" / "training.py"
    peek = "\n\ndef _peek():\n    from course_utils.grading import autograder  # noqa: F401\n"
    training.write_text(training.read_text() + peek)
    result = lint_imports(tmp_path)
    assert result.returncode != 0
    assert "Tutorials never import grading BROKEN" in result.stdout
    assert "course_utils.colour.training -> course_utils.grading.autograder" in result.stdout


def test_a_tutorial_importing_another_breaks_the_build(tmp_path):
    shutil.copytree(ROOT / "course_utils", tmp_path / "course_utils", ignore=shutil.ignore_patterns("__pycache__"))
    dqn = tmp_path / "course_utils" / "replay" / "dqn.py"
    dqn.write_text(dqn.read_text() + "\n\ndef _peek():\n    from course_utils.lunar import env  # noqa: F401\n")
    result = lint_imports(tmp_path)
    assert result.returncode != 0 and "Tutorials never import each other BROKEN" in result.stdout


def test_an_environment_importing_its_trainer_breaks_the_build(tmp_path):
    shutil.copytree(ROOT / "course_utils", tmp_path / "course_utils", ignore=shutil.ignore_patterns("__pycache__"))
    env = tmp_path / "course_utils" / "harlow" / "env.py"
    env.write_text(env.read_text() + "\n\ndef _peek():\n    from course_utils.harlow import train  # noqa: F401\n")
    result = lint_imports(tmp_path)
    assert result.returncode != 0 and "Tutorial 1 in layers" in result.stdout and "BROKEN" in result.stdout


def test_a_lower_grading_layer_importing_a_higher_one_breaks_the_build(tmp_path):
    shutil.copytree(ROOT / "course_utils", tmp_path / "course_utils", ignore=shutil.ignore_patterns("__pycache__"))
    intake = tmp_path / "course_utils" / "grading" / "intake.py"
    intake.write_text(intake.read_text() + "\n\ndef _peek():\n    from course_utils.grading import worker  # noqa: F401\n")
    result = lint_imports(tmp_path)
    assert result.returncode != 0 and "Grading in layers: each module imports only those below it BROKEN" in result.stdout


def test_no_module_is_over_600_lines():
    lengths = {str(p.relative_to(ROOT)): len(p.read_text().splitlines()) for p in (ROOT / "course_utils").rglob("*.py")}
    assert {path: n for path, n in lengths.items() if n > 600} == {}
