"""Build submissions for the grading tests from the released and solution notebooks."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ASSIGNMENT = "02_colour_replay"


def load(kind: str, assignment: str = ASSIGNMENT) -> dict:
    """``kind`` "solution" (from solutions/) or "student" (the released notebooks/ copy)."""
    folder = "solutions" if kind == "solution" else "notebooks"
    return json.loads((ROOT / folder / f"{assignment}.ipynb").read_text())


def cell_index(notebook: dict, grade_id: str) -> int:
    for i, cell in enumerate(notebook["cells"]):
        if cell["metadata"].get("nbgrader", {}).get("grade_id") == grade_id:
            return i
    raise KeyError(grade_id)


def with_answer(student: dict, solution: dict, *grade_ids: str) -> dict:
    """The student notebook with the given exercises' solution cells copied in."""
    student = json.loads(json.dumps(student))
    for grade_id in grade_ids:
        student["cells"][cell_index(student, grade_id)]["source"] = solution["cells"][cell_index(solution, grade_id)]["source"]
    return student


def write(folder: Path, name: str, notebook: dict) -> Path:
    path = folder / f"{name}.ipynb"
    path.write_text(json.dumps(notebook))
    return path


def grade_variants(tmp_path_factory, assignment: str, extra: dict | None = None, **answered: tuple[str, ...]) -> dict[str, dict]:
    """Autograde, in one ``course autograde`` run, the solution (student "full"), the untouched
    released notebook ("zero"), one released notebook per keyword argument with those
    exercises' solution cells copied in, and the notebooks of ``extra`` ({student: notebook}).
    Returns the grades.csv rows by student."""
    import csv

    from course_utils import grading

    folder = tmp_path_factory.mktemp("submissions")
    solution, student = load("solution", assignment), load("student", assignment)
    write(folder, "full", solution)
    write(folder, "zero", student)
    for name, grade_ids in answered.items():
        write(folder, name, with_answer(student, solution, *grade_ids))
    for name, notebook in (extra or {}).items():
        write(folder, name, notebook)
    out, course = tmp_path_factory.mktemp("grades"), tmp_path_factory.mktemp("course")
    report = grading.autograde(folder, out=out, course_dir=course)
    return {row["student"]: row for row in csv.DictReader(report.csv_path.open())}
