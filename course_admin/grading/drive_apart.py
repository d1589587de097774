"""Hidden cases driven apart from the notebook, where only the exercise's own course code exists.

The student's kernel holds the whole course package: the tutorial's agents need the discounted
returns, trees, networks and trainers that many exercises ask students to write. An answer that
only wraps one of those would pass its hidden cases there, however it hid the call. So the
grader does not take the hidden tests' records from the kernel. Two nbgrader preprocessors:

- ``HideHiddenDrives`` (before execution) keeps each hidden-test cell that submits a record
  from running in the kernel (its source is set aside; the cell runs a comment);
- ``DriveApart`` (after execution, before ``judging.JudgeRecords``) starts ``drive_runner.py``
  in the submission's process tree, which drives each exercise in a child process of its own
  whose readable course files are only ``package_files(exercise)``: the exercise's check, the
  check framework and the modules of the code the notebook gives every answer
  (``exercises.SOLUTION_IMPORTS``), and none of its ``exercises.GradedCell.twins`` (course code
  that computes what the exercise asks; ``tests/grading/test_drive_apart.py`` holds every
  exercise to that). The record goes back into the hidden cell's outputs, with notes on what
  the answer reached for and could not have, and ``JudgeRecords`` judges it as before.

An answer that wraps course code then fails its hidden cases with a message that names the code
("course_utils.colour.agent is not available to this exercise's answer when it is graded"); an
instructor who disagrees overrides the score in formgrader, as for any autograded cell.
"""

from __future__ import annotations

import ast
import functools
import json
import re
import select
import subprocess
import sys
from pathlib import Path

from nbconvert.preprocessors import Preprocessor
from nbformat.notebooknode import NotebookNode
from traitlets import Bool, Unicode

from course_admin.exercises import GRADED, SOLUTION_IMPORTS
from course_admin.grading import drive_runner, hidden_cases, processes, sandbox
from course_admin.grading.cells import cell_source, nbgrader_meta
from course_admin.grading.drive_runner import NOT_GIVEN
from course_admin.grading.process_tree import ProcessTree
from course_utils import records
from course_utils.paths import PACKAGE

RUNNER = Path(drive_runner.__file__).resolve()
SUBMITS = re.compile(r"\.submit\(")
HIDDEN_PLACEHOLDER = "# The hidden tests of this cell run apart from the notebook when it is graded.\n"
ALWAYS = ("course_utils", "course_utils.runtime", "course_utils.checking", "course_utils.records")
"""Modules every child may load: the package's root (threads, seeding) and the check framework."""
JUDGE_ONLY = ("course_utils.replay.td_judge", "course_utils.replay.expected", "course_utils.replay.tree_judge",
              "course_utils.lunar.checks.bandit_judge")
"""Modules only a check's judge imports (numpy oracles of what an exercise asks, for the hints):
the grader judges in its own process, so no child may read them."""
JUDGE_KEYS = ("hints",)
"""Keys of a hidden case that only the judge reads (what each typical mistake gives on the case,
for the hint naming it): left out of the cases the child drives the answer on, since a wrong
answer's value can be a step from the right one (tutorial 2's "sum" mistake is T times the loss)."""


def for_the_child(cases):
    """``cases`` without the keys only the judge reads (``JUDGE_KEYS``), for the child's job."""
    if isinstance(cases, list):
        return [{k: v for k, v in case.items() if k not in JUDGE_KEYS} if isinstance(case, dict) else case
                for case in cases]
    return cases


def _module_file(name: str) -> Path | None:
    parts = name.split(".")[1:]
    base = PACKAGE.joinpath(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imports(path: Path, name: str) -> set[str]:
    """Course modules a module imports anywhere in its source (inside functions too: a lazy import
    must find its file readable, or an honest answer would fail on it)."""
    stat = path.stat()
    return set(_imports_of(path, name, stat.st_mtime_ns, stat.st_size))


@functools.lru_cache(maxsize=1024)
def _imports_of(path: Path, name: str, mtime_ns: int, size: int) -> frozenset[str]:
    """``_imports`` of one version of a file (its modification time and size in the key): every
    exercise of every submission reads the same few dozen modules, and parsing them for each one
    cost 1.9 s of a grading process's CPU for the four tutorials' submissions (0.04 s cached)."""
    found = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                stem = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(stem + ([base] if base else []))
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names}
    return frozenset(f for f in found if f == "course_utils" or f.startswith("course_utils."))


