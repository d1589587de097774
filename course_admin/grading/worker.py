"""Grading one submission: the task each Dask worker runs (``grade_submission``).

Following nbgrader's advice for parallel grading, each task gets a throwaway nbgrader course
folder and gradebook of its own, built from a template the coordinator made once per
assignment (the gradebook after ``generate_assignment``; no solution notebook is copied). The
task runs nbgrader's own ``Autograde`` and ``GenerateFeedback`` converters in the worker
process (no extra Python start-up per submission) and returns plain data: the score of every
graded cell, the autograded notebook and feedback HTML as bytes, and the problems found.
``grading.autograde`` merges that into the instructor's gradebook.

The student's code runs in a separate kernel process started by ``SandboxKernelManager``
through ``sandbox.py`` (limits, Landlock, no capabilities, its own process tree), with its
current folder set to an empty working folder holding only the student's own notebook and
its stdin, stdout and stderr on /dev/null (never the grader's terminal). ``LimitedExecute``
(in place of nbgrader's ``Execute``) caps the output kept per notebook for every output type,
and when the kernel dies it marks the remaining cells as not run, so the cells that passed
before still count. A watchdog kills the kernel at the wall-clock limit, which the same path
turns into a grade. Every process of the submission is killed (``process_tree.ProcessTree``)
before its result is returned, and the autograded notebook is sanitised (``sanitize``) before
the feedback HTML is made from it and before formgrader can show it. The autograded notebook
and the feedback page are then held under ``Limits.notebook_mb`` (``notebook_size``: metadata,
attachments, sources and cells a submission added beyond it are cut), reported in its problems.
"""

from __future__ import annotations

import json
import os
import resource
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import Execute
from traitlets import Float, Unicode

from course_admin.grading import forked_kernels, sandbox
from course_admin.grading.cells import nbgrader_meta
from course_admin.grading.feedback_page import FeedbackExporter
from course_admin.grading.nbgrader_run import course_config, run_converter
from course_admin.grading.notebook_size import MAX_CELLS, cap_notebook
from course_admin.grading.process_tree import ProcessTree
from course_admin.grading.processes import kill_marked

SANDBOX_SCRIPT = Path(sandbox.__file__).resolve()
TRUNCATED = "... output truncated by the grader: over {mb:.3g} MB of output in this notebook ..."
KERNEL_DIED = "KernelDied"
KERNEL_STOPPED = "KernelStopped"
SKIP_MARKS = "skip_cells.json"
"""File of a grading task's course folder: the assignment's ``skip_cells.marks`` (from its template)."""
_LOCK = threading.Lock()  # nbgrader's converters set os.environ: one grading at a time per process


class SandboxKernelManager(AsyncKernelManager):
    """Starts the kernel with a clean environment and its working folder as current folder,
    forked from this process's kernel zygote (``forked_kernels``), else through ``sandbox.py
    kernel SPEC -- ...``; either way in the sandbox of its spec, which records its pid."""

    spec = Unicode("", help="path of the sandbox spec JSON (workdir, limits, status file, token)").tag(config=True)

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        spec = json.loads(Path(self.spec).read_text())
        workdir = Path(spec["workdir"])
        kw["env"] = sandbox.clean_environment(workdir, spec["token"], kw.get("env"))
        kw["cwd"] = str(workdir)
        # Its own stdin/stdout/stderr: no descriptor of the grader's terminal (ipykernel keeps
        # a copy of the original stdout, which a child could write to or read keys from).
        kw["stdin"] = kw["stdout"] = kw["stderr"] = subprocess.DEVNULL
        forked = forked_kernels.start(self.spec, kernel_cmd, kw["env"])
        if forked is not None:  # what LocalProvisioner.launch_kernel records of a process it started
            provisioner = self.provisioner
            provisioner.process, provisioner.pid, provisioner.pgid = forked, forked.pid, forked.pid
            provisioner.cwd = kw["cwd"]
            self._reconcile_connection_info(provisioner.connection_info)
            return
        command = [sys.executable, str(SANDBOX_SCRIPT), "kernel", self.spec, "--", *kernel_cmd]
        await super()._async_launch_kernel(command, **kw)


