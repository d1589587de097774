"""Setup cells and restart robustness: a NameError says which earlier cell to run."""

import json

from course_utils import notebook
from course_utils.paths import ASSETS


def test_released_notebooks_names_are_current():
    from course_admin.grading.student_notebooks import stale_names

    assert stale_names() == []
    table = json.loads((ASSETS / notebook.NAMES_FILE).read_text())
    assert table["02_colour_replay"]["mine"]["first_line"] == "mine = game.results()"


def test_name_error_in_a_kernel_says_which_cell_to_run():
    """A real kernel: after setup_notebook, a missing name of the tutorial gets the hint."""
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3")
    try:
        def run(code):
            kc.execute(code)
            texts = []
            while True:
                msg = kc.get_iopub_msg(timeout=60)
                if msg["msg_type"] == "stream":
                    texts.append(msg["content"]["text"])
                elif msg["msg_type"] == "error":
                    texts.append(msg["content"]["ename"])
                elif msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                    return "".join(texts)

        run("import os; os.environ.pop('NBGRADER_EXECUTION', None)\n"
            "from course_utils.notebook import setup_notebook; setup_notebook('02_colour_replay')")
        out = run("print(mine)")
        assert "NameError" in out and "mine = game.results()" in out and "Section 0: Play the game" in out
        out = run("print(not_a_course_name)")
        assert "NameError" in out and "earlier cell" not in out
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