def source_modules(source: str) -> set[str]:
    """The course modules a cell's source imports."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("course_utils"):
            found |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("course_utils")}
    return found


def closure(modules: set[str], exclude: tuple[str, ...] = ()) -> dict[str, Path]:
    """The course modules loaded by importing ``modules`` with the subpackages' ``__init__`` not run
    (as ``drive_runner`` does), by name: modules of the student package only (the instructor
    package is never readable), and ``exclude`` never."""
    files: dict[str, Path] = {}
    todo = list(modules | set(ALWAYS))
    while todo:
        name = todo.pop()
        if name in files or name in exclude:
            continue
        path = _module_file(name)
        if path is None or (path.name == "__init__.py" and name != "course_utils"):
            continue  # a name inside a module, or a subpackage (registered empty by the runner)
        files[name] = path
        todo += sorted(_imports(path, name) - set(files))
    return files


@functools.cache
def _hidden_source(grade_id: str) -> str:
    from course_admin.exercises import TUTORIALS
    from course_utils.paths import SOLUTIONS

    cell = next(cell for cell in GRADED if cell.grade_id == grade_id)
    notebook = json.loads((SOLUTIONS / f"{TUTORIALS[cell.tutorial]}.ipynb").read_text())
    for nb_cell in notebook["cells"]:
        if nbgrader_meta(nb_cell).get("grade_id") == grade_id:
            return cell_source(nb_cell)
    raise KeyError(grade_id)


def package_files(grade_id: str, hidden_source: str | None = None) -> dict[str, Path]:
    """The course modules the child driving ``grade_id`` may read: its hidden cell's imports (the
    check), the tutorial's header (``SOLUTION_IMPORTS``), the framework, and what they import."""
    cell = next(cell for cell in GRADED if cell.grade_id == grade_id)
    source = hidden_source if hidden_source is not None else _hidden_source(grade_id)
    header = exercise_header(cell.tutorial, cell.twins)
    return closure(source_modules(source) | source_modules(header), JUDGE_ONLY + cell.twins)


def exercise_header(tutorial: str, twins: tuple[str, ...]) -> str:
    """The tutorial's header (``SOLUTION_IMPORTS``) without its imports from ``twins``: a module
    the header gives every answer can be the drop-in answer to another exercise of the same
    notebook, and that exercise's answer is then driven without it."""
    header = SOLUTION_IMPORTS[tutorial]
    lines = header.splitlines(keepends=True)
    for node in reversed(ast.parse(header).body):
        if isinstance(node, ast.ImportFrom) and node.module in twins:
            del lines[node.lineno - 1 : node.end_lineno]
    return "".join(lines)


def _names_bound(source: str) -> set[str]:
    """Names a cell binds at its top level (imports, assignments, definitions)."""
    from IPython.core.inputtransformer2 import TransformerManager

    try:
        tree = ast.parse(TransformerManager().transform_cell(source))
    except SyntaxError:
        return set()
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def build_job(nb, hidden: dict[int, tuple[str, str]], workdir: Path, landlock: bool) -> dict:
    """The runner's job for a notebook: per hidden cell (index -> (grade_id, source)), the header,
    every answer cell (nbgrader solution code cells, in order), and the files it may read."""
    answers = []
    for index, cell in enumerate(nb.cells):
        meta = nbgrader_meta(cell)
        if cell.get("cell_type") == "code" and meta.get("solution") and not meta.get("grade"):
            answers.append((index, cell_source(cell), meta.get("grade_id", "")))
    setup_names = set()
    for cell in nb.cells:
        if cell.get("cell_type") == "code" and not nbgrader_meta(cell).get("solution"):
            setup_names |= _names_bound(cell_source(cell))
    from course_admin.grading.judging import exercise_for

    exercises = []
    for _, (grade_id, source) in sorted(hidden.items()):
        graded = next(cell for cell in GRADED if cell.grade_id == grade_id)
        exercise = exercise_for(grade_id)
        own = next(((i, s) for i, s, g in answers if g == graded.solution), None)
        header = exercise_header(graded.tutorial, graded.twins)
        given = _names_bound(header) | {n for _, s, _ in answers for n in _names_bound(s)}
        exercises.append({
            "grade_id": grade_id,
            "header": header,
            "answers": [(i, s) for i, s, _ in answers],
            "own_answer": own[0] if own else None,
            "answer_names": sorted(_names_bound(own[1])) if own else [],
            "setup_names": sorted(setup_names - given),
            "hidden": source,
            "hidden_cases": hidden_cases.encode(for_the_child(exercise.cases_for(True))),
            # the exercise's speed part is timed by the runner, from outside (checking.Timed)
            "timed": graded.check.split(":")[0] if exercise.timed is not None else None,
            # what the hidden cell imports (its check), loaded before the answers run: see course_state
            "check_modules": sorted(name for name in source_modules(source) if _module_file(name)),
            "package_files": [str(p) for p in package_files(grade_id, source).values()],
            "workdir": str(workdir),
            "landlock": landlock,
        })
    return {"exercises": exercises}


