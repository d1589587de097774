"""The package's shape, as import contracts (pyproject.toml, ``[tool.importlinter]``), checked by
``make lint``. Here: the contracts hold, and breaking one on purpose fails the check."""

import ast
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def lint_imports(package_root: Path) -> subprocess.CompletedProcess:
    """``lint-imports`` with the repository's contracts on the ``course_utils`` and ``course_admin``
    found in ``package_root``."""
    return subprocess.run([str(LINT_IMPORTS), "--no-cache", "--config", str(ROOT / "pyproject.toml")], cwd=package_root,
                          capture_output=True, text=True, timeout=120, env={"PYTHONPATH": str(package_root), "PATH": ""})


def test_the_contracts_hold():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout[-3000:]
    assert "0 broken" in result.stdout


def lint_with_an_extra_import(tmp_path, module: str, imported: str) -> subprocess.CompletedProcess:
    """``lint_imports`` on a copy of the packages where ``module`` (a path below the repository,
    e.g. ``course_utils/colour/training.py``) gains ``from <package> import <name>`` inside a
    function (hidden imports count too)."""
    for package in ("course_utils", "course_admin"):
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    package, _, name = imported.rpartition(".")
    path = tmp_path / module
    path.write_text(path.read_text() + f"\n\ndef _peek():\n    from {package} import {name}  # noqa: F401\n")
    result = lint_imports(tmp_path)
    assert result.returncode != 0, result.stdout[-3000:]
    return result


def test_the_student_package_importing_the_instructor_package_breaks_the_build(tmp_path):
    result = lint_with_an_extra_import(tmp_path, "course_utils/colour/training.py", "course_admin.grading.autograder")
    assert "The student package never imports the instructor package BROKEN" in result.stdout
    assert "course_utils.colour.training -> course_admin.grading.autograder" in result.stdout


def test_a_solution_imported_by_what_students_run_breaks_the_build(tmp_path):
    result = lint_with_an_extra_import(tmp_path, "course_utils/lunar/checks/losses.py", "course_admin.lunar.solutions")
    assert "The student package never imports the instructor package BROKEN" in result.stdout


def test_grading_importing_a_tutorial_breaks_the_build(tmp_path):
    result = lint_with_an_extra_import(tmp_path, "course_admin/grading/worker.py", "course_utils.colour.training")
    assert "Grading never imports a tutorial" in result.stdout and "BROKEN" in result.stdout


def test_a_tutorial_importing_another_breaks_the_build(tmp_path):
    result = lint_with_an_extra_import(tmp_path, "course_utils/replay/dqn.py", "course_utils.lunar.env")
    assert "Tutorials never import each other BROKEN" in result.stdout


def test_an_environment_importing_its_agent_breaks_the_build(tmp_path):
    result = lint_with_an_extra_import(tmp_path, "course_utils/harlow/env.py", "course_utils.harlow.agent")
    assert "Tutorial 1 in layers" in result.stdout and "BROKEN" in result.stdout


def test_a_lower_grading_layer_importing_a_higher_one_breaks_the_build(tmp_path):
    result = lint_with_an_extra_import(tmp_path, "course_admin/grading/intake.py", "course_admin.grading.worker")
    assert "Grading in layers: each module imports only those below it BROKEN" in result.stdout


def test_no_module_is_over_600_lines():
    files = [*(ROOT / "course_utils").rglob("*.py"), *(ROOT / "course_admin").rglob("*.py")]
    lengths = {str(p.relative_to(ROOT)): len(p.read_text().splitlines()) for p in files}
    assert {path: n for path, n in lengths.items() if n > 600} == {}


STUDENT_NAMES_INSTRUCTOR = {("course_utils/cli.py", "course_admin"), ("course_utils/cli.py", "course_admin.cli")}
"""The strings of the student package that name the instructor package: the ``course`` command adds
the instructor's commands where that package is installed (a student's install has none). No judge
loads its oracle by name: the grader hands the oracles in (``checking.ORACLES``)."""


def _code_strings(tree: ast.Module):
    """The string constants of a module that are not docstrings (a string standing alone as a
    statement: a module's, class's or function's, or an attribute's after it)."""
    alone = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}
    return (node for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and type(node.value) is str and id(node) not in alone)


def test_the_student_package_names_no_instructor_module():
    """``import_module("course_admin....")`` escapes the import contracts, which see static imports
    only: the student package's code (its docstrings aside) names no ``course_admin`` module."""
    found = {(str(path.relative_to(ROOT)), node.value) for path in sorted((ROOT / "course_utils").rglob("*.py"))
             for node in _code_strings(ast.parse(path.read_text())) if "course_admin" in node.value}
    assert found == STUDENT_NAMES_INSTRUCTOR


def test_the_scan_finds_an_oracle_loaded_by_name():
    tree = ast.parse('"""Doc naming course_admin."""\nimport importlib\nORACLE = "course_admin.lunar.bandit_oracle"\n'
                     '"""Attribute doc naming course_admin."""\nimportlib.import_module(f"course_admin.{ORACLE}")\n')
    assert [node.value for node in _code_strings(tree) if "course_admin" in node.value] == [
        "course_admin.lunar.bandit_oracle", "course_admin."]