class LimitedExecute(Execute):
    """nbgrader's ``Execute`` with an output cap and a kernel that may die: the cells after a
    kernel death get an error output instead of stopping the whole grading."""

    output_mb = Float(2.0, help="output kept per notebook, in MB").tag(config=True)
    sandbox_spec = Unicode("", help="sandbox spec for SandboxKernelManager").tag(config=True)

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("kernel_manager_class", SandboxKernelManager)
        super().__init__(*args, **kwargs)

    def create_kernel_manager(self):
        km = super().create_kernel_manager()
        if isinstance(km, SandboxKernelManager):
            km.spec = self.sandbox_spec
        return km

    def preprocess(self, nb, resources=None, km=None):
        self._output_bytes, self._dead_at, self._truncated = 0, None, False
        nb, resources = super().preprocess(nb, resources, km)
        enforce_output_budget(nb, int(self.output_mb * 2**20))
        return nb, resources

    def preprocess_cell(self, cell, resources, index):
        if index in (resources or {}).get("skip_cells", ()):  # given code no graded cell needs (skip_cells)
            return cell, resources
        if self._dead_at is not None:
            if cell.cell_type == "code":
                cell.outputs = [_error(KERNEL_DIED, f"not run: the kernel died in cell {self._dead_at + 1}")]
            return cell, resources
        try:
            return super().preprocess_cell(cell, resources, index)
        except DeadKernelError:
            self._dead_at = index
            cell.outputs.append(_error(KERNEL_DIED, "the kernel died while running this cell (exit, crash or out of memory)"))
            return cell, self.resources
        except CellTimeoutError:  # still busy after the interrupt: stop it rather than wait for every cell
            self._dead_at = index
            stop_kernel(self.sandbox_spec)
            cell.outputs.append(_error(KERNEL_STOPPED, "the cell ran over its time limit and ignored the interrupt"))
            return cell, self.resources

    def _spend(self, size: int) -> bool:
        """Count ``size`` bytes of output against the budget; False (and a note, once) when
        they do not fit."""
        budget = int(self.output_mb * 2**20)
        if self._output_bytes + size <= budget:
            self._output_bytes += size
            return True
        self._truncated = True
        return False

    def output(self, outs, msg, display_id, cell_index):
        kind, content = msg.get("msg_type"), msg.get("content", {})
        if not self._spend(_size(content)):
            _add_note(outs, self.output_mb)
            # nbgrader grades a test cell by its first error, stderr stream or execute_result:
            # over the budget the first of these is kept, shortened (else flooding could pass a
            # failing test), and any later one dropped (else they could fill the memory).
            if not _is_verdict(kind, content) or any(_is_verdict(o.get("output_type"), o) for o in outs):
                return None
            msg = {**msg, "content": _shorten(kind, content)}
        return super().output(outs, msg, display_id, cell_index)

    def _update_display_id(self, display_id, msg):
        """``update_display_data`` (and a new display with an existing id) rewrite earlier
        outputs in place: the new data pays for every output it rewrites."""
        cells = self._display_id_map.get(display_id, {})
        targets = sum(len(indices) for indices in cells.values())
        if targets and not self._spend(targets * _size(msg.get("content", {}))):
            _add_note(self.nb.cells[min(cells)].outputs, self.output_mb)  # with the first output it would rewrite
            return None
        return super()._update_display_id(display_id, msg)


TRUNCATED_MARK = "output truncated by the grader"


SHORT = 2000  # characters kept of each text in a shortened output


def _is_verdict(kind, output) -> bool:
    """Whether an output decides a test cell's grade in nbgrader (``utils.determine_grade``):
    an error or a stderr stream fails it, an execute_result's number is partial credit."""
    return kind in ("error", "execute_result") or kind == "stream" and output.get("name") == "stderr"


def _add_note(outs: list, mb: float) -> None:
    """The truncation note, once per cell, on stdout (a stderr output would fail a test cell)."""
    if not any(o.get("output_type") == "stream" and TRUNCATED_MARK in _text(o) for o in outs):
        outs.append(NotebookNode(output_type="stream", name="stdout", text=TRUNCATED.format(mb=mb) + "\n"))


