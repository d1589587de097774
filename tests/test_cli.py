"""The ``course`` command: the student package's commands, and the instructor's where installed."""

import pytest

from course_admin import cli as admin_cli
from course_utils import cli


def test_instructor_commands_without_the_grading_tools_say_what_to_install(monkeypatch, capsys):
    def missing(args):
        raise ModuleNotFoundError("No module named 'nbgrader'", name="nbgrader")

    monkeypatch.setattr(admin_cli, "_release", missing)
    assert cli.main(["release", "--check"]) == 2
    err = capsys.readouterr().err
    assert "course release" in err and "pip install 'rl-course[grading]'" in err and "nbgrader" in err


def test_other_missing_modules_are_not_hidden(monkeypatch):
    def missing(args):
        raise ModuleNotFoundError("No module named 'torch'", name="torch")

    monkeypatch.setattr(admin_cli, "_release", missing)
    with pytest.raises(ModuleNotFoundError):
        cli.main(["release"])


def test_a_student_install_has_the_students_commands_only(monkeypatch, capsys):
    """Without the instructor package (a student's wheel), ``course`` offers lab and check, and an
    instructor command is refused by name instead of failing on an import."""
    monkeypatch.setattr(cli, "_instructor_commands", lambda: None)
    with pytest.raises(SystemExit) as refused:
        cli.main(["release"])
    assert refused.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'release'" in err and "'lab'" in err and "'check'" in err


def test_the_instructor_package_adds_its_commands():
    import argparse

    parser = argparse.ArgumentParser()
    admin_cli.add_commands(parser.add_subparsers(dest="command"))
    assert {"train", "bench", "release", "claims", "bundle", "autograde"} <= set(parser._subparsers._group_actions[0].choices)
