"""What a student's feedback page shows of the hidden tests: the instructor's feedback policy.

A hidden-test cell's verdict names the case that failed ("add(-1, 1) gave -2, expected 0"), and
nbgrader's feedback page shows the cell's source with its hidden tests put back. Where students
may resubmit, that hands them the hidden answers. ``HiddenTestFeedback`` (an nbconvert
preprocessor in ``GenerateFeedback``, before ``SanitizeNotebook``) applies the term file's
``[feedback] hidden`` to every graded test cell that has hidden tests:

- ``pass_fail`` (the default): the hidden part of the source is replaced by a comment, and the
  outputs by one line: the grader's "all checks passed" on a pass, or "not yet" and what to do.
- ``hint``: as ``pass_fail``, but a failure keeps the verdict's words with every value masked
  (numbers, quoted text, anything in brackets become "…"): the kind of mistake, not the case.
- ``full``: the page as nbgrader makes it (the expected values included).

The check cell's public feedback is untouched, and so is the autograded notebook that formgrader
shows the instructor: only the page made for the student changes.
"""

from __future__ import annotations

import re

from nbconvert.preprocessors import Preprocessor
from nbformat.notebooknode import NotebookNode
from traitlets import Bool, Enum

from course_admin.grading.cells import cell_source, nbgrader_meta
from course_admin.grading.drive_runner import NOT_GIVEN
from course_admin.grading.judging import NOT_YET, SUBMITS, exercise_for
from course_admin.grading.term import FEEDBACK_POLICIES

HIDDEN = re.compile(r"### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS", re.S)
HIDDEN_NOTE = "# (hidden tests: run when your notebook is graded; their cases are not shown)"
PASSED = re.compile(r"^[^\n]{1,200}: all checks passed\. Well done!\n?$")  # JudgeRecords' pass line: no values
VALUE = re.compile(
    r"\[[^\[\]]*\]|\([^()]*\)|\{[^{}]*\}|'[^']*'|\"[^\"]*\"|`[^`]*`"
    r"|(?<![\w.])[-+]?(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?(?!\w)"
)
"""A value in a verdict: anything in brackets, quotes or backticks, or a number."""
COURSE_CODE = re.compile(r"[\w.`]+(?: of the setup cell)? is " + re.escape(NOT_GIVEN))
"""Why an answer that wraps course code failed (``drive_runner``): it names a module, not a case."""
RUN_PROBLEMS = {"KernelDied", "KernelStopped", "CellTimeoutError", "MemoryError"}
"""Errors about the run, not the cases (``worker``'s names): shown as they are under every policy."""


def mask_values(text: str) -> str:
    """``text`` with every value (``VALUE``) replaced by "…", innermost brackets first."""
    while True:
        masked = VALUE.sub("…", text)
        if masked == text:
            return masked
        text = masked


def has_hidden_tests(cell) -> bool:
    """A graded test cell (code, graded, no solution) with hidden tests: a hidden block, or a
    submitted record (judged by ``JudgeRecords`` on hidden cases)."""
    meta = nbgrader_meta(cell)
    if cell.get("cell_type") != "code" or not meta.get("grade") or meta.get("solution"):
        return False
    source = cell_source(cell)
    return "### BEGIN HIDDEN TESTS" in source or bool(SUBMITS.search(source))


def _failure(outputs: list) -> str | None:
    """The verdict of a failed test cell (its first error's message), or None if it passed."""
    for output in outputs:
        if output.get("output_type") == "error":
            return str(output.get("evalue") or output.get("ename") or "")
    return None


def feedback_verdict(grade_id: str, outputs: list, policy: str) -> list[NotebookNode]:
    """The outputs a hidden-test cell shows in the feedback under ``policy``."""
    exercise = exercise_for(grade_id)
    name = exercise.name if exercise is not None else grade_id
    failure = _failure(outputs)
    run = [o for o in outputs if o.get("output_type") == "error" and o.get("ename") in RUN_PROBLEMS]
    if run:
        return [NotebookNode(output_type="error", ename=o["ename"], evalue=str(o.get("evalue", "")),
                             traceback=[f"{o['ename']}: {o.get('evalue', '')}"]) for o in run[:1]]
    if failure is None:
        kept = [o for o in outputs if o.get("output_type") == "stream" and PASSED.match(str(o.get("text", "")))]
        return [NotebookNode(output_type="stream", name="stdout", text=o["text"]) for o in kept]
    verdict, *notes = failure.split(" Note: ")  # judging's notes: course code the answer reached for, no case
    notes = [f"Note: {note}" for note in notes]
    notes += [f"Note: {found}." for found in dict.fromkeys(COURSE_CODE.findall(verdict)) if found not in " ".join(notes)]
    if "not implemented yet" in verdict or "NotImplementedError" in verdict:  # no case in it: say so plainly
        message = f"{name}: not yet. It is not implemented yet: write your answer in its cell, then run its check cell."
    elif policy == "hint":
        words = mask_values(verdict.split(": not yet.", 1)[-1].strip()) if verdict.strip() else ""
        message = f"{name}: not yet (hidden tests). {words or 'An assertion of the hidden tests failed.'}"
    else:
        message = (f"{name}: not yet. Your answer did not pass the hidden tests, which try other inputs than the check"
                   " cell's. Run the check cell again, read its hints, and test your answer on inputs of your own.")
    message = " ".join([message, *notes])
    return [NotebookNode(output_type="error", ename=NOT_YET, evalue=message, traceback=[message])]


class HiddenTestFeedback(Preprocessor):
    """Apply the feedback policy to every hidden-test cell of the notebook the page is made from."""

    enabled = Bool(True, help="nbconvert preprocessors are off unless enabled").tag(config=True)
    policy = Enum(FEEDBACK_POLICIES, default_value="pass_fail",
                  help="what the feedback shows of hidden tests: pass_fail, hint or full").tag(config=True)

    def preprocess_cell(self, cell, resources, index):
        if self.policy == "full" or not has_hidden_tests(cell):
            return cell, resources
        grade_id = nbgrader_meta(cell).get("grade_id", "")
        cell.source = HIDDEN.sub(HIDDEN_NOTE, cell_source(cell))
        cell.outputs = feedback_verdict(grade_id, cell.get("outputs", []), self.policy)
        return cell, resources


def policy_config(config, policy: str):
    """Put ``HiddenTestFeedback`` with ``policy`` into ``GenerateFeedback``'s preprocessors,
    before ``SanitizeNotebook`` (a traitlets ``Config``, changed in place and returned; run
    ``sanitize.feedback_config`` first)."""
    from course_admin.grading.sanitize import SanitizeNotebook, feedback_preprocessors

    preprocessors = [p for p in feedback_preprocessors(config) if p is not HiddenTestFeedback]
    at = preprocessors.index(SanitizeNotebook) if SanitizeNotebook in preprocessors else len(preprocessors)
    preprocessors.insert(at, HiddenTestFeedback)
    config.GenerateFeedback.preprocessors = preprocessors
    config.HiddenTestFeedback.policy = policy
    return config
