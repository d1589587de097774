"""The ``course`` command."""

import pytest

from course_utils import cli


def test_instructor_commands_without_the_grading_tools_say_what_to_install(monkeypatch, capsys):
    def missing(args):
        raise ModuleNotFoundError("No module named 'nbgrader'", name="nbgrader")

    monkeypatch.setattr(cli, "_release", missing)
    assert cli.main(["release", "--check"]) == 2
    err = capsys.readouterr().err
    assert "course release" in err and "pip install 'rl-course[grading]'" in err and "nbgrader" in err


def test_other_missing_modules_are_not_hidden(monkeypatch):
    def missing(args):
        raise ModuleNotFoundError("No module named 'torch'", name="torch")

    monkeypatch.setattr(cli, "_release", missing)
    with pytest.raises(ModuleNotFoundError):
        cli.main(["release"])
