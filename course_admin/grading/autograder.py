"""Autograding a class: ``course autograde``.

``autograde(folder)`` reads a folder of submissions (``intake``), makes each gradable against
the released notebook (``notebook_repair``), grades them in parallel (Dask, ``dispatch``), each
in its own throwaway course folder with its kernel sandboxed (``worker``, ``sandbox``), merges
the results into the instructor's gradebook and writes ``grades.csv``, per-student feedback HTML
and ``summary.md`` (and ``summary.html``: a histogram per exercise, the flagged submissions and
the problems). A submission whose content, instructor notebook, limits and course package
are unchanged since the last run is not graded again.

The instructor's nbgrader course folder is ``grading/`` at the repository root (out of git).
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import time
import warnings
from dataclasses import dataclass, field
from datetime import UTC
from pathlib import Path
from typing import TYPE_CHECKING

from course_admin.grading import late
from course_admin.grading.cells import nbgrader_meta
from course_admin.grading.class_list import identify_students, missing_students
from course_admin.grading.escaping import csv_cell, markdown_cell, plain_text
from course_admin.grading.flags import flags, tutorial_of
from course_admin.grading.intake import IntakeLimits, Submission, collect, grade_ids
from course_admin.grading.nbgrader_run import tools_on_path
from course_admin.grading.notebook_repair import repair
from course_admin.grading.regrade_index import load_index, save_index, submission_key
from course_admin.grading.sandbox import Limits
from course_admin.grading.student_notebooks import assignments, fresh, generate_here, generated
from course_admin.grading.summary_html import GRADED_HERE, summary_html
from course_utils.paths import COURSE_DIR, SOLUTIONS

if TYPE_CHECKING:  # the worker module (nbgrader, jupyter_client) loads only when there is something to grade
    from course_admin.grading.worker import GradingResult


@dataclass
class Report:
    """What ``autograde`` did: every submission (graded now, unchanged since the last run, or
    not gradable), the grades CSV, the feedback folder and the summary file."""

    submissions: list[Submission]
    csv_path: Path
    feedback_dir: Path
    summary_path: Path | None = None
    graded_now: int = 0
    unchanged: int = 0
    task_cpu_seconds: dict[str, float] = field(default_factory=dict)
    task_spans: dict[str, tuple] = field(default_factory=dict)  # {student/assignment: (worker, start, stop)}, epoch s
    sandbox: list[str] = field(default_factory=list)  # what isolation the kernels got (or missed) in this run
    grading_seconds: float = 0.0  # wall time from the tasks sent (cluster up) to the last result merged
    retried: list[str] = field(default_factory=list)  # graded on a second attempt: "student: the grader's first error"
    graded_here: list[str] = field(default_factory=list)  # graded in this process: no workers left, or no scheduler
    superseded: list = field(default_factory=list)  # earlier uploads not graded (``class_list.Superseded``)
    roster: object = None  # the ``roster.Roster`` the run matched against, if any
    missing: list[Submission] = field(default_factory=list)  # roster students' "no submission" rows
    term: object = None  # the ``term.Term`` whose due dates and late policy the rows show
    exports: list[Path] = field(default_factory=list)  # the LMS import files written (``lms_export``)
    similar: list = field(default_factory=list)  # ``similarity.Pair``s at or above the term's threshold
    order: dict[str, list[str]] = field(default_factory=dict)  # per assignment, its graded cells in notebook order
    similarity_seconds: float = 0.0  # wall time the similarity report took
    term_notes: list[str] = field(default_factory=list)  # what in the term file or times matched nobody

    def exercise_table(self) -> list[dict]:
        """Per graded cell: points, mean, min, max, and how many submissions fell short."""
        rows = []
        graded = [s for s in self.submissions if s.assignment is not None]
        assignment_of = {n: s.assignment for s in graded for n in s.grades}
        seen = {s.assignment for s in graded}  # the course's order (the released notebooks, numbered), then any other
        tutorials = [name for name in self.order if name in seen] + sorted(seen - set(self.order))

        def place(name: str) -> tuple:  # tutorial order, then the notebook's order (alphabetical if unknown)
            cells = self.order.get(assignment_of[name], [])
            return (tutorials.index(assignment_of[name]), cells.index(name) if name in cells else len(cells), name)

        for name in sorted({n for s in graded for n in s.grades}, key=place):
            scores = [s.grades[name] for s in graded if name in s.grades and name not in s.awaiting]
            awaiting = sum(name in s.grades and name in s.awaiting for s in graded)
            top = max(s.grade_max.get(name, 0.0) for s in graded if name in s.grades)
            rows.append(
                {
                    "exercise": name,
                    "assignment": assignment_of[name],
                    "points": top,
                    "n": len(scores),
                    "mean": sum(scores) / len(scores) if scores else 0.0,
                    "min": min(scores, default=0.0),
                    "max": max(scores, default=0.0),
                    "failed": sum(score < top for score in scores),
                    "awaiting": awaiting,  # written answers formgrader has not graded yet: not "short"
                }
            )
        return rows

    def summary(self) -> str:
        """The run for the terminal: every submission, then every exercise. Names, sources and
        problems come from students' files: control characters are shown escaped, never sent."""
        lines = [
            f"Graded {sum(s.assignment is not None for s in self.submissions)} submissions "
            f"({self.graded_now} graded now, {self.unchanged} unchanged since the last run); grades: {self.csv_path}"
        ]
        if self.sandbox:
            lines.append(f"Kernel isolation: {'; '.join(self.sandbox)}")
        if self.graded_here:
            lines.append(f"{GRADED_HERE}: {plain_text(', '.join(self.graded_here))}")
        for s in _in_order(self.submissions):
            note = f"  ({plain_text('; '.join(s.problems))})" if s.problems else ""
            lines.append(f"  {plain_text(s.name):<20} {s.assignment or '-':<22} {s.score_text}{note}")
        for s in _in_order(self.missing):
            lines.append(f"  {plain_text(s.name):<20} {s.missing_assignment:<22} {s.score_text}  (no submission)")
        table = self.exercise_table()
        if table:
            lines.append("")
            lines.append(f"  {'exercise':<28} {'points':>6} {'mean':>6} {'min':>5} {'max':>5} {'failed':>6}")
            for row in table:
                lines.append(
                    f"  {row['exercise']:<28} {row['points']:>6g} {row['mean']:>6.2f} {row['min']:>5g} {row['max']:>5g}"
                    f" {row['failed']:>3}/{row['n']}"
                    + (f"  {row['awaiting']} awaiting manual grading" if row["awaiting"] else "")
                )
        return "\n".join(lines)

    def markdown(self) -> str:
        """The summary as a markdown file: exercises, then every submission with a problem
        (student text escaped, so no name or message can break or inject into the tables)."""
        lines = ["# Autograding summary", ""]
        if self.sandbox:
            lines += [f"Kernel isolation: {'; '.join(self.sandbox)}", ""]
        if self.graded_here:
            lines += [f"{GRADED_HERE}: " + ", ".join(markdown_cell(name) for name in self.graded_here), ""]
        if self.retried:
            lines += ["Graded on a second attempt (nbgrader failed before running the notebook the first time): "
                      + "; ".join(markdown_cell(r) for r in self.retried), ""]
        lines += ["| exercise | points | mean | min | max | failed | awaiting manual grading |",
                  "|---|---|---|---|---|---|---|"]
        for row in self.exercise_table():
            if not row["n"]:  # only written answers nobody has graded yet
                cells = [row["exercise"], f"{row['points']:g}", "-", "-", "-"]
                lines.append("| " + " | ".join(cells) + f" | - | {row['awaiting']} |")
                continue
            cells = [row["exercise"], f"{row['points']:g}", f"{row['mean']:.2f}", f"{row['min']:g}", f"{row['max']:g}"]
            lines.append("| " + " | ".join(cells) + f" | {row['failed']}/{row['n']} | {row['awaiting'] or ''} |")
        lines += ["", "| student | assignment | score | problems |", "|---|---|---|---|"]
        for s in _in_order(self.submissions):
            if s.problems:
                cells = [markdown_cell(s.name), s.assignment or "-", s.score_text, markdown_cell("; ".join(s.problems))]
                lines.append("| " + " | ".join(cells) + " |")
        flagged = [s for s in _in_order(self.submissions) if s.flags]
        if flagged:
            lines += ["", "## Flagged for review", "",
                      "Code in these submissions does what no answer needs (patching modules or objects' methods, "
                      "reaching frames or IPython's hooks, importing the course's internals or course code not listed "
                      "for the exercise, rigged comparisons). The grades above "
                      "were judged outside the students' kernels and do not depend on it; look before trusting.", "",
                      "| student | assignment | score | what the code does |", "|---|---|---|---|"]
            for s in flagged:
                cells = [markdown_cell(s.name), s.assignment or "-", s.score_text, markdown_cell("; ".join(s.flags))]
                lines.append("| " + " | ".join(cells) + " |")
        if self.term_notes:
            lines += ["", "## Term file", ""] + [f"- {markdown_cell(note)}" for note in self.term_notes]
        late = [s for s in _in_order(self.submissions)
                if s.lateness is not None and (s.lateness.penalty_percent or s.lateness.note)]
        if late:
            lines += ["", "## Lateness", "", "| student | assignment | raw | late by | penalty | final | note |",
                      "|---|---|---|---|---|---|---|"]
            for s in late:
                cells = [markdown_cell(s.name), s.assignment or "-", f"{s.score:g}", s.lateness.late_text(),
                         f"{s.lateness.penalty_percent:g}%", f"{s.lateness.final:g}", markdown_cell(s.lateness.note)]
                lines.append("| " + " | ".join(cells) + " |")
        if self.similar:
            lines += ["", "## Similar answers", "",
                      "Pairs whose answers to one exercise share much of their code once the given code is removed,"
                      " and answers that share as much with a module of the course package (\"course package: …\")"
                      " (similarity.html shows them side by side). This never changes a grade.", "",
                      "| assignment | exercise | pair | shares |", "|---|---|---|---|"]
            for p in self.similar:  # the pair in one cell: a student's own cell in these tables is a problem row
                cells = [p.assignment, markdown_cell(p.exercise), f"{markdown_cell(p.student_a)} ↔ {markdown_cell(p.student_b)}",
                         f"{p.share_a:.0%} / {p.share_b:.0%}"]
                lines.append("| " + " | ".join(cells) + " |")
        if self.exports:
            lines += ["", "LMS imports: " + ", ".join(markdown_cell(path.name) for path in self.exports)
                      + " (students not on the roster are not in them)."]
        lines += self.class_list_markdown()
        return "\n".join(lines) + "\n"

    def class_list_markdown(self) -> list[str]:
        """Against the roster: who handed in nothing, which submissions match nobody, and the
        earlier uploads that were not graded."""
        lines = []
        if self.roster is not None:
            lines += ["", "## Class list", "",
                      f"Roster: {markdown_cell(str(self.roster.path))} ({len(self.roster.entries)} students, "
                      f"{self.roster.source} export).", "",
                      "### No submission", ""]
            lines += [f"- {markdown_cell(s.name)} ({markdown_cell(s.display_name)}): {s.missing_assignment}"
                      for s in _in_order(self.missing)] or ["None."]
            strangers = [s for s in _in_order(self.submissions) if s.matched_by == "not on the roster"]
            lines += ["", "### Not on the roster (graded, listed apart)", ""]
            lines += [f"- {markdown_cell(s.name)} ({markdown_cell(s.source)}): {s.assignment or '-'} "
                      f"{s.score:g}/{s.max_score:g}" for s in strangers] or ["None."]
        if self.superseded:
            lines += ["", "## Earlier uploads, not graded", "", "| student | assignment | upload | graded instead |",
                      "|---|---|---|---|"]
            lines += [f"| {markdown_cell(d.student)} | {d.assignment} | {markdown_cell(d.source)} | {markdown_cell(d.graded)} |"
                      for d in self.superseded]
        return lines