def _shorten(kind: str, content: dict) -> dict:
    """A small copy of an error or execute_result message's ``content``."""
    def cut(text) -> str:
        text = text if isinstance(text, str) else str(text)
        return text if len(text) <= SHORT else text[:SHORT] + " ... [shortened by the grader]"

    if kind == "stream":
        return {**content, "text": cut(_text(content))}
    if kind == "error":
        trace = content.get("traceback") if isinstance(content.get("traceback"), list) else []
        return {**{k: v for k, v in content.items() if k not in ("ename", "evalue", "traceback")},
                "ename": cut(content.get("ename", ""))[:200], "evalue": cut(content.get("evalue", "")),
                "traceback": [cut(line) for line in trace[-20:]]}
    data = content.get("data") if isinstance(content.get("data"), dict) else {}
    return {**{k: v for k, v in content.items() if k not in ("data", "metadata")},
            "data": {"text/plain": cut(data.get("text/plain", ""))}, "metadata": {}}


def _size(content) -> int:
    try:
        return len(json.dumps(content, default=str))
    except (TypeError, ValueError, RecursionError):
        return 2**31


def enforce_output_budget(nb, budget: int) -> bool:
    """Make every output of ``nb`` together fit in ``budget`` bytes (JSON size), whatever its
    type (stream, display_data, execute_result, error with its ename, evalue and traceback,
    updated displays): outputs past the budget are replaced by one note per cell, except the
    cell's first verdict (error, stderr or execute_result), kept shortened. Returns whether
    anything was cut. The last line of defence behind ``LimitedExecute``'s own accounting."""
    spent, cut = 0, False
    for cell in nb.cells:
        if cell.get("cell_type") != "code":
            continue
        kept = []
        for out in cell.get("outputs", []):
            kind = out.get("output_type")
            if kind == "stream" and TRUNCATED_MARK in _text(out):
                kept.append(out)
                continue
            size = _size(out)
            if spent + size <= budget:
                spent += size
                kept.append(out)
                continue
            cut = True
            _add_note(kept, budget / 2**20)
            if _is_verdict(kind, out) and not any(_is_verdict(o.get("output_type"), o) for o in kept):
                kept.append(NotebookNode(_shorten(kind, out)))
        cell.outputs = kept
    return cut


def stop_kernel(spec_path: str) -> None:
    """Kill the sandboxed kernel described by ``spec_path`` and everything it started."""
    ProcessTree.from_spec(json.loads(Path(spec_path).read_text())["tree"]).kill()


def _error(name: str, message: str) -> NotebookNode:
    return NotebookNode(output_type="error", ename=name, evalue=message, traceback=[f"{name}: {message}"])


# --------------------------------------------------------------------------------------
# One submission


def _config(course: Path, limits: dict, spec: Path, feedback: str = "pass_fail"):
    """``course_config`` with the sandboxed executor and ``limits``, and the feedback page
    showing hidden tests as the ``feedback`` policy says (``feedback_policy``)."""
    from nbconvert.preprocessors import ClearMetadataPreprocessor
    from nbgrader.preprocessors import AssignLatePenalties, CheckCellMetadata, IgnorePattern, LimitOutput, SaveAutoGrades

    config = course_config(course)
    config.Execute.timeout = int(limits["cell_timeout"])
    config.Execute.interrupt_on_timeout = True
    # Every output is in hand once the last cell has run: kill the kernel rather than wait for
    # its graceful exit (measured 0.2 s of kernel CPU and 0.2 s of wall time per submission).
    config.Execute.shutdown_kernel = "immediate"
    config.LimitedExecute.output_mb = float(limits["output_mb"])
    config.LimitedExecute.sandbox_spec = str(spec)
    from course_admin.grading.sanitize import SanitizeNotebook, feedback_config

    feedback_config(config)  # the feedback HTML: nothing the student wrote may run
    config.GenerateFeedback.exporter_class = FeedbackExporter
    from course_admin.grading.feedback_policy import policy_config

    policy_config(config, feedback)  # ...and no hidden case shown unless the instructor says so
    from course_admin.grading.drive_apart import DriveApart, HideHiddenDrives
    from course_admin.grading.judging import JudgeRecords

    config.DriveApart.sandbox_spec = str(spec)
    from course_admin.grading.skip_cells import SkipGivenCells

    config.SkipGivenCells.marks_file = str(course / SKIP_MARKS) if limits.get("skip_given", True) else ""
    config.Autograde.autograde_preprocessors = [
        # the hidden tests do not run in the kernel, which holds the whole course package, but
        # apart, where only the course code each exercise gives its answer exists
        HideHiddenDrives,
        SkipGivenCells,  # after the hidden cells are set aside: what runs in the kernel then needs less
        LimitedExecute,
        DriveApart,
        JudgeRecords,  # the hidden tests' records, judged here, where the student's code cannot reach
        IgnorePattern,
        ClearMetadataPreprocessor,
        LimitOutput,
        SaveAutoGrades,
        AssignLatePenalties,
        CheckCellMetadata,
        SanitizeNotebook,  # last: formgrader shows the autograded notebook on the Jupyter server's origin
    ]
    return config


