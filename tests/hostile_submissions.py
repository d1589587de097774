"""A corpus of hostile and broken submissions for the tiny synthetic assignment
(``course_utils.grading_dask.synthetic_assignment``: ``add`` 1 point, ``square`` 2 points).

``build(folder, paths)`` writes one submission per student and returns what each must score
and which reason must appear in its problems. ``paths`` holds absolute paths the hostile code
aims at (the worst case: a student who knows where everything is): the submissions folder,
the instructor's solutions, the course folder, a marker file to create outside its folder,
and a TCP port on 127.0.0.1 where the test listens.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from course_utils.grading_dask import TINY, student_version

LEAKED = "LEAKED:"


def _code(source: str) -> dict:
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}


def _index(notebook: dict, grade_id: str) -> int:
    for i, cell in enumerate(notebook["cells"]):
        if cell["metadata"].get("nbgrader", {}).get("grade_id") == grade_id:
            return i
    raise KeyError(grade_id)


def _with_cell(notebook: dict, source: str, before: str = "add") -> dict:
    """``notebook`` with a new (ungraded) code cell inserted before the cell ``before``."""
    notebook = json.loads(json.dumps(notebook))
    notebook["cells"].insert(_index(notebook, before), _code(source))
    return notebook


def _write(folder: Path, name: str, notebook: dict) -> None:
    (folder / f"{name}.ipynb").write_text(json.dumps(notebook))


READER = '''
import glob, os, socket
targets = {paths!r}
for label, path in targets.items():
    try:
        with open(path, "rb") as f:
            print("{leaked}", label, f.read(40))
    except OSError as error:
        print("blocked:", label, type(error).__name__)
for pattern in ["/tmp/course-grade-*/*", "/tmp/course-grade-*/course/*", {folder_glob!r}]:
    found = glob.glob(pattern)
    print(("{leaked}" if found else "blocked:"), "listing", pattern, found[:3])
for pid in (os.getppid(), 1):
    try:
        print("{leaked}", "environ", pid, open(f"/proc/{{pid}}/environ", "rb").read(40))
    except OSError as error:
        print("blocked: environ", pid, type(error).__name__)
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=3).close()
    print("{leaked}", "tcp connect")
except OSError as error:
    print("blocked: tcp", type(error).__name__)
'''

WRITER = '''
import os, pathlib
for path in {paths!r}:
    try:
        pathlib.Path(path).write_text("written by a student")
        print("ESCAPED:", path)
    except OSError as error:
        print("blocked:", path, type(error).__name__)
pathlib.Path("inside.txt").write_text("my own folder is fine")
print("inside:", pathlib.Path("inside.txt").read_text())
'''

KILLER = '''
import os, signal
for pid in (os.getppid(),):
    try:
        os.kill(pid, signal.SIGKILL)
        print("ESCAPED: killed", pid)
    except OSError as error:
        print("blocked: kill", pid, type(error).__name__)
'''

STUBBORN = '''
import signal, time
signal.signal(signal.SIGINT, signal.SIG_IGN)  # ignore the grader's interrupt
while True:
    time.sleep(1)
'''


def build(folder: Path, solution: dict, paths: dict, wall_cells: int = 10) -> dict[str, tuple[float, str]]:
    """Write the corpus into ``folder``; returns {student: (expected score, reason text)}
    (score out of 3; the reason must appear in the problems, "" for none). ``wall_cells``
    cells of 4 s each must outlast the wall-clock limit of the test."""
    folder.mkdir(parents=True, exist_ok=True)
    full = student_version(solution, "add", "square")
    add_only = student_version(solution, "add")
    expected: dict[str, tuple[float, str]] = {}

    _write(folder, "normal", full)
    expected["normal"] = (3, "")

    # an infinite loop where add should be: interrupted after the cell limit; square still counts
    loop = _with_cell(add_only, "while True:\n    pass")
    loop["cells"][_index(loop, "square")]["source"] = full["cells"][_index(full, "square")]["source"]
    _write(folder, "loop", loop)
    expected["loop"] = (3, "cell time limit")

    # a loop that ignores the interrupt: the kernel is stopped, the graded cells after it score 0
    _write(folder, "stubborn", _with_cell(full, STUBBORN))
    expected["stubborn"] = (0, "ignored the interrupt")

    # slow but well-behaved cells after the graded ones: stopped by the wall-clock limit per
    # submission, the points earned before it are kept
    slow = json.loads(json.dumps(full))
    for _ in range(wall_cells):
        slow["cells"].append(_code("import time\ntime.sleep(4)"))
    _write(folder, "slow", slow)
    expected["slow"] = (3, "limit for one submission")

    # os._exit in square's cell: add (before it) counts, square and later cells do not
    crash = json.loads(json.dumps(add_only))
    crash["cells"][_index(crash, "square")]["source"] = "import os\nos._exit(1)"
    _write(folder, "crash", crash)
    expected["crash"] = (1, "kernel died")

    # a memory bomb asking for 10 GB: MemoryError under the address-space limit, the kernel
    # survives. bytes() come zeroed from calloc, so the limit is reached at once; bytearray()
    # writes every page, 5 s here for 1.5 GB, which ran into the 5 s cell limit under load.
    _write(folder, "membomb", _with_cell(full, "hog = [bytes(100 * 2**20) for _ in range(100)]"))
    expected["membomb"] = (3, "ran out of memory")

    # megabytes of output
    _write(folder, "flood", _with_cell(full, "for i in range(20):\n    print(str(i) * 2**20)"))
    expected["flood"] = (3, "of output")

    # graded cells edited (restored by nbgrader from its gradebook) or deleted (put back)
    edited = json.loads(json.dumps(add_only))
    edited["cells"][_index(edited, "test_square")]["source"] = "pass  # nothing to test here"
    edited["cells"][_index(edited, "square")]["source"] = "def square(x):\n    return x"
    _write(folder, "edited", edited)
    expected["edited"] = (1, "")
    deleted = json.loads(json.dumps(full))
    del deleted["cells"][_index(deleted, "test_square")]
    deleted["cells"][_index(deleted, "square")]["source"] = "def square(x):\n    return x"
    _write(folder, "deleted", deleted)
    expected["deleted"] = (1, "restored")

    # a renamed notebook in a student folder: recognised by its graded cells
    (folder / "renamed").mkdir()
    _write(folder / "renamed", "my homework (final) v2", full)
    expected["renamed"] = (3, "")

    # broken files
    (folder / "corrupt.ipynb").write_text('{"cells": [')
    expected["corrupt"] = (0, "not valid notebook JSON")
    zipfile.ZipFile(folder / "emptyzip.zip", "w").close()
    expected["emptyzip"] = (0, "holds no .ipynb")
    (folder / "zerobytes.zip").write_bytes(b"")
    expected["zerobytes"] = (0, "not a valid zip")
    (folder / "essay.docx").write_bytes(b"PK\x03\x04 not really a document")
    expected["essay"] = (0, "not a notebook")

    # two submissions claiming one student id: the first (sorted) is graded, the other named
    _write(folder, "twice", full)
    with zipfile.ZipFile(folder / "twice.zip", "w") as archive:
        archive.writestr(f"{TINY}.ipynb", json.dumps(add_only))
    expected["twice"] = (3, "more than one notebook")

    # zip entries with ../ paths: read in memory, never extracted
    with zipfile.ZipFile(folder / "zipslip.zip", "w") as archive:
        archive.writestr(f"../../escape/{TINY}.ipynb", json.dumps(full))
    expected["zipslip"] = (3, "")

    # code that writes outside its folder, reads other submissions and hidden tests, connects out
    _write(folder, "writer", _with_cell(full, WRITER.format(paths=[paths["marker"], str(folder / "normal.ipynb"),
                                                                   paths["solution"]])))
    expected["writer"] = (3, "")
    reads = {"other submission": str(folder / "normal.ipynb"), "hidden tests": paths["solution"],
             "gradebook": paths["gradebook"], "instructor home": paths["home_file"]}
    source = READER.format(paths=reads, leaked=LEAKED, folder_glob=str(folder / "*"), port=paths["port"])
    _write(folder, "reader", _with_cell(full, source))
    expected["reader"] = (3, "")
    if paths.get("signals_scoped"):
        _write(folder, "killer", _with_cell(full, KILLER))
        expected["killer"] = (3, "")
    return expected