def _in_order(submissions: list[Submission]) -> list[Submission]:
    return sorted(submissions, key=lambda s: (s.name, s.assignment or s.missing_assignment, s.student, s.source))


def _template(wanted: list[str], names: list[str], source: Path) -> dict[str, dict[str, bytes]]:
    """Per assignment in ``wanted``, the files a grading task's throwaway course folder starts
    from: a gradebook after ``generate_assignment`` (no students, no solution notebook), and the
    given cells grading may skip (``skip_cells.marks`` of the instructor's notebook).

    The gradebook is the one generated for all of ``names`` where this process has it already
    (a new course folder's, ``generate_here``): nbgrader's autograde reads only its own
    assignment from it, and a second generation per assignment is not paid."""
    from course_admin.grading.skip_cells import marks
    from course_admin.grading.worker import SKIP_MARKS

    gradebook = fresh(names if generated(names, source) else wanted, source)["gradebook.db"]
    return {name: {"gradebook.db": gradebook,
                   SKIP_MARKS: json.dumps(marks(json.loads((source / f"{name}.ipynb").read_text()))).encode()}
            for name in wanted}


def _merge(gradebook, course_dir: Path, sub: Submission, result: GradingResult) -> None:
    """Write one task's result into the instructor's gradebook and course folder, the way
    ``nbgrader autograde`` would have: grades (manual scores kept), comments, the submitted
    and autograded notebooks and the feedback HTML."""
    gradebook.update_or_create_student(sub.student)
    with warnings.catch_warnings():  # nbgrader's own autograde triggers the same SQLAlchemy warnings
        warnings.simplefilter("ignore")
        record = gradebook.update_or_create_submission(sub.assignment, sub.student)
    graded = result.autograded is not None
    for notebook in record.notebooks:
        for grade in notebook.grades:
            if graded:
                auto = result.grades.get(grade.name)
            else:  # the notebook could not be run at all: autograded cells score 0
                auto = 0.0 if grade.cell.cell_type == "code" else None
            grade.auto_score = auto
            grade.needs_manual_grade = grade.manual_score is not None or auto is None
        for comment in notebook.comments:
            comment.auto_comment = result.comments.get(comment.name)
    gradebook.db.commit()
    files = {
        course_dir / "submitted" / sub.student / sub.assignment / f"{sub.assignment}.ipynb": sub.content,
        course_dir / "autograded" / sub.student / sub.assignment / f"{sub.assignment}.ipynb": result.autograded,
        course_dir / "feedback" / sub.student / sub.assignment / f"{sub.assignment}.html": result.feedback,
    }
    for path, content in files.items():
        if path.parent.exists():
            shutil.rmtree(path.parent)
        if content is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)