def _cell_label(cell: dict, index: int) -> str:
    grade_id = nbgrader_meta(cell).get("grade_id")
    return f"cell {index + 1} ({grade_id})" if grade_id else f"cell {index + 1}"


def _text(output: dict) -> str:
    text = output.get("text", "")
    return "".join(text) if isinstance(text, list) else text


def notebook_problems(notebook: dict, limits: dict) -> list[str]:
    """Problems worth a line in the report, read from an executed notebook's outputs:
    timeouts, memory errors, a dead kernel, truncated output."""
    problems, dead, truncated = [], None, False
    for index, cell in enumerate(notebook.get("cells", [])):
        for output in cell.get("outputs", []):
            name = output.get("ename") if output.get("output_type") == "error" else None
            if name == "CellTimeoutError":
                problems.append(
                    f"{_cell_label(cell, index)} ran over the {limits['cell_timeout']} s cell time limit and was interrupted"
                )
            elif name == "MemoryError":
                problems.append(f"{_cell_label(cell, index)} ran out of memory (limit {limits['memory_mb']} MB)")
            elif name == KERNEL_STOPPED:
                problems.append(
                    f"{_cell_label(cell, index)} ran over the {limits['cell_timeout']} s cell time limit and ignored the"
                    " interrupt: the kernel was stopped and later cells were not run"
                )
            elif name == KERNEL_DIED and dead is None and "not run" not in output.get("evalue", ""):
                dead = index
                problems.append(
                    f"the kernel died in {_cell_label(cell, index)} (exit, crash or out of memory); later cells were not run"
                )
            elif output.get("output_type") == "stream" and TRUNCATED_MARK in _text(output) and not truncated:
                truncated = True
                problems.append(f"more than {limits['output_mb']:g} MB of output: the rest was dropped")
    return problems


@dataclass
class GradingJob:
    """One submission to grade, as ``grade_submission`` gets it (on a Dask worker, pickled).

    notebook: the repaired submission's bytes; template: {relative path: bytes} of a course folder
    after ``generate_assignment``; limits: ``sandbox.Limits.as_dict()``; key: the submission's
    regrade key (``regrade_index``); feedback: the feedback policy (``pass_fail``, ``hint`` or
    ``full``, see ``feedback_policy``)."""

    student: str
    assignment: str
    notebook: bytes
    template: dict[str, bytes]
    limits: dict
    key: str | None = None
    feedback: str = "pass_fail"


@dataclass
class GradingResult:
    """What grading one submission gave, as plain data (``autograder`` merges it into the gradebook).

    grades: {grade id: nbgrader's auto score, None where a person must grade}; comments: {grade
    id: nbgrader's auto comment}; autograded, feedback: the autograded notebook and the feedback
    page (bytes), None when not made; sandbox: the isolation the kernel got, and what it missed;
    seconds, cpu_seconds: the task's wall and CPU time (kernels and helpers included); worker:
    ``host:pid``; epoch_span: (start, stop), s since the epoch; retried: nbgrader's first error
    when it had to run twice; task_failed: the task failed outright (0 for this run, graded again
    at the next); graded_here: graded in the coordinator's process (no workers left, or no
    scheduler)."""

    student: str
    assignment: str
    key: str | None = None
    grades: dict[str, float | None] = field(default_factory=dict)
    comments: dict[str, str | None] = field(default_factory=dict)
    autograded: bytes | None = None
    feedback: bytes | None = None
    problems: list[str] = field(default_factory=list)
    sandbox: list[str] = field(default_factory=list)
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    worker: str | None = None
    epoch_span: tuple[float | None, float | None] = (None, None)
    retried: str = ""
    task_failed: bool = False
    graded_here: bool = False

    @classmethod
    def failed(cls, job: GradingJob, error: BaseException) -> GradingResult:
        """The result of a task that failed outright (its worker lost too often, an error in the
        grader): 0 for this run, with the reason, and ``task_failed``, so that ``autograde`` does
        not record it as graded and the next run grades it again."""
        problem = (f"the grading task failed ({type(error).__name__}: {str(error)[:200]}); "
                   "run course autograde again to grade it")
        return cls(job.student, job.assignment, job.key, problems=[problem], task_failed=True)


