"""The exercise index (``course_admin.exercises``) against the solution notebooks: every graded
cell is listed with its points, each row's solution cell, check, hidden test and hint tests
exist, and the harvested reference solutions are the notebooks' solution cells."""

import ast
import importlib
import json
import re
from pathlib import Path

import pytest

from course_admin import exercises
from course_admin.exercises import GRADED, TUTORIALS
from course_admin.grading import harvest, judging
from course_utils.paths import ROOT, SOLUTIONS


def _cells(tutorial: str) -> list[dict]:
    return json.loads((SOLUTIONS / f"{TUTORIALS[tutorial]}.ipynb").read_text())["cells"]


def _meta(cell: dict) -> dict:
    return cell.get("metadata", {}).get("nbgrader") or {}


def _source(cell: dict) -> str:
    return "".join(cell["source"])


def _by_id(tutorial: str) -> dict[str, tuple[int, dict]]:
    return {_meta(c)["grade_id"]: (i, c) for i, c in enumerate(_cells(tutorial)) if _meta(c).get("grade_id")}


def _resolve(target: str):
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


def test_every_graded_cell_is_indexed_with_its_points_and_nothing_is_stale():
    in_notebooks = {
        (tutorial, _meta(c)["grade_id"], float(_meta(c)["points"]))
        for tutorial in TUTORIALS
        for c in _cells(tutorial)
        if _meta(c).get("grade")
    }
    indexed = {(row.tutorial, row.grade_id, float(row.points)) for row in GRADED}
    assert indexed == in_notebooks
    assert len({row.grade_id for row in GRADED}) == len(GRADED)
    assert sum(exercises.total_points(t) for t in TUTORIALS) == sum(p for _, _, p in in_notebooks)


@pytest.mark.parametrize("row", GRADED, ids=lambda row: row.grade_id)
def test_each_row_names_its_solution_cell_and_its_hidden_test_calls_its_check(row):
    cells = _by_id(row.tutorial)
    index, solution = cells[row.solution]
    assert _meta(solution).get("solution"), f"{row.solution} is not a solution cell"
    graded_index, graded = cells[row.grade_id]
    if row.manual:
        assert graded is solution and graded["cell_type"] == "markdown"  # a written answer graded by hand
        return
    assert solution["cell_type"] == "code" and graded_index > index
    module, _, function = row.check.partition(":")
    hidden = _source(graded)
    exercise = judging.exercise_for(row.grade_id)
    if exercise is not None:  # judged by the grader from the record that the hidden test shows
        # the hidden cell imports the Exercise from the module that defines it (the grader's child
        # driving it loads that module alone, see grading.drive_apart), which the check's module uses
        found = re.search(r"from (course_utils[\w.]*) import (\w+)\n(?:.*\n)*?\2\.submit\(", hidden + "\n")
        assert found, hidden
        source_module, name = found.groups()
        assert vars(importlib.import_module(source_module))[name] is exercise
        assert vars(importlib.import_module(module))[name] is exercise
        assert "strict=True" not in hidden
    else:
        pytest.fail(f"{row.check}'s module has no Exercise for {row.grade_id} in its EXERCISES")
    check_cells = [_source(c) for c in _cells(row.tutorial)[index + 1 : graded_index] if not _meta(c).get("grade")]
    assert any(re.search(rf"\b{function}\(", s) for s in check_cells), "no check cell before the hidden test"
    assert callable(_resolve(row.check))


@pytest.mark.parametrize("row", [row for row in GRADED if not row.manual], ids=lambda row: row.grade_id)
def test_each_check_has_a_test_where_wrong_answers_get_their_hint(row):
    assert row.hint_tests, f"{row.grade_id}: no test shows that a typical wrong answer gets its hint"
    function = row.check.partition(":")[2]
    for node_id in row.hint_tests:
        path, _, name = node_id.partition("::")
        tree = ast.parse((ROOT / path).read_text())
        tests = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == name]
        assert tests, f"{node_id} does not exist"
        called = {n.id for n in ast.walk(tests[0]) if isinstance(n, ast.Name)}
        helpers = {n.name for n in tree.body if isinstance(n, ast.FunctionDef) and function in ast.unparse(n)}
        assert function in called or called & helpers, f"{node_id} never calls {function}"
    for helper in row.helpers:
        assert _resolve(helper) is not None


def test_exercise_lookup_by_solution_cell():
    rows = exercises.exercise("policy_agent")
    assert [row.grade_id for row in rows] == ["test_agent_distribution", "test_agent_step"]
    assert exercises.exercise("aac_loss")[0].check == "course_utils.lunar.checks.aac_checks:check_aac_loss"


@pytest.mark.parametrize("tutorial", TUTORIALS)
def test_harvested_solutions_are_the_notebooks_solution_cells(tutorial):
    assert harvest.stale_solutions() == []
    module = importlib.import_module(f"course_admin.{tutorial}.solutions")
    for grade_id, code in harvest.solution_cells(SOLUTIONS / f"{TUTORIALS[tutorial]}.ipynb"):
        defined = [n.name for n in ast.parse(code).body if isinstance(n, ast.FunctionDef | ast.ClassDef)]
        assert defined, f"solution cell {grade_id} defines nothing to harvest"
        for name in defined:
            assert getattr(module, name).__module__ == module.__name__, name


def test_harvest_drops_the_solution_markers_and_names_each_cell(tmp_path):
    text = harvest.module_text("colour")
    assert "### BEGIN SOLUTION" not in text and "# Solution cell 'replay_memory'" in text
    assert Path(harvest.solutions_path("colour")).read_text() == text


def test_tutorial_3s_intro_counts_its_exercises_and_their_graded_parts():
    """The intro's "N graded exercises (marked Exercise), graded in M parts": N the Exercise headings
    (numbered 1 to N in order), M the graded cells with a check."""
    cells = _cells("lunar")
    intro = " ".join(_source(cells[0]).split())
    found = re.search(r"There are (\d+) graded exercises \(marked \*\*Exercise\*\*\), graded in (\d+) parts", intro)
    assert found, intro
    markdown = [_source(c) for c in cells if c["cell_type"] == "markdown"]
    headings = [int(n) for text in markdown for n in re.findall(r"^### Exercise (\d+)", text, re.M)]
    assert headings == list(range(1, len(headings) + 1))
    parts = [row for row in GRADED if row.tutorial == "lunar" and not row.manual]
    assert (int(found[1]), int(found[2])) == (len(headings), len(parts)) == (8, 13)
    assert exercises.total_points("lunar") == 26
