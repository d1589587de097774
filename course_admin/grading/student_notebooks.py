"""Student notebooks from the instructor's: ``course release``.

``release()`` turns every ``solutions/*.ipynb`` into a student notebook in ``notebooks/``
(nbgrader ``generate_assignment`` underneath); ``stale_notebooks()`` says which released
notebooks no longer match (``course release --check``); ``write_names`` and ``stale_names`` do the
same for the table of which cell makes which name (``assets/notebook_names.json``). Each tutorial is one nbgrader
assignment named after its notebook, e.g. ``02_colour_replay``; ``solutions/`` stays the one
place exercises are written (``grading/source/`` is copied from it each time).
"""

from __future__ import annotations

import atexit
import hashlib
import shutil
import tempfile
from pathlib import Path

import nbformat

from course_admin import stored_json
from course_admin.grading.nbgrader_run import course_config, run_converter, tools_on_path
from course_admin.notebook_names import names_table
from course_utils.notebook import NAMES_FILE
from course_utils.paths import ASSETS, NOTEBOOKS, SOLUTIONS


def assignments(source: Path = SOLUTIONS) -> list[str]:
    """Assignment names: the stems of the notebooks in ``solutions/`` (or ``source``)."""
    return sorted(p.stem for p in Path(source).glob("*.ipynb"))