def grade_submission(job: GradingJob) -> GradingResult:
    """Grade one submission in a throwaway course folder; the Dask task.

    Never raises for a bad notebook: what went wrong is in the result's ``problems``.
    """
    started, cpu_started = time.perf_counter(), _cpu()
    student, assignment, limits = job.student, job.assignment, job.limits
    result = GradingResult(student, assignment, job.key, worker=f"{os.uname().nodename}:{os.getpid()}")
    root = Path(tempfile.mkdtemp(prefix="course-grade-"))
    token = secrets.token_hex(8)
    watchdog = tree = None
    try:
        with _LOCK, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SQLAlchemy warnings from nbgrader's own autograde
            # The processes this submission needs import their libraries on their own, beside what
            # the grader does before it needs them (the first submission of a process waited 4 s
            # for the zygote, then 4 to 6 s for the runner server).
            forked_kernels.start_early()
            from course_admin.exercises import TUTORIALS

            if assignment in TUTORIALS.values():  # the course's: its hidden tests are driven apart
                from course_admin.grading import drive_apart

                drive_apart.start_early()
            course, work, control = root / "course", root / "work", root / "control"
            for folder in (course, work, control):
                folder.mkdir(mode=0o700)
            for relative, content in job.template.items():
                path = course / relative
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(content)
            (course / "source" / assignment).mkdir(parents=True, exist_ok=True)
            submitted = course / "submitted" / student / assignment
            submitted.mkdir(parents=True)
            (submitted / f"{assignment}.ipynb").write_bytes(job.notebook)
            (work / f"{assignment}.ipynb").write_bytes(job.notebook)  # the student's own copy, nothing else
            spec = control / "sandbox.json"
            status = control / "status.json"
            # Every process the kernel starts, in any session and with any environment, is in
            # this tree; it is killed before the result is reported (see process_tree.ProcessTree).
            tree = ProcessTree.create(token)
            spec.write_text(json.dumps({"workdir": str(work), "limits": limits, "status": str(status), "token": token,
                                        "tree": tree.as_spec()}))
            config = _config(course, limits, spec, job.feedback)

            stopped = threading.Event()

            def stop() -> None:
                stopped.set()
                stop_kernel(str(spec))

            from nbgrader.converters import Autograde

            autograded = course / "autograded" / student / assignment / f"{assignment}.ipynb"
            for attempt in (1, 2):
                watchdog = threading.Timer(float(limits["wall_timeout"]), stop)
                watchdog.daemon = True
                watchdog.start()
                outcome = run_converter(Autograde, config, assignment, student)
                watchdog.cancel()
                if outcome.get("success") or autograded.exists() or stopped.is_set() or attempt == 2:
                    break
                # nbgrader failed before it ran the notebook (seen once, under heavy load): the
                # grader's trouble, not the student's. Kill what is left and try once more.
                result.retried = grader_error(outcome)
                tree.kill()
            if stopped.is_set():
                result.problems.append(
                    f"stopped at the {limits['wall_timeout']} s limit for one submission; cells not run by then score 0"
                )
            if status.exists():
                info = json.loads(status.read_text() or "{}")
                result.sandbox = info.get("applied", []) + [f"missing: {note}" for note in info.get("missing", [])]
            cap = int(float(limits.get("notebook_mb", sandbox.Limits.notebook_mb)) * 2**20)
            if autograded.exists():
                result.autograded, notes = _capped(autograded, cap, MAX_CELLS)  # sanitised by SanitizeNotebook
                result.problems += notes
                judged = json.loads(result.autograded)
                found = notebook_problems(judged, limits)
                result.problems += [p for p in found if not (stopped.is_set() and "kernel died" in p)]
                from course_admin.grading.drive_apart import course_code_problems

                result.problems += course_code_problems(judged)
            if not outcome.get("success"):
                result.problems.append("the grader failed: " + grader_error(outcome))
            _read_grades(course, assignment, student, result)
            if result.autograded is not None:
                result.feedback = _feedback(config, course, assignment, student, cap, result)
    except Exception as error:  # a broken task must still give a grade and a reason
        result.problems.append(f"the grader failed: {type(error).__name__}: {str(error)[:200]}")
    finally:
        if watchdog is not None:
            watchdog.cancel()
        if tree is not None:
            tree.close()  # kills what is left of the submission, then removes the tree
        else:
            kill_marked(token)
        shutil.rmtree(root, ignore_errors=True)
        forked_kernels.collect()  # the forked kernels' CPU, once they are gone
    result.seconds = time.perf_counter() - started
    result.cpu_seconds = _cpu() - cpu_started
    stopped = time.time()
    result.epoch_span = (stopped - result.seconds, stopped)  # (start, stop), s since the epoch: the run's timeline
    return result


