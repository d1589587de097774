"""``course bench notebooks``: a notebook run in a fresh kernel, timed per cell, with its CPU."""

import nbformat

from course_admin.notebook_timing import time_notebook


def test_a_notebook_is_timed_per_cell_with_its_kernel_cpu(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# a title"),
        nbformat.v4.new_code_cell("import os, time\nprint(os.environ['COURSE_FAST'])"),
        nbformat.v4.new_code_cell("t = time.process_time()\nwhile time.process_time() - t < 0.6:\n    pass"),
        nbformat.v4.new_code_cell("time.sleep(0.3)"),
        # an empty cache of its own: nothing an earlier run trained is reloaded
        nbformat.v4.new_code_cell("cache = os.environ['COURSE_CACHE']\n"
                                  "assert not os.path.exists(cache) and 'course-bench' in cache"),
    ]
    path = tmp_path / "timed.ipynb"
    nbformat.write(nb, path)
    figures = time_notebook(path, fast=True, longest=2)
    assert figures["error"] is None
    assert [cell["cell"] for cell in figures["longest"]] == [2, 3]  # the busy loop, then the sleep
    assert 0.55 <= figures["longest"][0]["s"] < 5 and figures["longest"][0]["first_line"].startswith("t = ")
    assert figures["kernel_cpu_s"] >= 0.6 and figures["wall_s"] >= figures["cells_s"] >= 0.85
    assert "COURSE_CPU" not in nbformat.read(path, as_version=4).cells[-1].source  # the file is left alone


def test_an_error_is_reported_with_the_figures(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("raise ValueError('broken on purpose')")]
    path = tmp_path / "broken.ipynb"
    nbformat.write(nb, path)
    figures = time_notebook(path, fast=True)
    assert "broken on purpose" in figures["error"]
