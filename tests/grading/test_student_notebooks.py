"""notebooks/ is generated from solutions/ and must never drift from it."""

import json

import pytest

from course_admin import grading
from course_admin.cli import RELEASE
from course_admin.grading import student_notebooks
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


def test_the_released_notebooks_are_current():
    """``course release --check``'s notebooks part, on the whole tree: ``make test`` leaves that
    check to the suite, where each part of it is asserted once (see the test below)."""
    assert grading.stale_notebooks() == []


def test_every_part_of_the_release_check_is_asserted_by_the_suite():
    """Each ``stale`` function of ``course release`` (``course_admin.cli.RELEASE``) and the claims'
    contradictions are asserted empty by some test, so the suite proves what ``course release
    --check`` would (a part added to RELEASE needs its test)."""
    tests = "".join(path.read_text() for path in (ROOT / "tests").rglob("test_*.py"))
    for _, _, stale in RELEASE:
        assert f"{stale.partition(':')[2]}() == []" in tests, stale
    assert "claims.contradicted() == []" in tests


def test_release_check_detects_drift(tmp_path, monkeypatch):
    """One tutorial is enough to show it (the whole tree is checked above): an edited student
    notebook differs, a missing one is missing, and a student notebook without a solution is
    named."""
    solutions, released = tmp_path / "solutions", tmp_path / "notebooks"
    solutions.mkdir()
    released.mkdir()
    name = notebooks("solutions")[0].name
    (solutions / name).write_bytes((ROOT / "solutions" / name).read_bytes())
    monkeypatch.setattr(student_notebooks, "SOLUTIONS", solutions)
    monkeypatch.setattr(student_notebooks, "NOTEBOOKS", released)
    assert grading.stale_notebooks() == [f"notebooks/{name} is missing"]
    (released / name).write_bytes((ROOT / "notebooks" / name).read_bytes())
    assert grading.stale_notebooks() == []
    nb = json.loads((released / name).read_text())
    nb["cells"][0]["source"] = "edited by hand"
    (released / name).write_text(json.dumps(nb))
    (released / "99_orphan.ipynb").write_text("{}")
    assert grading.stale_notebooks() == [f"notebooks/{name} differs from solutions/{name}",
                                         "notebooks/99_orphan.ipynb has no solution notebook"]


def test_a_new_course_folder_is_generated_once_per_source_content(tmp_path, monkeypatch):
    """``generate_here`` copies what it generated for the same sources into a folder with no
    gradebook; a changed source, or a folder that has a gradebook already, runs nbgrader again."""
    from nbgrader.api import Gradebook

    from course_admin.grading.synthetic import TINY, synthetic_assignment

    source = tmp_path / "solutions"
    synthetic_assignment(source)
    calls, real = [], student_notebooks._run_generate
    monkeypatch.setattr(student_notebooks, "_run_generate", lambda *a: (calls.append(a[0]), real(*a))[1])
    first = student_notebooks.generate_here(tmp_path / "a", [TINY], source=source)
    second = student_notebooks.generate_here(tmp_path / "b", [TINY], source=source)
    assert len(calls) == 1 and first[TINY].read_bytes() == second[TINY].read_bytes()
    assert (tmp_path / "b" / "source" / TINY / f"{TINY}.ipynb").read_bytes() == (source / f"{TINY}.ipynb").read_bytes()
    with Gradebook(f"sqlite:///{tmp_path / 'b' / 'gradebook.db'}") as gradebook:
        assert [n.name for n in gradebook.find_assignment(TINY).notebooks] == [TINY]
    notebook = json.loads((source / f"{TINY}.ipynb").read_text())
    notebook["cells"].append({"cell_type": "markdown", "id": "new-paragraph", "metadata": {}, "source": "A new paragraph."})
    (source / f"{TINY}.ipynb").write_text(json.dumps(notebook))
    third = student_notebooks.generate_here(tmp_path / "c", [TINY], source=source)
    assert len(calls) == 2 and "A new paragraph." in third[TINY].read_text()
    student_notebooks.generate_here(tmp_path / "b", [TINY], source=source)  # the instructor's gradebook is updated
    assert len(calls) == 3 and "A new paragraph." in second[TINY].read_text()