def _normalise(released: bytes) -> str:
    """A released notebook as stored: no outputs, no execution counts, stable JSON."""
    nb = nbformat.reads(released.decode("utf-8"), as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return nbformat.writes(nb) + "\n"


def _copy_sources(course_dir: Path, names: list[str], source: Path) -> None:
    """Each ``source/<name>.ipynb`` into the course folder, where nbgrader looks for it."""
    for name in names:
        target = course_dir / "source" / name
        target.mkdir(parents=True, exist_ok=True)
        shutil.copy2(Path(source) / f"{name}.ipynb", target / f"{name}.ipynb")


def generate_here(course_dir: Path, names: list[str], source: Path = SOLUTIONS) -> dict[str, Path]:
    """nbgrader's ``generate_assignment`` for every name into ``course_dir`` (its source folder,
    release folder and gradebook), run in this process (saves nbgrader's start-up).

    A course folder with no gradebook yet gets a copy of what ``fresh`` generated for the same
    names and sources earlier in this process (its gradebook and released notebooks) instead of
    generating them again: a grading run generated every tutorial twice (the instructor's folder
    and each task's template), about 1 CPU-s per tutorial each time, and a process that grades
    several classes (the tests, a term graded tutorial by tutorial) did it for every class."""
    course_dir = Path(course_dir)
    if not (course_dir / "gradebook.db").exists():
        made = fresh(names, source)
        _copy_sources(course_dir, names, source)
        for name in names:
            target = course_dir / "release" / name / f"{name}.ipynb"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(made[f"release/{name}"])
        (course_dir / "gradebook.db").write_bytes(made["gradebook.db"])
        return {name: course_dir / "release" / name / f"{name}.ipynb" for name in names}
    _run_generate(course_dir, names, source)
    return {name: course_dir / "release" / name / f"{name}.ipynb" for name in names}


def _run_generate(course_dir: Path, names: list[str], source: Path) -> None:
    from nbgrader.converters import GenerateAssignment

    tools_on_path()
    _copy_sources(course_dir, names, source)
    for name in names:
        result = run_converter(GenerateAssignment, course_config(course_dir), name)
        if not result.get("success"):
            raise _generation_failed(course_dir, Path(source) / f"{name}.ipynb", result.get("log") or "",
                                     result.get("error") or "")


class GradebookConflict(RuntimeError):
    """The course folder's gradebook holds submissions of an assignment whose notebook has since
    gained or lost graded cells: nbgrader will not change them, and nothing is graded."""


CELLS_CHANGED = "Cannot add or remove cells"
"""nbgrader's refusal to change an assignment's graded cells while its gradebook holds submissions."""


def _generation_failed(course_dir: Path, notebook: Path, log: str, error: str) -> RuntimeError:
    """The error for an instructor whose generation of ``notebook`` failed: nbgrader's own reason
    (its log's error lines: its final exception only says "see the above traceback"), and what to
    do where the reason is the known one, a changed notebook over a gradebook with submissions."""
    reasons = [line.strip() for line in log.splitlines() if "Error:" in line or CELLS_CHANGED in line]
    if any(CELLS_CHANGED in line for line in reasons):
        return GradebookConflict(
            f"{notebook} adds or removes cells nbgrader tracks (graded, answer or locked cells) since the "
            f"submissions in the gradebook ({course_dir / 'gradebook.db'}) were graded, and nbgrader cannot change "
            "an assignment's cells while it holds submissions. Grade this class against the notebook the students "
            f"were given (restore that version of {notebook.name}), or start a new gradebook: move {course_dir} "
            "aside (its grades stay there) and run again. Nothing was graded.")
    details = "\n".join(reasons) or (error or log)[-3000:]
    return RuntimeError(f"nbgrader generate_assignment {notebook.stem} failed:\n{details}")


_FRESH: dict[tuple, dict[str, bytes]] = {}
"""``fresh``'s results by the names and the exact contents of their source notebooks."""


def forget_generated() -> None:
    """Empty ``fresh``'s memory (a benchmark's runs each pay their generation, as one
    ``course autograde`` does)."""
    _FRESH.clear()


def _fresh_key(names: list[str], source: Path) -> tuple:
    return tuple((name, hashlib.sha256((Path(source) / f"{name}.ipynb").read_bytes()).hexdigest()) for name in names)


def generated(names: list[str], source: Path = SOLUTIONS) -> bool:
    """Whether ``fresh`` has these names and source contents already."""
    return _fresh_key(names, source) in _FRESH


def fresh(names: list[str], source: Path = SOLUTIONS) -> dict[str, bytes]:
    """The files ``generate_assignment`` makes in an empty course folder for ``names``:
    ``gradebook.db`` (those assignments, no students) and ``release/<name>`` (each released
    notebook), as bytes. Generated once per process for each set of names and source contents
    (generation is deterministic in everything grading reads; the gradebook's row ids are new
    each time, and nothing outside it refers to them)."""
    key = _fresh_key(names, source)
    if key not in _FRESH:
        # Not a TemporaryDirectory: nbgrader's converters chdir into the course folder while
        # they run, and a process started meanwhile (a Dask worker of the same grading run)
        # keeps it as its working directory; removed under it, nbgrader's os.getcwd() fails there.
        tmp = Path(tempfile.mkdtemp(prefix="course-template-"))
        atexit.register(shutil.rmtree, tmp, True)
        _run_generate(tmp, names, source)
        made = {"gradebook.db": (tmp / "gradebook.db").read_bytes()}
        for name in names:
            made[f"release/{name}"] = (tmp / "release" / name / f"{name}.ipynb").read_bytes()
        _FRESH[key] = made
    return _FRESH[key]


def _released_texts() -> dict[str, str]:
    """Every student notebook as ``notebooks/`` stores it, from ``fresh`` (generated once per
    process for each content of ``solutions/``, the same generation grading uses)."""
    names = assignments(SOLUTIONS)  # read here, not bound at import: a test may point it elsewhere
    made = fresh(names, SOLUTIONS)
    return {name: _normalise(made[f"release/{name}"]) for name in names}


def release() -> list[Path]:
    """Write ``notebooks/<name>.ipynb`` for every solution notebook; returns the paths."""
    NOTEBOOKS.mkdir(exist_ok=True)
    written = []
    for name, text in _released_texts().items():
        target = NOTEBOOKS / f"{name}.ipynb"
        target.write_text(text)
        written.append(target)
    return written


def stale_notebooks() -> list[str]:
    """Descriptions of every way ``notebooks/`` differs from a fresh release (empty: current)."""
    expected = _released_texts()
    problems = []
    for name, text in expected.items():
        target = NOTEBOOKS / f"{name}.ipynb"
        if not target.exists():
            problems.append(f"notebooks/{target.name} is missing")
        elif target.read_text() != text:
            problems.append(f"notebooks/{target.name} differs from solutions/{name}.ipynb")
    for extra in sorted(set(p.stem for p in NOTEBOOKS.glob("*.ipynb")) - set(expected)):
        problems.append(f"notebooks/{extra}.ipynb has no solution notebook")
    return problems


def write_names() -> list[Path]:
    """Write ``assets/notebook_names.json`` (``notebook_names.names_table``, from ``notebooks/``); returns
    it in a list if it changed."""
    path, table = ASSETS / NAMES_FILE, names_table()
    return [stored_json.write(path, table)] if stored_json.stale(path, table) else []


def stale_names() -> list[str]:
    """A line per notebook whose names ``assets/notebook_names.json`` does not hold as released
    (empty: current)."""
    return stored_json.stale(ASSETS / NAMES_FILE, names_table())