def _capped(autograded: Path, cap: int, max_cells: int) -> tuple[bytes, list[str]]:
    """The autograded notebook within ``cap`` bytes and ``max_cells`` cells (``cap_notebook``),
    written back where formgrader and ``GenerateFeedback`` read it, and what was cut."""
    content, notes = cap_notebook(autograded.read_bytes(), cap, max_cells)
    if notes:
        autograded.write_bytes(content)
    return content, notes


def _feedback(config, course: Path, assignment: str, student: str, cap: int, result: GradingResult) -> bytes | None:
    """The feedback HTML, at most ``cap`` bytes. A page over it (a cell, and a highlighted line,
    cost more in HTML than in the notebook) is made again once from the autograded notebook
    shrunk in proportion; still over, it is not kept. Either way the problems say so."""
    from nbgrader.converters import GenerateFeedback

    html = course / "feedback" / student / assignment / f"{assignment}.html"
    autograded = course / "autograded" / student / assignment / f"{assignment}.ipynb"
    mb = cap / 2**20
    for attempt in (1, 2):
        if not run_converter(GenerateFeedback, config, assignment, student).get("success") or not html.exists():
            return None
        page = html.read_bytes()
        if len(page) <= cap:
            return page
        over = f"the feedback page was {len(page) / 2**20:.3g} MB, over the {mb:.3g} MB cap"
        if attempt == 2:
            break
        ratio = cap / len(page) * 0.8  # once shrunk, the page keeps about its size relative to the notebook
        content, notes = _capped(autograded, int(len(result.autograded) * ratio), max(1, int(MAX_CELLS * ratio)))
        if not notes:
            break
        result.autograded = content
        result.problems += [f"{over}: {note}" for note in notes]
    result.problems.append(f"{over}: not kept")
    return None


def _cpu() -> float:
    """CPU seconds of this process plus its finished children (kernels launched through
    ``sandbox.py``), the kernels forked from its zygote and what the drive runner server spent
    driving its submissions apart."""
    from course_admin.grading import drive_apart

    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (time.process_time() + children.ru_utime + children.ru_stime + forked_kernels.CPU_SECONDS
            + drive_apart.SERVED_CPU_SECONDS)


GENERIC_ERRORS = ("Please see the", "There was an error processing assignment", "NbGraderException")


def grader_error(outcome: dict) -> str:
    """The most specific line of a failed nbgrader run: the first error in its log that is not
    nbgrader's generic "see the traceback above", else the traceback's last error line."""
    for text in (outcome.get("log") or "", outcome.get("error") or ""):
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        errors = [line for line in lines if ("Error" in line or "ERROR" in line) and not any(g in line for g in GENERIC_ERRORS)]
        if errors:
            return errors[0][:300]
    lines = [line.strip() for line in (outcome.get("error") or outcome.get("log") or "").splitlines() if line.strip()]
    return (lines or ["unknown error"])[-1][:300]


def _read_grades(course: Path, assignment: str, student: str, result: GradingResult) -> None:
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        try:
            submission = gradebook.find_submission(assignment, student)
        except MissingEntry:
            return
        for notebook in submission.notebooks:
            for grade in notebook.grades:
                result.grades[grade.name] = None if grade.auto_score is None else float(grade.auto_score)
            for comment in notebook.comments:
                result.comments[comment.name] = comment.auto_comment