def autograde(
    folder: str | os.PathLike,
    out: str | os.PathLike = "grades",
    course_dir: Path = COURSE_DIR,
    *,
    source: str | os.PathLike = SOLUTIONS,
    workers: int | None = None,
    scheduler: str | None = None,
    limits: Limits | None = None,
    intake: IntakeLimits | None = None,
    force: bool = False,
    progress: bool = True,
    roster: str | os.PathLike | None = None,
    term: str | os.PathLike | None = None,
    times: list[str] | None = None,
) -> Report:
    """Autograde every submission in ``folder``; write ``out/grades.csv``, ``out/feedback/``
    and ``out/summary.md`` with ``out/summary.html``.

    Submissions are graded in parallel with Dask (``dispatch.grade_all``): ``workers``
    local worker processes (default: one per core; 0 grades in this process), or the cluster
    at ``scheduler``. Each is graded in its own throwaway course folder under ``limits``
    (``sandbox.Limits``; what is read from the folder: ``intake``,
    ``intake.IntakeLimits``) and merged into the gradebook of ``course_dir``, so nbgrader's own
    commands (export, generate_feedback, formgrader) see every grade. A submission whose
    content, instructor notebook and limits are unchanged since the last run in
    ``course_dir`` is not graded again (``force`` re-grades all). ``source`` is the folder of
    instructor notebooks (default: ``solutions/``).

    ``roster``: the class list's CSV (``roster.read_roster``: Canvas's gradebook export,
    Moodle's grading worksheet or a plain CSV). Submissions in Canvas's and Moodle's download
    layouts are read by the ids in their names (``lms_layout``), matched to the roster
    (``class_list``), only the latest upload per student and tutorial is graded, and roster
    students with no submission get a row with 0 and "no submission".

    ``term``: the term file (``term.read_term``: due dates, extensions, the late policy, the
    feedback policy); ``times``: submission-times CSVs (``late.read_times``), each ``PATH`` or
    ``TUTORIAL=PATH``. Every row then shows its raw score, lateness, penalty and final score.
    """
    from course_admin.grading.dispatch import close_cluster, close_cluster_soon, start_local_cluster
    from course_admin.grading.roster import read_roster

    folder, out, source = Path(folder), Path(out), Path(source)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder} is not a folder of submissions.")
    from course_admin.grading.term import Term, read_term

    # A bad roster, term or times file stops the run before any grading, with what to fix.
    class_list = read_roster(roster) if roster is not None else None
    term = read_term(term) if term is not None else Term()
    if term.tutorials:
        term.check_tutorials(assignments(source), source)
    recorded = late.read_all_times(times or [], term, class_list, assignments(source) if times else [])
    # The local cluster's worker processes start while the jobs are prepared below.
    cluster = start_local_cluster(workers) if scheduler is None and workers != 0 else None
    closing = []  # the cluster's close, started as soon as every result is in

    def graded() -> None:
        if cluster is not None:
            closing.append(close_cluster_soon(cluster))

    try:
        return _autograde(folder, out, course_dir, source, workers, scheduler, limits, intake, force, progress, cluster,
                          class_list, term, recorded, graded)
    finally:
        if closing:
            closing[0].result()
        else:
            close_cluster(cluster)


