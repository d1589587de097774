"""The autograded notebook and its feedback page held under the size cap (notebook_size, worker):
a notebook carrying 20 MB of metadata, 20 MB of attachments in one cell or 10 000 empty cells
ends up under the cap with the reason reported; an honest notebook is kept byte for byte."""

from __future__ import annotations

import base64
import json
import warnings

import nbformat
import pytest
from nbformat.v4.nbjson import writes

from course_admin.grading.markdown_cleaning import BLANK_PNG
from course_admin.grading.notebook_size import MAX_CELLS, cap_notebook
from course_admin.grading.sandbox import Limits
from course_admin.grading.synthetic import TINY, student_version, synthetic_assignment
from course_utils.paths import SOLUTIONS

CAP = int(Limits().notebook_mb * 2**20)
MB20 = 20 * 2**20
EMPTY_CELLS = 10_000
"""The hostile notebook's empty cells: five times ``MAX_CELLS``, which takes ``cap_notebook``'s
path for too many cells as any larger count would; writing and capping them costs time in
proportion to their number."""


@pytest.fixture(scope="module")
def solutions(tmp_path_factory):
    """A folder of instructor notebooks holding the tiny assignment."""
    folder = tmp_path_factory.mktemp("solutions")
    synthetic_assignment(folder)
    return folder


@pytest.fixture(scope="module")
def solution(solutions) -> dict:
    """The tiny assignment's solution notebook, with the outputs a run gives it."""
    notebook = json.loads((solutions / f"{TINY}.ipynb").read_text())
    for count, cell in enumerate(c for c in notebook["cells"] if c["cell_type"] == "code"):
        cell["execution_count"] = count + 1
        cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "ok\n"}]
    return notebook


def _bytes(notebook: dict) -> bytes:
    """As nbgrader writes it (without validating thousands of cells)."""
    return (writes(nbformat.from_dict(notebook)) + "\n").encode()


def _copy(notebook: dict) -> dict:
    return json.loads(json.dumps(notebook))


def _graded(notebook: dict) -> list[tuple[str, dict, str]]:
    return [(c["metadata"]["nbgrader"]["grade_id"], c["metadata"]["nbgrader"], "".join(c["source"]))
            for c in notebook["cells"] if "nbgrader" in c.get("metadata", {})]


