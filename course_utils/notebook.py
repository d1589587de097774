"""What a tutorial's setup cell does, and what makes a notebook robust to the way it is run.

``setup_notebook(tutorial)`` applies the course's plot style and teaches the kernel to explain a
``NameError`` for a name an earlier cell of that tutorial makes: instead of only
``name 'mine' is not defined``, the student reads which cell makes it (its section and its first
line) and what to run. That happens after a kernel restart, or when a cell is run before the
cells above it. Which cell makes which name is read from the released notebooks by
``course release`` and stored in ``assets/notebook_names.json`` (``course_admin.notebook_names``).
"""

from __future__ import annotations

import json

NAMES_FILE = "notebook_names.json"


def hint_for(name: str, where: dict[str, str]) -> str:
    """The explanation shown for a ``NameError`` on ``name``, made by the cell ``where`` describes."""
    return (f"`{name}` is made by an earlier cell that has not run since the kernel started: the cell in "
            f"\"{where['section']}\" that begins with `{where['first_line']}`. Run that cell and the cells "
            "between it and this one (Run > Run All Above Selected Cell does it), then run this cell again.")


def _names_for(tutorial: str) -> dict[str, dict[str, str]]:
    from course_utils.paths import ASSETS

    path = ASSETS / NAMES_FILE
    if not path.exists():
        return {}
    return json.loads(path.read_text()).get(tutorial, {})


def setup_notebook(tutorial: str) -> None:
    """Set up a tutorial notebook (e.g. ``"02_colour_replay"``): the course's plot style, and
    ``NameError``s that say which earlier cell to run. Not while nbgrader grades it (the grader
    reads the plain errors)."""
    from course_utils.plotting import use_course_style
    from course_utils.runtime import grading

    use_course_style()
    if grading():
        return
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is None:
        return
    names = _names_for(tutorial)

    def explain(shell, etype, value, tb, tb_offset=None):
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
        name = getattr(value, "name", None)
        if name in names:
            print(hint_for(name, names[name]))

    shell.set_custom_exc((NameError,), explain)