def _autograde(folder, out, course_dir, source, workers, scheduler, limits, intake, force, progress, cluster,
               class_list=None, term=None, submitted_times=None, graded=None) -> Report:
    """``autograde``'s work; ``graded()`` (if given) is called once every result is in the
    gradebook, before the read-back, the CSV and the reports, which need no worker."""
    from nbgrader.api import Gradebook, MissingEntry

    from course_admin.grading.dispatch import grade_all

    limits = limits or Limits()
    course_dir = Path(course_dir).resolve()
    names = assignments(source)
    released = {name: json.loads(path.read_text()) for name, path in generate_here(course_dir, names, source=source).items()}
    sources = {name: (source / f"{name}.ipynb").read_bytes() for name in names}
    known = {name: grade_ids(notebook) for name, notebook in released.items()}
    submissions, superseded = identify_students(collect(folder, known, intake, separate=False), class_list)

    tools_on_path()
    database = f"sqlite:///{course_dir / 'gradebook.db'}"
    index = load_index(course_dir)
    pending: dict[tuple[str, str], Submission] = {}
    with Gradebook(database) as gradebook:
        for sub in submissions:
            if sub.assignment is None:
                continue
            try:  # the boundary around one submission: whatever it holds, the others go on
                sub.content, notes = repair(sub.content, released[sub.assignment])
                sub.problems += notes
                sub.flags = flags(sub.content, released[sub.assignment], tutorial_of(sub.assignment))
                key = submission_key(sub.content, sources[sub.assignment], limits, term.feedback)
            except Exception as error:
                sub.problems.append(f"could not be prepared for grading ({type(error).__name__}: {str(error)[:200]})")
                sub.assignment, sub.content = None, None
                continue
            entry = index.get(f"{sub.student}/{sub.assignment}", {})
            try:
                gradebook.find_submission(sub.assignment, sub.student)
                recorded = True
            except MissingEntry:
                recorded = False
            if not force and recorded and entry.get("key") == key:
                sub.problems += entry.get("problems", [])
                sub.status = "unchanged"
            else:
                sub.key = key
                pending[(sub.student, sub.assignment)] = sub
    jobs = []
    if pending:
        from course_admin.grading.worker import GradingJob

        templates = _template(sorted({a for _, a in pending}), names, source)
        for (student, assignment), sub in pending.items():
            jobs.append(GradingJob(student, assignment, sub.content, templates[assignment], limits.as_dict(), sub.key,
                                   term.feedback))
    task_cpu, task_spans, isolation, timings, retried, graded_here = {}, {}, [], {}, [], []
    with Gradebook(database) as gradebook:
        results = grade_all(jobs, workers=workers, scheduler=scheduler, progress=progress, timings=timings, cluster=cluster)
        for result in results:
            sub = pending.get((result.student, result.assignment))
            if sub is None:  # pragma: no cover - every result answers a job
                continue
            sub.problems += result.problems
            sub.status = "graded"
            task_cpu[f"{sub.student}/{sub.assignment}"] = result.cpu_seconds
            task_spans[f"{sub.student}/{sub.assignment}"] = (result.worker, *result.epoch_span)
            isolation += [note for note in result.sandbox if note not in isolation]
            if result.retried:
                retried.append(f"{sub.name}: {result.retried}")
            graded_here += [sub.name] if result.graded_here else []
            try:
                _merge(gradebook, course_dir, sub, result)
            except Exception as error:
                gradebook.db.rollback()
                sub.problems.append(f"the result could not be saved in the gradebook ({type(error).__name__}: {error})"[:300])
                continue
            index.pop(f"{sub.student}/{sub.assignment}", None)  # a task that failed outright is graded again next run
            if not result.task_failed:
                index[f"{sub.student}/{sub.assignment}"] = {"key": sub.key, "problems": result.problems, "source": sub.source}
            save_index(course_dir, index)
        grading_seconds = time.perf_counter() - timings.get("submitted", time.perf_counter())
        if graded is not None:
            graded()

        for sub in submissions:
            if sub.assignment is None:
                sub.status = "not graded"
                continue
            try:
                _read_back(gradebook, course_dir, out, sub)
            except Exception as error:
                sub.problems.append(f"no grade recorded ({type(error).__name__}: {str(error)[:200]})")
        missing = []
        if class_list is not None:
            tutorials = sorted({s.assignment for s in submissions if s.assignment is not None})
            missing = missing_students(class_list, submissions, tutorials)
            for row in missing:
                row.max_score = float(gradebook.find_assignment(row.missing_assignment).max_score)
    term_notes = late.apply_term(submissions, missing, term, submitted_times or {}, class_list)
    report = Report(
        submissions,
        _write_csv(submissions + missing, out, term.zone),
        out / "feedback",
        summary_path=out / "summary.md",
        graded_now=len(jobs),
        unchanged=sum(s.status == "unchanged" for s in submissions),
        task_cpu_seconds=task_cpu, task_spans=task_spans,
        sandbox=isolation,
        grading_seconds=grading_seconds,
        retried=retried,
        graded_here=sorted(graded_here),
        superseded=superseded,
        roster=class_list,
        missing=missing,
        term=term,
        term_notes=term_notes,
        order={name: _graded_order(notebook) for name, notebook in released.items()},
    )
    from course_admin.grading.lms_export import write_exports
    report.exports = write_exports(submissions + missing, class_list, term, out)
    from course_admin.grading.similarity import class_pairs, write_report

    started = time.perf_counter()
    report.similar = class_pairs(submissions, released, term.similarity_threshold)
    write_report(report.similar, out, term.similarity_threshold)
    report.similarity_seconds = time.perf_counter() - started
    report.summary_path.write_text(report.markdown(), encoding="utf-8", errors="backslashreplace")
    report.summary_path.with_suffix(".html").write_text(summary_html(report), encoding="utf-8", errors="backslashreplace")
    return report


