"""Which cell of a notebook makes which name (``course_admin.notebook_names``): the first cell that
binds it, with its section."""

from course_admin import notebook_names


def _nb(*cells):
    return {"cells": [{"cell_type": kind, "source": [src]} for kind, src in cells]}


def test_defined_names_finds_the_first_cell_and_its_section():
    nb = _nb(("markdown", "## Setup"), ("code", "%matplotlib inline\nimport numpy as np\nfrom x import y as z"),
             ("markdown", "## Section 1: Go *(~5 min)*"),
             ("code", "# a comment\na, (b, c) = 1, (2, 3)\nfor i in range(3):\n    pass\n"),
             ("code", "if ok:\n    d = 1\nelse:\n    d = 2\ndef f():\n    inner = 1\nclass K: pass\na = 9"))
    names = notebook_names.defined_names(nb)
    assert names["np"] == {"section": "Setup", "first_line": "import numpy as np"}
    assert names["z"]["section"] == "Setup"
    assert names["a"] == {"section": "Section 1: Go", "first_line": "a, (b, c) = 1, (2, 3)"}
    assert {"b", "c", "i", "d", "f", "K"} <= set(names) and "inner" not in names
