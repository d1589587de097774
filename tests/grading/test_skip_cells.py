"""Grading runs only what grades depend on (``grading.skip_cells``): which given cells are
marked, which a submission still runs, and, graded both ways, the same grades and feedback."""

from __future__ import annotations

import json

import nbformat
import pytest
from submissions import ASSIGNMENT, cell_index, grading_path, load, ratio_wrapper, through_last_graded, with_answer, write

from course_admin.grading.skip_cells import PIN, kernel_tests, marks, skipped_in
from course_utils.paths import SOLUTIONS


def _code(source: str, cell_id: str, **nbgrader) -> dict:
    meta = {"nbgrader": {"grade_id": cell_id, **nbgrader}} if nbgrader else {}
    return {"cell_type": "code", "id": cell_id, "source": source, "metadata": meta, "outputs": [], "execution_count": None}


def _notebook(*cells) -> dict:
    return nbformat.from_dict({"cells": list(cells), "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


SETUP = _code("%matplotlib inline\nimport numpy as np", "setup")
SIZES = _code("STEPS = 10\nunused = 3", "sizes")
ANSWER = _code("def f(x):\n    return np.ones(STEPS) * x", "answer", solution=True, grade=False)
DEMO = _code("curve = [f(x) for x in range(STEPS)]\nprint(curve)", "demo")
PLOT = _code("import matplotlib.pyplot as plt\nplt.plot(curve)", "plot")
TEST = _code("assert f(1).sum() == STEPS", "test", grade=True, solution=False, points=1)


def test_only_given_cells_that_no_kept_cell_needs_are_marked():
    released = _notebook(SETUP, SIZES, ANSWER, DEMO, PLOT, TEST)
    # the setup and settings cells bind what the answer and the test read; the demo and its plot feed nothing
    assert set(marks(released)) == {"demo", "plot"}


def test_a_pinned_or_unreadable_given_cell_is_kept():
    pinned = _code(DEMO["source"], "demo")
    pinned["metadata"]["course"] = {"grading": PIN}
    broken = _code("def (:", "broken")
    assert set(marks(_notebook(SETUP, SIZES, ANSWER, pinned, PLOT, broken))) == {"plot"}  # nothing reads the plot


def test_names_an_answer_holds_as_its_own_locals_do_not_keep_a_given_cell():
    """A function's parameters, locals and comprehension variables are not the globals of the same
    names (the compiler resolves them in the function): a given demo binding ``learner``, ``batch``
    and ``score`` feeds no answer that only uses them as its own (tutorial 1's newbie, 2.8 s of CPU
    per grading when it ran)."""
    demo = _code("learner, batch, score = 1, [2], 3", "demo")
    answer = _code("def f(learner, batch):\n    score = learner + len(batch)\n    return [score for score in range(score)]\n"
                   "g = lambda batch: batch", "answer", solution=True, grade=False)
    assert "demo" in marks(_notebook(SETUP, demo, answer, TEST))


@pytest.mark.parametrize("reader", [
    "def f():\n    return n",  # a global read when f is called
    "class A:\n    size = n",  # a class body reads the globals
    "class A:\n    def size(self):\n        return n",  # a method does, not the class body's names
    "def f():\n    return [n for _ in range(2)]",
    "g = lambda: n",
    "n += 1",  # reads n first
    "del n",
    "value = globals()['n']",  # any name, computed at run time
    "value = eval('n')",
])
def test_every_way_a_cell_reads_a_global_keeps_the_cell_that_binds_it(reader):
    given = _code("n = 3", "given")
    answer = _code(reader, "answer", solution=True, grade=False)
    assert "given" not in marks(_notebook(SETUP, given, answer, TEST)), reader


def test_a_submission_runs_its_own_cells_and_what_they_read():
    released = _notebook(SETUP, SIZES, ANSWER, DEMO, PLOT, TEST)
    marked = marks(released)
    assert skipped_in(released, marked) == {3, 4}
    edited = _notebook(SETUP, SIZES, ANSWER, _code(DEMO["source"] + "\n# mine", "demo"), PLOT, TEST)
    assert skipped_in(edited, marked) == {4}  # the edited demo is the student's code: it runs
    added = _notebook(SETUP, SIZES, ANSWER, DEMO, PLOT, _code("print(len(curve))", "student-added"), TEST)
    assert skipped_in(added, marked) == {4}  # the student's cell reads the demo's curve: the demo runs


def test_nothing_is_skipped_while_a_test_runs_in_the_kernel():
    released = _notebook(SETUP, SIZES, ANSWER, DEMO, PLOT, TEST)
    assert kernel_tests(released, {}) == [5]
    assert kernel_tests(released, {"drive_apart": {5: ("test", "...")}}) == []


def test_the_tutorials_skip_their_demonstrations_and_keep_their_setup():
    for name in ("01_harlow_meta_rl", "02_colour_replay", "03_policy_gradients", "04_prioritized_replay"):
        released = json.loads((SOLUTIONS / f"{name}.ipynb").read_text())
        marked = marks(released)
        given = [c for c in released["cells"] if c["cell_type"] == "code" and not c["metadata"].get("nbgrader")]
        setup = next(c for c in given if "setup_notebook(" in "".join(c["source"]))
        assert setup["id"] not in marked, name
        assert len(marked) >= len(given) // 2, (name, len(marked), len(given))


@pytest.mark.grading
def test_graded_both_ways_the_grades_and_feedback_are_the_same(tmp_path_factory, dask_scheduler):
    """The proof that the marking is safe, on tutorial 2: the solution, the untouched notebook, a
    partial answer, a wrapper of course code and a student who added a cell reading a demo's name,
    graded with the marked cells skipped and with every cell run. Each hands in the tutorial up
    to its last graded cell (``through_last_graded``): every demonstration between the exercises
    is there, and what follows the last graded cell (the replay experiments, three quarters of
    the tutorial's CPU when every cell runs) runs after every grade and record is made."""
    import csv

    from course_admin import grading
    from course_admin.grading.sandbox import Limits

    solution, student = through_last_graded(load("solution")), through_last_graded(load("student"))
    folder = tmp_path_factory.mktemp("both-ways")
    write(folder, "full", solution)
    write(folder, "zero", student)
    write(folder, "partial", with_answer(student, solution, "replay_actor_loss"))
    wrapped = with_answer(student, solution, "replay_memory")  # the actor loss wraps the course's importance ratio
    wrapped["cells"][cell_index(wrapped, "replay_actor_loss")]["source"] = ratio_wrapper(through_setup=False)
    write(folder, "wrapped", grading_path(wrapped))
    reader = json.loads(json.dumps(solution))
    at = cell_index(reader, "replay_memory")
    reader["cells"].insert(at + 1, nbformat.v4.new_code_cell("print(GRADIENT_STEPS)").copy())
    write(folder, "reader", reader)
    rows, records, executed = {}, {}, {}
    for skip in (True, False):
        out, course = tmp_path_factory.mktemp(f"grades-{skip}"), tmp_path_factory.mktemp(f"course-{skip}")
        report = grading.autograde(folder, out=out, course_dir=course, scheduler=dask_scheduler,
                                   limits=Limits(skip_given=skip))
        rows[skip] = {r["student"]: {k: v for k, v in r.items() if k.startswith("test_") or k == "score"}
                      for r in csv.DictReader(report.csv_path.open())}
        autograded = {s: json.loads((course / "autograded" / s / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text())
                      for s in rows[skip]}
        records[skip] = {s: _graded_outputs(nb) for s, nb in autograded.items()}
        executed[skip] = {s: sum(c.get("execution_count") is not None for c in nb["cells"]) for s, nb in autograded.items()}
    assert rows[True] == rows[False]
    assert float(rows[True]["full"]["score"]) == 8 and float(rows[True]["wrapped"]["score"]) == 3
    assert records[True] == records[False]  # every hidden test's record and verdict, both ways
    assert all(records[True].values())
    for student_name, count in executed[True].items():  # the marked given cells did not run
        assert count < executed[False][student_name], (student_name, count, executed[False][student_name])


def _graded_outputs(notebook: dict) -> dict[str, list]:
    """The outputs of a notebook's autograded test cells by grade id (the records, as judged)."""
    return {
        cell["metadata"]["nbgrader"]["grade_id"]: [
            {k: v for k, v in output.items() if k != "execution_count"} for output in cell.get("outputs", [])
        ]
        for cell in notebook["cells"]
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade") and not cell["metadata"]["nbgrader"].get("solution")
        and cell["cell_type"] == "code"
    }