def _graded_order(notebook: dict) -> list[str]:
    """The grade ids of a notebook's graded cells, in the notebook's order."""
    return [nbgrader_meta(cell)["grade_id"] for cell in notebook.get("cells", []) if nbgrader_meta(cell).get("grade")]


def _read_back(gradebook, course_dir: Path, out: Path, sub: Submission) -> None:
    """Fill in ``sub``'s scores from the gradebook and copy its feedback HTML to ``out``."""
    from nbgrader.api import MissingEntry

    try:
        record = gradebook.find_submission(sub.assignment, sub.student)
    except MissingEntry:
        sub.problems.append("no grade recorded: the notebook could not be autograded")
        sub.max_score = gradebook.find_assignment(sub.assignment).max_score
        return
    sub.score, sub.max_score = float(record.score), float(record.max_score)
    for notebook in record.notebooks:
        for grade in notebook.grades:
            sub.grades[grade.name] = float(grade.score)
            sub.grade_max[grade.name] = float(grade.max_score)
            if grade.auto_score is None and grade.manual_score is None:  # a written answer not graded yet
                sub.awaiting.append(grade.name)
    html = course_dir / "feedback" / sub.student / sub.assignment / f"{sub.assignment}.html"
    if html.exists():
        sub.feedback = out / "feedback" / sub.student / f"{sub.assignment}.html"
        sub.feedback.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(html, sub.feedback)