def _record_output(result: dict) -> NotebookNode:
    """The hidden cell's output: the child's record, with the runner's notes and what the runner
    measured (``measured``, in place of anything of that name the child wrote)."""
    payload = result.get("payload")
    notes = [str(n)[:500] for n in result.get("notes", [])][:10]
    if payload is None:
        reason = "; ".join(notes) or "the answer's run ended without a record"
        return NotebookNode(output_type="error", ename="NoRecord", evalue=reason, traceback=[reason])
    try:
        data = json.loads(payload)
        data["notes"] = notes
        data["measured"] = result.get("measured")
        payload = json.dumps(data)
    except (ValueError, TypeError):
        pass  # judging says the record could not be read
    return NotebookNode(output_type="display_data", metadata={},
                        data={records.RECORD_MIME: payload, "text/plain": "answer recorded for grading"})


class HideHiddenDrives(Preprocessor):
    """Before execution: hidden-test cells that submit a record run a comment in the kernel; their
    source waits in ``resources["drive_apart"]`` for ``DriveApart``."""

    enabled = Bool(True).tag(config=True)

    def preprocess(self, nb, resources):
        from course_admin.grading.judging import exercise_for

        hidden = {}
        for index, cell in enumerate(nb.cells):
            meta = nbgrader_meta(cell)
            grade_id = meta.get("grade_id", "")
            if (cell.get("cell_type") == "code" and meta.get("grade") and not meta.get("solution")
                    and any(c.grade_id == grade_id and c.check for c in GRADED) and exercise_for(grade_id)
                    and SUBMITS.search(cell_source(cell))):
                hidden[index] = (grade_id, cell_source(cell))
                cell.source = HIDDEN_PLACEHOLDER
        resources["drive_apart"] = hidden
        return nb, resources


class DriveApart(Preprocessor):
    """After execution: drive every set-aside hidden cell apart (``drive_runner``) and put its
    record, or why there is none, into the cell's outputs; the cell's source is put back."""

    enabled = Bool(True).tag(config=True)
    sandbox_spec = Unicode("", help="the submission's sandbox spec (limits, process tree)").tag(config=True)

    def preprocess(self, nb, resources):
        hidden = resources.get("drive_apart") or {}
        if not hidden:
            return nb, resources
        spec = json.loads(Path(self.sandbox_spec).read_text())
        if spec.get("tree"):  # what the notebook's run started and left (a process in a session of its
            ProcessTree.from_spec(spec["tree"]).kill()  # own included) ends before any answer is driven
        workdir = Path(spec["workdir"]).parent / "drive"
        workdir.mkdir(mode=0o700, exist_ok=True)
        (workdir / ".tmp").mkdir(exist_ok=True)
        job = build_job(nb, hidden, workdir, bool(spec["limits"].get("landlock", True)))
        results = run_job(job, Path(self.sandbox_spec), spec)
        by_id = {result.get("grade_id"): result for result in results}
        for index, (grade_id, source) in hidden.items():
            cell = nb.cells[index]
            cell.source = source
            result = by_id.get(grade_id, {"grade_id": grade_id, "notes": ["the grader's run of the answers failed"]})
            cell.outputs = [_record_output(result)]
        return nb, resources


