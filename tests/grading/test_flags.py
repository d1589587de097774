"""The cheat report: every forgery in the red-team corpus is flagged, no honest answer is."""

from __future__ import annotations

import json

import forgeries
import pytest
from submissions import load

from course_utils.exercises import TUTORIALS
from course_utils.grading.flags import flags
from course_utils.paths import NOTEBOOKS, SOLUTIONS

NOT_A_CHEAT = {"nan"}  # a wrong answer, not an attempt to forge one


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("forgeries")
    forgeries.build(folder)
    return {path.stem: path.read_bytes() for path in folder.iterdir()}


def test_every_forgery_is_flagged_with_what_it_does(corpus):
    released = load("student", forgeries.ASSIGNMENT)
    found = {name: flags(content, released) for name, content in corpus.items()}
    assert {name for name, hits in found.items() if not hits} == NOT_A_CHEAT
    assert any("replaces checks.check_discounted_returns" in hit for hit in found["patch_check"])
    assert any("sys._getframe" in hit for hit in found["frames_and_gc"])
    assert any("showtraceback" in hit for hit in found["silenced_traceback"])
    assert any("defines __eq__" in hit for hit in found["equals_everything"])
    assert all(hit.startswith("cell ") and " line " in hit for hits in found.values() for hit in hits)


@pytest.mark.parametrize("notebook", TUTORIALS.values())
def test_the_course_s_own_answers_are_not_flagged(notebook):
    released = json.loads((NOTEBOOKS / f"{notebook}.ipynb").read_text())
    assert flags((SOLUTIONS / f"{notebook}.ipynb").read_bytes(), released) == []


def test_code_in_cells_nbgrader_restores_is_not_flagged_but_a_new_cell_is():
    released = load("student", forgeries.ASSIGNMENT)
    notebook = json.loads(json.dumps(released))
    test_cell = next(c for c in notebook["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == forgeries.RETURNS)
    test_cell["source"] = "import sys\nsys.modules.clear()"
    assert flags(notebook, released) == []
    notebook["cells"].append({"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                              "source": "import sys\nsys.modules.clear()"})
    assert flags(notebook, released) == [f"cell {len(notebook['cells'])} line 2: uses sys.modules"]


def test_unreadable_code_is_skipped_not_a_crash():
    released = load("student", forgeries.ASSIGNMENT)
    notebook = {"cells": [{"cell_type": "code", "source": "def broken(:\n"}, {"cell_type": "code", "source": "%time x = 1\n!ls"},
                          {"cell_type": "code", "source": "(" * 5000 + ")" * 5000}, "not a cell"]}
    assert flags(notebook, released) == [] and flags(b"{not json", released) == []
