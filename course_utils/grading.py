"""Release and grading with nbgrader.

``release()`` turns every ``solutions/*.ipynb`` into a student notebook in ``notebooks/``
(nbgrader ``generate_assignment`` underneath); ``stale_notebooks()`` says which released
notebooks no longer match. ``autograde(folder)`` grades a folder of submissions and writes
``grades.csv``, per-student feedback HTML and a summary.

The instructor's nbgrader course folder is ``grading/`` (out of git): ``source/`` is copied
from ``solutions/`` each time, so solutions/ stays the one place exercises are written.
Each tutorial is one nbgrader assignment named after its notebook, e.g. ``02_colour_replay``.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"
NOTEBOOKS = ROOT / "notebooks"
COURSE_DIR = ROOT / "grading"


def assignments() -> list[str]:
    """Assignment names: the stems of the notebooks in ``solutions/``."""
    return sorted(p.stem for p in SOLUTIONS.glob("*.ipynb"))


def _tools_on_path() -> None:
    """nbgrader runs the ``alembic`` command by name: make this environment's scripts findable
    even when the environment is not activated."""
    scripts = str(Path(sys.executable).parent)
    if scripts not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = scripts + os.pathsep + os.environ.get("PATH", "")


def _nbgrader(*args: str, course_dir: Path, check: bool = True) -> subprocess.CompletedProcess:
    """Run an nbgrader command on ``course_dir`` with the repository's nbgrader_config.py."""
    _tools_on_path()
    command = [
        sys.executable,
        "-m",
        "nbgrader",
        *args,
        f"--CourseDirectory.root={course_dir}",
        f"--CourseDirectory.db_url=sqlite:///{course_dir / 'gradebook.db'}",
    ]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if check and result.returncode != 0:
        raise RuntimeError(f"`nbgrader {' '.join(args)}` failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return result


def _normalise(path: Path) -> str:
    """A released notebook as stored: no outputs, no execution counts, stable JSON."""
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return nbformat.writes(nb) + "\n"


def _generate(course_dir: Path, names: list[str], database: bool) -> dict[str, Path]:
    for name in names:
        source = course_dir / "source" / name
        source.mkdir(parents=True, exist_ok=True)
        shutil.copy2(SOLUTIONS / f"{name}.ipynb", source / f"{name}.ipynb")
        _nbgrader("generate_assignment", name, "--force", *([] if database else ["--no-db"]), course_dir=course_dir)
    return {name: course_dir / "release" / name / f"{name}.ipynb" for name in names}


def _released_texts() -> dict[str, str]:
    with tempfile.TemporaryDirectory() as tmp:
        return {name: _normalise(path) for name, path in _generate(Path(tmp), assignments(), database=False).items()}


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


# --------------------------------------------------------------------------------------
# Autograding


@dataclass
class Submission:
    """One student's notebook for one assignment, or the reason it cannot be graded."""

    student: str
    source: str
    assignment: str | None = None
    content: bytes | None = None
    problems: list[str] = field(default_factory=list)
    score: float = 0.0
    max_score: float = 0.0
    grades: dict[str, float] = field(default_factory=dict)
    feedback: Path | None = None


def _student_id(name: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(name).stem).strip("._") or "unknown"
    return cleaned[:64]


def _grade_ids(notebook: dict) -> set[str]:
    ids = set()
    for cell in notebook.get("cells", []):
        info = cell.get("metadata", {}).get("nbgrader", {})
        if isinstance(info, dict) and info.get("grade_id"):
            ids.add(str(info["grade_id"]))
    return ids


def _identify(content: bytes, filename: str, known: dict[str, set[str]]) -> tuple[str | None, str | None]:
    """(assignment, problem) for a notebook's bytes: by its nbgrader cell ids, else its name."""
    try:
        notebook = json.loads(content.decode("utf-8"))
        nbformat.validate(nbformat.reads(content.decode("utf-8"), as_version=4))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        return None, f"{filename} is not valid notebook JSON ({type(error).__name__}: {str(error)[:80]})"
    except Exception as error:  # nbformat validation errors
        return None, f"{filename} is not a valid notebook ({str(error).splitlines()[0][:100]})"
    ids = _grade_ids(notebook)
    overlap = {name: len(ids & cells) for name, cells in known.items()}
    best = max(overlap, key=overlap.get, default=None)
    if best and overlap[best] > 0:
        return best, None
    if Path(filename).stem in known:
        return Path(filename).stem, None
    return None, f"{filename}: could not tell which tutorial this is (no graded cells recognised)"


def collect(folder: Path, known: dict[str, set[str]]) -> list[Submission]:
    """Read a folder of ``<student>.ipynb``, ``<student>.zip`` or ``<student>/...ipynb``.

    Files are read into memory, never extracted by their own paths (a zip entry named
    ``../x`` cannot write outside the grading folder).
    """
    submissions: dict[tuple[str, str], Submission] = {}
    problems: list[Submission] = []

    def add(student: str, source: str, filename: str, content: bytes) -> None:
        assignment, problem = _identify(content, filename, known)
        if problem:
            problems.append(Submission(student, source, problems=[problem]))
            return
        key = (student, assignment)
        if key in submissions:
            submissions[key].problems.append(
                f"more than one notebook for {assignment}; graded {submissions[key].source}, ignored {source}"
            )
            return
        submissions[key] = Submission(student, source, assignment, content)

    for entry in sorted(Path(folder).iterdir()):
        student = _student_id(entry.name)
        if entry.is_dir():
            notebooks = sorted(p for p in entry.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
            if not notebooks:
                problems.append(Submission(student, entry.name, problems=[f"{entry.name}/ holds no .ipynb notebook"]))
            for path in notebooks:
                add(student, str(path.relative_to(folder)), path.name, path.read_bytes())
        elif entry.suffix == ".ipynb":
            add(student, entry.name, entry.name, entry.read_bytes())
        elif entry.suffix == ".zip":
            try:
                with zipfile.ZipFile(entry) as archive:
                    members = [m for m in archive.infolist() if m.filename.endswith(".ipynb") and "__MACOSX" not in m.filename]
                    if not members:
                        problems.append(Submission(student, entry.name, problems=[f"{entry.name} holds no .ipynb notebook"]))
                    for member in members:
                        add(student, f"{entry.name}:{member.filename}", Path(member.filename).name, archive.read(member))
            except zipfile.BadZipFile:
                problems.append(Submission(student, entry.name, problems=[f"{entry.name} is not a valid zip file"]))
        elif not entry.name.startswith("."):
            problems.append(Submission(student, entry.name, problems=[f"{entry.name} is not a notebook (.ipynb) or a zip"]))
    return list(submissions.values()) + problems


def restore_graded_cells(content: bytes, assignment: str, released: Path) -> tuple[bytes, list[str]]:
    """Put back graded test cells a student deleted, at their place in the released notebook.

    nbgrader rewrites edited test cells from its database but cannot grade a cell that is
    gone; restoring it means a deleted test still runs against the student's code.
    """
    notebook = nbformat.reads(content.decode("utf-8"), as_version=4)
    reference = nbformat.read(released, as_version=4)
    present = {c.metadata.get("nbgrader", {}).get("grade_id") for c in notebook.cells}
    restored = []
    for index, cell in enumerate(reference.cells):
        info = cell.metadata.get("nbgrader", {})
        if info.get("grade") and info.get("grade_id") not in present:
            previous_ids = [c.metadata.get("nbgrader", {}).get("grade_id") for c in reference.cells[:index]]
            position = 0
            for i, existing in enumerate(notebook.cells):
                if existing.metadata.get("nbgrader", {}).get("grade_id") in previous_ids:
                    position = i + 1
            notebook.cells.insert(position, cell)
            restored.append(info["grade_id"])
    if not restored:
        return content, []
    return nbformat.writes(notebook).encode("utf-8"), restored


@dataclass
class Report:
    submissions: list[Submission]
    csv_path: Path
    feedback_dir: Path

    def summary(self) -> str:
        lines = [f"Graded {sum(s.assignment is not None for s in self.submissions)} submissions; grades: {self.csv_path}"]
        for s in sorted(self.submissions, key=lambda s: (s.student, s.assignment or "")):
            status = f"{s.score:g}/{s.max_score:g}" if s.assignment else "not graded"
            note = f"  ({'; '.join(s.problems)})" if s.problems else ""
            lines.append(f"  {s.student:<20} {s.assignment or '-':<22} {status}{note}")
        return "\n".join(lines)


def autograde(folder: str | os.PathLike, out: str | os.PathLike = "grades", course_dir: Path = COURSE_DIR) -> Report:
    """Autograde every submission in ``folder``; write ``out/grades.csv`` and ``out/feedback/``."""
    folder, out = Path(folder), Path(out)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder} is not a folder of submissions.")
    course_dir = Path(course_dir).resolve()
    names = assignments()
    released = _generate(course_dir, names, database=True)
    known = {name: _grade_ids(json.loads(path.read_text())) for name, path in released.items()}
    submissions = collect(folder, known)
    from nbgrader.api import Gradebook, MissingEntry

    _tools_on_path()

    for sub in submissions:
        if sub.assignment is None:
            continue
        content, restored = restore_graded_cells(sub.content, sub.assignment, released[sub.assignment])
        if restored:
            sub.problems.append(f"graded cells deleted, restored before grading: {', '.join(restored)}")
        target = course_dir / "submitted" / sub.student / sub.assignment
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        (target / f"{sub.assignment}.ipynb").write_bytes(content)
        result = _nbgrader("autograde", sub.assignment, f"--student={sub.student}", "--force", course_dir=course_dir, check=False)
        if result.returncode != 0:
            sub.problems.append("the grader reported errors: " + _last_error(result))
        feedback = _nbgrader(
            "generate_feedback", sub.assignment, f"--student={sub.student}", "--force", course_dir=course_dir, check=False
        )
        html = course_dir / "feedback" / sub.student / sub.assignment / f"{sub.assignment}.html"
        if feedback.returncode == 0 and html.exists():
            sub.feedback = out / "feedback" / sub.student / f"{sub.assignment}.html"
            sub.feedback.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(html, sub.feedback)

    with Gradebook(f"sqlite:///{course_dir / 'gradebook.db'}") as gradebook:
        for sub in submissions:
            if sub.assignment is None:
                continue
            try:
                record = gradebook.find_submission(sub.assignment, sub.student)
            except MissingEntry:
                sub.problems.append("no grade recorded: the notebook could not be autograded")
                sub.max_score = gradebook.find_assignment(sub.assignment).max_score
                continue
            sub.score, sub.max_score = float(record.score), float(record.max_score)
            for notebook in record.notebooks:
                for grade in notebook.grades:
                    sub.grades[grade.name] = float(grade.score)
    return Report(submissions, _write_csv(submissions, out), out / "feedback")


def _last_error(result: subprocess.CompletedProcess) -> str:
    lines = [line for line in (result.stderr or "").splitlines() if "[ERROR]" in line or "Error" in line]
    return (lines[-1] if lines else f"exit code {result.returncode}")[:200]


def _write_csv(submissions: list[Submission], out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    grade_names = sorted({name for s in submissions for name in s.grades})
    path = out / "grades.csv"
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["student", "assignment", "score", "max_score", *grade_names, "source", "problems"])
        for s in sorted(submissions, key=lambda s: (s.student, s.assignment or "")):
            writer.writerow(
                [
                    s.student,
                    s.assignment or "",
                    f"{s.score:g}",
                    f"{s.max_score:g}",
                    *[f"{s.grades[n]:g}" if n in s.grades else "" for n in grade_names],
                    s.source,
                    "; ".join(s.problems),
                ]
            )
    return path