def _hostile(solution: dict) -> dict[str, dict]:
    metadata = _copy(solution)
    metadata["metadata"]["evil"] = "x" * MB20
    metadata["cells"][1]["metadata"]["tags"] = [f"{i:04}" + "t" * 1000 for i in range(2000)]  # 2 MB more, in a cell
    attachments = _copy(solution)
    image = base64.b64encode(b"\0" * (MB20 * 3 // 4)).decode()  # 20 MB once in base64
    attachments["cells"].insert(1, {"cell_type": "markdown", "id": "mine", "metadata": {},
                                    "source": "My plot: ![plot](attachment:plot.png)",
                                    "attachments": {"plot.png": {"image/png": image}}})
    cells = _copy(solution)
    cells["cells"][3:3] = [{"cell_type": "code", "execution_count": None, "id": f"empty{i}", "metadata": {},
                            "outputs": [], "source": ""} for i in range(EMPTY_CELLS)]
    return {"metadata": metadata, "attachments": attachments, "cells": cells}


@pytest.mark.parametrize("kind, reason", [("metadata", "notebook metadata dropped"),
                                          ("attachments", "cell 2: attachments (20 MB) replaced by blank images"),
                                          ("cells", "8000 cells nbgrader does not grade collapsed into notes")])
def test_a_hostile_notebook_ends_under_the_cap_with_its_reason(solution, kind, reason):
    notebook = _hostile(solution)[kind]
    content = _bytes(notebook)
    assert len(content) > CAP or len(notebook["cells"]) > MAX_CELLS
    capped, problems = cap_notebook(content, CAP)
    assert len(capped) <= CAP and len(problems) == 1 and reason in problems[0]
    shown = f"{len(capped) / 2**20:.3g} MB" if len(capped) >= 2**20 / 10 else f"{len(capped) / 2**10:.3g} KB"
    assert f"shrunk to {shown} (" in problems[0]
    cause = "10006 cells, over 2000" if kind == "cells" else "over the 8 MB cap"
    assert problems[0].startswith(f"the autograded notebook was {len(content) / 2**20:.3g} MB ({cause}): ")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no cell id or anything else for nbformat to fix on reading
        shrunk = nbformat.reads(capped.decode(), as_version=4)
    nbformat.validate(shrunk)  # formgrader and nbconvert open it as written
    assert _graded(shrunk) == _graded(notebook) == _graded(solution)  # every graded cell whole, in order
    assert shrunk.metadata.kernelspec == solution["metadata"]["kernelspec"]
    assert cap_notebook(content, CAP) == (capped, problems)  # deterministic
    if kind == "attachments":
        assert shrunk.cells[1].attachments == {"plot.png": {"image/png": BLANK_PNG}}
        assert shrunk.cells[1].source.startswith("My plot: ![plot](attachment:plot.png)")
        assert "replaced by blank images by the grader" in shrunk.cells[1].source
    if kind == "cells":
        assert sum("nbgrader" not in c.metadata for c in shrunk.cells) == MAX_CELLS + 1  # and one note
        notes = [c.source for c in shrunk.cells if "removed by the grader" in c.source]
        assert notes == ["*[8000 cells removed by the grader (over 2000 cells)]*"]


def test_long_sources_are_cut_those_of_cells_nbgrader_does_not_grade_first(solution):
    notebook = _copy(solution)
    mine = {"cell_type": "code", "execution_count": None, "id": "mine", "metadata": {}, "outputs": [],
            "source": "x = 1\n" * 1_000_000}  # a cell of the student's own: 6 MB of source, 20 MB in the notebook
    notebook["cells"].insert(2, mine)
    answer = "".join(notebook["cells"][3]["source"])  # the answer to "add"
    notebook["cells"][3]["source"] = answer + "\n# padding" * 300_000  # 3 MB
    for cap, cut in ((CAP, ["mine"]), (2**20, ["mine", "add"])):
        capped, problems = cap_notebook(_bytes(notebook), cap)
        shrunk = nbformat.reads(capped.decode(), as_version=4)
        assert len(capped) <= cap and len(problems) == 1
        assert ("sources cut to 20000 characters (cell 3)" in problems[0]) == ("mine" in cut)
        assert ("graded cells' sources cut to 20000 characters (cell 4)" in problems[0]) == ("add" in cut)
        assert shrunk.cells[2].source.endswith("# [5980000 more characters removed by the grader: the notebook was over its"
                                               " size cap]")
        assert (shrunk.cells[3].source == notebook["cells"][3]["source"]) == ("add" not in cut)
        assert shrunk.cells[3].source.startswith(answer)


@pytest.mark.parametrize("name", ["01_harlow_meta_rl", "03_policy_gradients"])
def test_an_honest_notebook_is_kept_byte_for_byte(solution, name):
    notebook = json.loads((SOLUTIONS / f"{name}.ipynb").read_text())
    notebook["metadata"]["jupytext"] = {"formats": "ipynb"}  # what a front-end adds: kept
    code = [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]
    for cell in notebook["cells"]:
        cell["metadata"]["tags"] = ["keep"]
    for cell in code:  # outputs up to their own cap, 2 MB together
        cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "y" * (2 * 2**20 // len(code) - 100)}]
    content = _bytes(notebook)
    assert 2 * 2**20 < len(content) < CAP
    capped, problems = cap_notebook(content, CAP)
    assert capped is content and problems == []


@pytest.mark.grading
def test_the_grader_keeps_the_autograded_notebook_and_feedback_under_the_cap(solutions, solution, tmp_path):
    from course_admin import grading

    honest = student_version(solution, "add", "square")
    folder = tmp_path / "submissions"
    folder.mkdir()
    hostile = _hostile(honest)
    del hostile["cells"]  # tens of thousands of cells take minutes through nbgrader: cut by cap_notebook above, like the rest
    for name, notebook in {"honest": honest, **hostile}.items():
        (folder / f"{name}.ipynb").write_bytes(_bytes(notebook))
    limits = Limits(cell_timeout=20, wall_timeout=300, memory_mb=1536)
    course = tmp_path / "course"
    report = grading.autograde(folder, out=tmp_path / "out", course_dir=course, source=solutions,
                               workers=0, limits=limits, progress=False)
    subs = {s.student: s for s in report.submissions}
    assert sorted(subs) == ["attachments", "honest", "metadata"]
    assert all(s.score == s.max_score > 0 for s in subs.values())  # the cap never costs a point
    for name, sub in subs.items():
        autograded = (course / "autograded" / name / TINY / f"{TINY}.ipynb").read_bytes()
        feedback = (course / "feedback" / name / TINY / f"{TINY}.html").read_bytes()
        assert len(autograded) <= CAP and len(feedback) <= CAP, name
        shrunk = [p for p in sub.problems if p.startswith("the autograded notebook was ")]
        assert (shrunk == []) == (name == "honest"), (name, sub.problems)
        assert cap_notebook(autograded, CAP) == (autograded, [])  # an honest one was kept as graded