def _student_cell(value: str) -> str:
    return csv_cell(plain_text(value))


def _write_csv(submissions: list[Submission], out: Path, zone=None) -> Path:
    """``grades.csv``: one row per submission. ``student`` is the id as the instructor gave it,
    ``gradebook_id`` the one in nbgrader's gradebook. Every text cell from a student (ids, file
    names, messages) has its control characters and bidirectional controls shown escaped
    (``plain_text``: ``bob\\u202egnp.exe`` would display as ``bobexe.png``) and is neutralised
    against spreadsheet formulas (a file name may start with ``=``). ``score`` is the raw score;
    ``due``, ``submitted_at`` (with ``time_source``), ``late_by``, ``penalty_percent``,
    ``final_score`` and ``late_note`` say what the term's late policy made of it (times in the
    term's time zone ``zone``)."""

    from course_admin.grading.late import Lateness, time_text

    zone = zone or UTC
    out.mkdir(parents=True, exist_ok=True)
    grade_names = sorted({name for s in submissions for name in s.grades})
    path = out / "grades.csv"
    with path.open("w", newline="", encoding="utf-8", errors="backslashreplace") as f:
        writer = csv.writer(f)
        header = ["student", "assignment", "score", "max_score", *grade_names, "gradebook_id", "source", "problems", "flags",
                  "name", "section", "matched_by", "due", "submitted_at", "time_source", "late_by", "penalty_percent",
                  "final_score", "late_note"]
        writer.writerow(header)
        for s in _in_order(submissions):
            writer.writerow(
                [
                    _student_cell(s.name),
                    s.assignment or s.missing_assignment,
                    f"{s.score:g}",
                    f"{s.max_score:g}",
                    *[f"{s.grades[n]:g}" if n in s.grades else "" for n in grade_names],
                    _student_cell(s.student),
                    _student_cell(s.source),
                    _student_cell("; ".join(s.problems)),
                    _student_cell("; ".join(s.flags)),
                    _student_cell(s.display_name),
                    _student_cell(s.section),
                    s.matched_by,
                    *_late_cells(s.lateness or Lateness(final=s.score), zone, time_text),
                ]
            )
    return path


def _late_cells(late, zone, time_text) -> list[str]:
    return [time_text(late.due, zone), time_text(late.submitted, zone), late.time_source, late.late_text(),
            f"{late.penalty_percent:g}", f"{late.final:g}", late.note]