SERVED_CPU_SECONDS = 0.0
"""CPU seconds the runner server spent on this process's submissions (its children are not this
process's, so the worker adds them to a submission's own figure)."""
_SERVER = processes.Helper("course-drive-runner-")
"""This process's ``drive_runner.py serve``, in a folder of its own: it imports torch and IPython
once for every submission this process grades (about 3.5 s of CPU each time otherwise)."""


def _server() -> subprocess.Popen:
    running = _SERVER.alive()
    if running is not None:
        return running
    return _SERVER.start(lambda home: subprocess.Popen(
        [sys.executable, str(RUNNER), "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, env=sandbox.clean_environment(home, "drive-runner"), cwd=str(home)))


def start_early() -> None:
    """Start this process's runner server now where it is not running, without waiting for it: it
    imports torch (6 s of CPU with torch._dynamo) while the submission's notebook runs, rather than
    while the grader waits for the hidden tests' records."""
    _server()


def _through_server(job: dict, spec_path: Path, wall: float) -> list[dict] | None:
    """The results from this process's runner server, or None when it could not give them (it
    is then stopped, and started anew for the next submission)."""
    try:
        server = _server()
        server.stdin.write((json.dumps({"spec": str(spec_path), "job": job}) + "\n").encode())
        server.stdin.flush()
        if not select.select([server.stdout], [], [], wall + 30)[0]:
            raise TimeoutError
        reply = json.loads(server.stdout.readline())
        global SERVED_CPU_SECONDS
        SERVED_CPU_SECONDS += float(reply.get("cpu_seconds", 0.0))
        results = reply["results"]
        if isinstance(results, list):
            return results
    except (OSError, ValueError, KeyError, TypeError, TimeoutError):
        pass
    _SERVER.stop()
    return None


def run_job(job: dict, spec_path: Path, spec: dict) -> list[dict]:
    """Drive ``job`` with ``drive_runner`` in the submission's clean environment (through this
    process's runner server, else a runner of its own): its results, or one result per exercise
    saying why there are none."""
    workdir = Path(job["exercises"][0]["workdir"])
    job = {**job, "environment": sandbox.clean_environment(workdir, spec["token"])}
    wall = float(spec["limits"].get("wall_timeout", 900))
    results = _through_server(job, spec_path, wall)
    if results is not None:
        return results
    try:
        done = subprocess.run([sys.executable, str(RUNNER), str(spec_path)], input=json.dumps(job), text=True,
                              capture_output=True, env=job["environment"], cwd=str(workdir), timeout=wall)
        results = json.loads(done.stdout)["results"]
        if isinstance(results, list):
            return results
        raise ValueError("no results")
    except (subprocess.TimeoutExpired, ValueError, KeyError, TypeError) as error:
        why = f"the grader's run of the answers failed ({type(error).__name__})"
        return [{"grade_id": exercise["grade_id"], "payload": None, "notes": [why]} for exercise in job["exercises"]]


_BLOCKED = re.compile(r"(course_utils[\w.]*) is " + re.escape(NOT_GIVEN))
_SETUP = re.compile(r"your answer uses `(\w+)`, which the notebook's setup cell binds")


def course_code_problems(notebook: dict) -> list[str]:
    """One line per judged exercise that failed because its answer reached for course code it is
    not given (read from the verdicts ``JudgeRecords`` left): for the report's row."""
    problems = []
    for cell in notebook.get("cells", []):
        grade_id = nbgrader_meta(cell).get("grade_id", "")
        text = " ".join(str(o.get("evalue", "")) for o in cell.get("outputs", []) if o.get("output_type") == "error")
        used = sorted(set(_BLOCKED.findall(text)) | {f"`{name}` of the setup cell" for name in _SETUP.findall(text)})
        if grade_id and used:
            problems.append(f"{grade_id}: 0 points, its answer uses course code the exercise does not give it "
                            f"({', '.join(used)}); an instructor who allows it can override the score in formgrader")
    return problems
