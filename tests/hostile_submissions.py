"""A corpus of hostile and broken submissions for the tiny synthetic assignment
(``course_admin.grading.synthetic.synthetic_assignment``: ``add`` 1 point, ``square`` 2 points).

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

from course_admin.grading.intake import gradebook_id
from course_admin.grading.synthetic import TINY, student_version

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

    # two submissions claiming one student id: both graded, the second as twice~2, both told
    _write(folder, "twice", full)
    with zipfile.ZipFile(folder / "twice.zip", "w") as archive:
        archive.writestr(f"{TINY}.ipynb", json.dumps(add_only))
    expected["twice"] = (3, "2 notebooks for")
    expected["twice~2"] = (1, "2 notebooks for")

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


# --------------------------------------------------------------------------------------
# Intake, ids, metadata, survivors, caps and scripts (issue 12's findings)

SURVIVOR = '''
import os, subprocess, sys
# a grandchild in a new session with an empty environment, which forks once more, holds a
# listening TCP port (a fixed one outside the ephemeral range, so nobody else takes it) and sleeps
code = ("import os, socket, time\\nif os.fork() == 0:\\n"
        "    os.setsid(); s = socket.socket(); s.bind(('127.0.0.1', {port})); s.listen()\\n"
        "    print(os.getpid(), s.getsockname()[1], flush=True); time.sleep(3600)\\nelse:\\n    os._exit(0)")
child = subprocess.Popen([sys.executable, "-c", code], start_new_session=True, env={}, stdout=subprocess.PIPE, text=True)
print("SURVIVOR", *child.stdout.readline().split())
'''

TERMINAL = '''
import os, sys
for fd in {1, 2, getattr(sys.stdout, "_original_stdstream_copy", None) or 1}:
    try:
        os.write(fd, b"\\x1b[2K\\rFAKE-TERMINAL-LINE 5/5 all checks passed\\n")
    except OSError:
        pass
'''

DISPLAY_BOMB = '''
from IPython.display import display, update_display
big = "x" * (8 * 2**20)
for name in ("a", "b"):
    display("small", display_id=name)
for name in ("a", "b"):
    update_display(big, display_id=name)
'''

ERROR_FLOOD = '''
kernel = get_ipython().kernel
big = "E" * 2**18
for _ in range(40):  # 20 MB of errors sent straight to the output channel, past nbgrader's cell logic
    kernel.session.send(kernel.iopub_socket, "error", {"ename": "X", "evalue": big, "traceback": [big]},
                        parent=kernel.get_parent("shell"), ident=kernel._topic("error"))
'''

HTML_PAYLOAD = "<img src=x onerror=\"document.title='PWNED'\"><script>document.title='PWNED'</script>"


def _markdown(source: str) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": source}


def _zip_with_patched_header(path: Path, name: str, content: bytes, *, flag: int = 0, method: int | None = None) -> None:
    """A zip whose one member claims an encryption flag or a compression method it does not
    use (Python cannot write encrypted or Deflate64 members; readers look at the headers)."""
    import struct

    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr(name, content)
    data = bytearray(path.read_bytes())
    for signature, flag_at, method_at in ((b"PK\x03\x04", 6, 8), (b"PK\x01\x02", 8, 10)):
        at = data.index(signature)
        struct.pack_into("<H", data, at + flag_at, struct.unpack_from("<H", data, at + flag_at)[0] | flag)
        if method is not None:
            struct.pack_into("<H", data, at + method_at, method)
    path.write_bytes(bytes(data))


def _zip_bomb(path: Path, name: str, gib: float) -> None:
    """One member of ``gib`` GiB of zeros, written with a streaming compressor (about 6 CPU-s and
    a MB of zip per GiB)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive, archive.open(name, "w", force_zip64=True) as f:
        chunk = bytes(2**24)
        for _ in range(int(gib * 2**30) // len(chunk)):
            f.write(chunk)


def build_intake(folder: Path, solution: dict, paths: dict) -> dict[str, tuple[float, str, str]]:
    """Write the intake and integrity cases; returns {gradebook id: (score, reason, student
    name as given)}. Not gradable cases score 0 with no assignment."""
    import os

    full = student_version(solution, "add", "square")
    add_only = student_version(solution, "add")
    untouched = student_version(solution)
    expected: dict[str, tuple[float, str, str]] = {}

    # metadata nbgrader cannot read: graded as ordinary cells, the answers keep their marks
    nbnull = json.loads(json.dumps(full))
    nbnull["cells"][0]["metadata"]["nbgrader"] = None
    _write(folder, "nbnull", nbnull)
    expected["nbnull"] = (3, "nbgrader cannot read", "nbnull")
    badid = json.loads(json.dumps(full))
    badid["cells"][0]["metadata"]["nbgrader"] = {"grade_id": ["x"]}
    _write(folder, "badid", badid)
    expected["badid"] = (3, "nbgrader cannot read", "badid")

    # an honest student who copy-pasted the answer cell (metadata copied too) and one whose
    # test cell carries an outdated schema version
    copied = json.loads(json.dumps(full))
    at = _index(copied, "square")
    copied["cells"].insert(at + 1, json.loads(json.dumps(copied["cells"][at])))
    _write(folder, "copied", copied)
    expected["copied"] = (3, "appears 2 times", "copied")
    schema = json.loads(json.dumps(full))
    schema["cells"][_index(schema, "test_square")]["metadata"]["nbgrader"]["schema_version"] = 0
    schema["cells"][_index(schema, "test_add")]["metadata"]["nbgrader"]["points"] = 100
    _write(folder, "schema", schema)
    expected["schema"] = (3, "restored from the released notebook", "schema")

    # a folder named like a notebook, a dangling link, a pipe and a device, in and beside folders
    (folder / "dirnb" / "hw.ipynb").mkdir(parents=True)
    _write(folder / "dirnb", "real", full)
    expected["dirnb"] = (3, "is a folder, not a notebook", "dirnb")
    (folder / "dangling").mkdir()
    os.symlink("/nonexistent/hw.ipynb", folder / "dangling" / "hw.ipynb")
    expected["dangling"] = (0, "symbolic link", "dangling")
    os.mkfifo(folder / "pipe.ipynb")
    expected["pipe"] = (0, "not a regular file", "pipe")
    os.symlink("/dev/zero", folder / "zero.ipynb")
    expected["zero"] = (0, "symbolic link", "zero")

    # links into the instructor's files: never followed
    os.symlink(paths["solution"], folder / "linked.ipynb")
    expected["linked"] = (0, "symbolic link", "linked")
    os.symlink(os.path.dirname(paths["solution"]), folder / "linkdir")
    expected["linkdir"] = (0, "symbolic link", "linkdir")

    # zips: a bomb (a quarter of a GiB of zeros in a quarter of a MB: five times the 50 MB limit,
    # refused on its header like any larger one), a password, Deflate64
    _zip_bomb(folder / "bomb.zip", f"{TINY}.ipynb", 0.25)
    expected["bomb"] = (0, "over the 50 MB limit", "bomb")
    notebook_bytes = json.dumps(full).encode()
    _zip_with_patched_header(folder / "locked.zip", f"{TINY}.ipynb", notebook_bytes, flag=0x1)
    expected["locked"] = (0, "password-protected", "locked")
    _zip_with_patched_header(folder / "deflate64.zip", f"{TINY}.ipynb", notebook_bytes, method=9)
    expected["deflate64"] = (0, "Deflate64", "deflate64")

    # ids that used to collapse into one, and a name chosen to overwrite a classmate's grade
    for name, notebook, score in [
        ("Иван", full, 3), ("李雷", add_only, 1), ("a b", full, 3), ("a_b", add_only, 1),
        ("zz_victim", full, 3), ("zz_victim!", untouched, 0), ("x" * 70 + "1", full, 3), ("x" * 70 + "2", untouched, 0),
    ]:
        _write(folder, name, notebook)
        expected[gradebook_id(name)] = (score, "", name)
    _write(folder, "Bob", full)
    expected["Bob"] = (3, "looks like 'bob'", "Bob")
    _write(folder, "bob", untouched)
    expected["bob"] = (0, "looks like 'Bob'", "bob")
    for name, notebook, score in [("jane.doe", full, 3), ("jane.roe", untouched, 0)]:
        (folder / name).mkdir()
        _write(folder / name, TINY, notebook)
        expected[name] = (score, "", name)

    # a spreadsheet formula as a file name; a zip member name that forges a terminal line
    _write(folder, '=HYPERLINK("evil.example","grades")', full)
    expected[gradebook_id('=HYPERLINK("evil.example","grades")')] = (3, "", '=HYPERLINK("evil.example","grades")')
    with zipfile.ZipFile(folder / "forger.zip", "w") as archive:
        archive.writestr("\x1b[2K\rstudent0 5/5 all fine\n| x | y |.ipynb", b"{not json")
    expected["forger"] = (0, "not valid notebook JSON", "forger")

    # processes and outputs that must not escape the submission
    _write(folder, "survivor", _with_cell(full, SURVIVOR.replace("{port}", str(paths["survivor_port"]))))
    expected["survivor"] = (3, "", "survivor")
    _write(folder, "terminal", _with_cell(full, TERMINAL))
    expected["terminal"] = (3, "", "terminal")
    _write(folder, "displaybomb", _with_cell(full, DISPLAY_BOMB))
    expected["displaybomb"] = (3, "of output", "displaybomb")
    # 8 MB, eight times the test's cap: a 50 MB error took over the 5 s cell limit to format and
    # send on a loaded CI machine, which tested the timeout instead of the cap
    _write(folder, "bigerror", _with_cell(full, 'raise ValueError("E" * (8 * 2**20))'))
    expected["bigerror"] = (3, "of output", "bigerror")
    # flooding must not hide a failing test: square is wrong, its test's error is kept
    floodfail = _with_cell(add_only, "for i in range(20):\n    print(str(i) * 2**20)")
    floodfail["cells"][_index(floodfail, "square")]["source"] = "def square(x):\n    return x + 1"
    _write(folder, "floodfail", floodfail)
    expected["floodfail"] = (1, "of output", "floodfail")

    _write(folder, "errorflood", _with_cell(full, ERROR_FLOOD))
    expected["errorflood"] = (3, "of output", "errorflood")
    # an honest student whose answer prints a lot: the note about dropped output must not
    # fail the test that calls it
    verbose = _with_cell(full, "print('x' * 1_500_000)")
    verbose["cells"][_index(verbose, "add")]["source"] = "def add(a, b):\n    print('debug ' * 20000)\n    return a + b"
    _write(folder, "verbose", verbose)
    expected["verbose"] = (3, "of output", "verbose")

    # what other front-ends write: a byte order mark, nbformat 4.4 with cell ids, outputs on a
    # markdown cell, no execution counts, a lone surrogate; and a file name that is not UTF-8
    lenient = json.loads(json.dumps(full))
    lenient["nbformat_minor"] = 4
    lenient["cells"][0]["outputs"] = []
    lenient["cells"][0]["source"] = "A tiny assignment \ud800"
    for cell in lenient["cells"]:
        cell.pop("execution_count", None)
    (folder / "lenient.ipynb").write_bytes(b"\xef\xbb\xbf" + json.dumps(lenient).encode())
    expected["lenient"] = (3, "", "lenient")
    with open(os.path.join(os.fsencode(folder), b"\xe9mile.ipynb"), "wb") as f:
        f.write(json.dumps(full).encode())
    expected["%E9mile"] = (3, "", "\\xe9mile")
    _write(folder, ".alice", full)
    expected["%2Ealice"] = (0, "is hidden", ".alice")
    with zipfile.ZipFile(folder / "crowded.zip", "w") as archive:
        for i in range(10_001):
            archive.writestr(f"f{i}", b"")
    expected["crowded"] = (0, "lists 10001 files", "crowded")

    # scripts for the instructor's browser, in markdown and in outputs
    scripted = json.loads(json.dumps(full))
    scripted["cells"].insert(1, _markdown(f"My answer {HTML_PAYLOAD} <a href=\"javascript:alert(1)\">see</a> $a<b$"))
    scripted["cells"].insert(2, _code(f"%%html\n{HTML_PAYLOAD}"))
    scripted["cells"].insert(3, _code("%%javascript\ndocument.title = 'PWNED'"))
    _write(folder, "scripted", scripted)
    expected["scripted"] = (3, "", "scripted")
    return expected
