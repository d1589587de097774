"""Build submissions for the grading tests from the released and solution notebooks."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ASSIGNMENT = "02_colour_replay"
RATIO_ADAPTER = ROOT / "tests" / "grading" / "adapters" / "test_replay_actor_loss__agent_importance_ratios.cell"


def ratio_wrapper(through_setup: bool = True) -> str:
    """An answer to tutorial 2's replay actor loss that takes its ratio pi / mu from the course's
    ``colour.agent.importance_ratios`` (a module the exercise is not given; the adapter in
    ``tests/grading/adapters``) and is right when that module is there: through the ``colour`` the
    setup cell binds, or imported."""
    source = RATIO_ADAPTER.read_text()
    if through_setup:
        return source
    source = source.replace("colour.agent.", "_agent.").replace("colour.Experience", "_agent.Experience")
    return "from course_utils.colour import agent as _agent\n" + source


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


def _on_the_grading_path(cell: dict) -> bool:
    nbgrader = cell["metadata"].get("nbgrader") or {}
    return (cell["cell_type"] == "markdown" or bool({"setup", "settings"} & set(cell["metadata"].get("tags", [])))
            or bool(nbgrader.get("solution") or nbgrader.get("grade"))
            or "".join(cell["source"]).startswith("# Check your answer"))


def _last_graded(notebook: dict) -> int:
    return max(i for i, cell in enumerate(notebook["cells"]) if (cell["metadata"].get("nbgrader") or {}).get("grade"))


def through_last_graded(notebook: dict) -> dict:
    """``notebook`` up to its last cell nbgrader grades, every cell before it kept (demos
    included): the cells after it run after every graded cell, so they can change no grade and
    no record (tutorial 2's are its replay experiments, three quarters of its CPU in fast mode)."""
    return {**notebook, "cells": notebook["cells"][: _last_graded(notebook) + 1]}


def grading_path(notebook: dict) -> dict:
    """``notebook`` on its grading path, for tests about grading rather than about a tutorial:
    the markdown, the setup and settings cells, and every exercise's answer, check and
    hidden-test cells, up to the last cell nbgrader grades. The code cells left out (games, demos,
    experiments) hold no verdict; an answer cell reaches them only through hooks it could fire as
    well in the cells that are kept."""
    return {**notebook, "cells": [cell for cell in through_last_graded(notebook)["cells"] if _on_the_grading_path(cell)]}


def source_folder(folder: Path, assignment: str, notebook: dict) -> Path:
    """``folder`` holding ``notebook`` as the instructor notebook of ``assignment``: a ``source``
    for ``grading.autograde``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{assignment}.ipynb").write_text(json.dumps(notebook))
    return folder


def grading_path_source(folder: Path, assignment: str) -> Path:
    """A ``source`` folder for ``grading.autograde``: the instructor notebook of ``assignment``
    on its grading path (``grading_path``)."""
    return source_folder(folder, assignment, grading_path(load("solution", assignment)))


def write(folder: Path, name: str, notebook: dict) -> Path:
    path = folder / f"{name}.ipynb"
    path.write_text(json.dumps(notebook))
    return path


def grade_variants(tmp_path_factory, scheduler: str | None, assignment: str, extra: dict | None = None,
                   on_grading_path: tuple[str, ...] = (), **answered: tuple[str, ...]) -> dict[str, dict]:
    """Autograde, in one ``course autograde`` run, the solution (student "full"), the untouched
    released notebook ("zero"), one released notebook per keyword argument with those
    exercises' solution cells copied in, and the notebooks of ``extra`` ({student: notebook}).
    The students named in ``on_grading_path`` hand in only their notebook's grading path
    (``grading_path``: as a student who deleted the demos would); "full" and "zero" run whole.
    ``scheduler``: the Dask cluster to grade on (None: autograde's own). Returns the grades.csv
    rows by student."""
    graded = grade_variants_in(tmp_path_factory.mktemp("variants"), scheduler, assignment, extra, on_grading_path, **answered)
    return rows_by_student(graded["csv"])


def grade_variants_in(where: Path, scheduler: str | None, assignment: str, extra: dict | None = None,
                      on_grading_path: tuple[str, ...] = (), **answered: tuple[str, ...]) -> dict[str, Path]:
    """``grade_variants``'s run in the folder ``where`` (for ``once_per_run``): {"csv": grades.csv,
    "course": the nbgrader course folder, gradebook included}."""
    from course_admin import grading

    folder, out, course = where / "submissions", where / "grades", where / "course"
    folder.mkdir()
    solution, student = load("solution", assignment), load("student", assignment)
    write(folder, "full", solution)
    write(folder, "zero", student)
    variants = {name: with_answer(student, solution, *grade_ids) for name, grade_ids in answered.items()} | (extra or {})
    assert set(on_grading_path) <= set(variants), on_grading_path
    for name, notebook in variants.items():
        write(folder, name, grading_path(notebook) if name in on_grading_path else notebook)
    report = grading.autograde(folder, out=out, course_dir=course, scheduler=scheduler)
    return {"csv": report.csv_path, "course": course}


def rows_by_student(csv_path: Path) -> dict[str, dict]:
    import csv

    with csv_path.open() as table:
        return {row["student"]: row for row in csv.DictReader(table)}
