"""Tutorial 1 graded once per test run (``once_per_run``), for the two test files that need it:
``tests/grading/test_tutorial_harlow.py`` (its marks) and the browser suite's
``test_manual_grading_browser.py`` (formgrader and the export, on a copy of its course folder).
Graded apart, the browser test paid a second ``course autograde`` run of the tutorial (its
assignment generated again, two more submissions of 7 to 15 CPU-s each) for what this run
already proves."""

from __future__ import annotations

import forgeries
from once_per_run import once_per_run
from submissions import grade_variants_in

ASSIGNMENT = "01_harlow_meta_rl"


def graded(tmp_path_factory, scheduler: str | None) -> dict:
    """{"csv": grades.csv, "course": the course folder} of one ``course autograde`` run of
    tutorial 1: "full" and "zero" whole, each coding exercise alone and the monkeypatch attack on
    their grading path. The live evolutions run the student's answers once their checks pass (the
    stored runs otherwise); no grade depends on them, so grading skips them (``skip_cells``).
    Read only: a test that changes the gradebook works on a copy."""
    return once_per_run(tmp_path_factory, "harlow-graded", lambda folder: grade_variants_in(
        folder, scheduler, ASSIGNMENT,
        fitness_only=("evaluate_individual",), evolution_only=("genetic_algorithm",),
        extra={"monkeypatch": forgeries.monkeypatch_attack("harlow")},
        on_grading_path=("fitness_only", "evolution_only", "monkeypatch"),
    ))
