"""A tiny nbgrader assignment for the grading tests and the grading benchmark.

``synthetic_assignment(folder)`` writes an instructor notebook with two exercises (``add``, 1
point; ``square``, 2 points) and hidden tests, runnable in about a second;
``student_version(solution, *answered)`` is its released form with some exercises answered.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from course_admin.grading.cells import nbgrader_meta, solution_code

TINY = "00_tiny"
TINY_SOLUTIONS = {
    "add": "def add(a, b):\n    ### BEGIN SOLUTION\n    return a + b\n    ### END SOLUTION",
    "square": "def square(x):\n    ### BEGIN SOLUTION\n    return x * x\n    ### END SOLUTION",
}
TINY_TESTS = {
    "test_add": (1, "assert add(1, 2) == 3\n### BEGIN HIDDEN TESTS\nassert add(-1, 1) == 0\n### END HIDDEN TESTS"),
    "test_square": (2, "assert square(3) == 9\n### BEGIN HIDDEN TESTS\nassert square(-2) == 4\n### END HIDDEN TESTS"),
}


TRAIN_CELL = """# Like the course's notebooks, every submission trains a model before its exercises:
# logistic regression by gradient descent, a fixed amount of work (about 1 s of CPU per 80000 steps here).
import numpy as np

rng = np.random.default_rng(0)
X = rng.normal(size=(256, 8))
y = (X @ np.arange(8) > 0).astype(float)
w = np.zeros(8)
for step in range({steps}):
    p = 1 / (1 + np.exp(-(X @ w)))
    w -= 0.1 * X.T @ (p - y) / len(y)"""


def synthetic_assignment(folder: str | os.PathLike, name: str = TINY, train_steps: int = 0, records: bool = False) -> Path:
    """Write ``folder/<name>.ipynb``: an instructor notebook with two exercises (``add``, 1
    point; ``square``, 2 points) and hidden tests, runnable in about a second. With
    ``train_steps`` it first trains a small model for that many gradient steps (``TRAIN_CELL``,
    a locked cell): a submission that computes, as real ones do, instead of grading overhead only.
    With ``records`` the hidden tests submit records that the grader judges
    (``course_admin.grading.synthetic_exercises``), as the course's do; otherwise they are asserts that
    judge in the student's kernel (nbgrader's usual way)."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    from course_admin.grading.synthetic_exercises import SUBMIT

    def meta(grade_id, grade=False, solution=False, points=None):
        info = {"grade": grade, "solution": solution, "locked": not solution, "grade_id": grade_id}
        info.update(schema_version=3, task=False)
        if points is not None:
            info["points"] = points
        return {"nbgrader": info}

    cells = [
        new_markdown_cell("# A tiny assignment\nTwo small functions.", metadata=meta("intro")),
        new_code_cell("import math", metadata={**meta("setup"), "tags": ["setup"]}),
    ]
    if train_steps:
        cells.append(new_code_cell(TRAIN_CELL.format(steps=int(train_steps)), metadata=meta("train")))
    for (exercise, solution), (test, (points, source)) in zip(TINY_SOLUTIONS.items(), TINY_TESTS.items(), strict=True):
        if records:
            source = source.split("### BEGIN HIDDEN TESTS")[0] + f"### BEGIN HIDDEN TESTS\n{SUBMIT[test]}\n### END HIDDEN TESTS"
        cells.append(new_code_cell(solution, metadata=meta(exercise, solution=True)))
        cells.append(new_code_cell(source, metadata=meta(test, grade=True, points=points)))
    kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook = new_notebook(cells=cells, metadata={"kernelspec": kernelspec})
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.ipynb"
    nbformat.write(notebook, path)
    return path


def student_version(solution: dict, *answered: str) -> dict:
    """The released form of a synthetic notebook as nbgrader's ``generate_assignment`` makes it
    (its ``ClearHiddenTests`` and ``ClearSolutions``), with the exercises in ``answered`` filled
    in with their solutions."""
    import nbformat
    from nbgrader.preprocessors import ClearHiddenTests, ClearSolutions

    notebook = nbformat.reads(json.dumps(solution), as_version=4)
    answers = {nbgrader_meta(cell).get("grade_id"): cell.source for cell in notebook.cells if nbgrader_meta(cell).get("solution")}
    notebook, _ = ClearHiddenTests().preprocess(notebook, {})
    notebook, _ = ClearSolutions().preprocess(notebook, {"language": "python"})
    for cell in notebook.cells:
        if nbgrader_meta(cell).get("grade_id") in answered:
            cell.source = solution_code(answers[nbgrader_meta(cell)["grade_id"]])
    return json.loads(json.dumps(notebook))  # a plain dict, every source one string
