"""notebooks/ is generated from solutions/ and must never drift from it."""

import json

import pytest

from course_utils import grading
from course_utils.grading import student_notebooks
from course_utils.paths import ROOT


def notebooks(folder):
    return sorted((ROOT / folder).glob("*.ipynb"))


def test_every_solution_is_released():
    assert [p.name for p in notebooks("solutions")] == [p.name for p in notebooks("notebooks")]
    assert notebooks("solutions"), "no solution notebooks found"


@pytest.mark.parametrize("folder", ["solutions", "notebooks"])
def test_notebooks_are_stored_without_outputs(folder):
    for path in notebooks(folder):
        for cell in json.loads(path.read_text())["cells"]:
            assert not cell.get("outputs") and not cell.get("execution_count"), f"{path.name} has outputs"


def test_student_notebooks_hold_no_solutions_or_hidden_tests():
    for path in notebooks("notebooks"):
        text = path.read_text()
        assert "BEGIN SOLUTION" not in text and "BEGIN HIDDEN TESTS" not in text
        assert "strict=True" not in text
        solution = (ROOT / "solutions" / path.name).read_text()
        n_exercises = solution.count("### BEGIN SOLUTION")
        assert text.count("raise NotImplementedError()") == n_exercises


def test_release_check_detects_drift(tmp_path, monkeypatch):
    assert grading.stale_notebooks() == []
    stale = tmp_path / "notebooks"
    stale.mkdir()
    for path in notebooks("notebooks"):
        nb = json.loads(path.read_text())
        nb["cells"][0]["source"] = "edited by hand"
        (stale / path.name).write_text(json.dumps(nb))
    monkeypatch.setattr(student_notebooks, "NOTEBOOKS", stale)
    problems = grading.stale_notebooks()
    assert problems and all("differs" in p for p in problems)
