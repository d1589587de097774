"""nbgrader settings for rl-course. `course release` and `course autograde` run nbgrader from
the repository root, so these apply to them and to any nbgrader command run here."""

from pathlib import Path

c = get_config()  # noqa: F821 (provided by nbgrader)
HERE = Path(__file__).resolve().parent

c.CourseDirectory.course_id = "rl-course"
# The instructor's course folder (gradebook, submissions, feedback): kept out of git.
c.CourseDirectory.root = str(HERE / "grading")
c.CourseDirectory.db_url = f"sqlite:///{HERE / 'grading' / 'gradebook.db'}"

# Student notebooks get this stub where a solution was.
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

# nbgrader's default cell timeout is 30 s. Under nbgrader the course runs in fast mode
# (NBGRADER_EXECUTION is set), where no cell should need more than ~20 s; allow 120 s so a
# slow machine still grades, while a student's infinite loop is stopped.
c.Execute.timeout = 120
c.ExecutePreprocessor.timeout = 120
c.Execute.interrupt_on_timeout = True
c.Execute.allow_errors = True

# nbconvert validates the whole notebook against its schema after every preprocessor: about a
# dozen times per converter, 25 ms each on tutorial 3 (0.5 CPU-s of every graded submission's
# 4-6, for its autograde and its feedback page). Validating once, after the last preprocessor,
# rejects the same invalid notebooks, after running them rather than before (notebook_repair has
# already mended or refused what a submission's JSON gets wrong); the error names the last
# preprocessor.
c.Exporter.optimistic_validation = True

# Student content must never run in the instructor's browser: formgrader renders the
# autograded notebook, and the feedback HTML, on the Jupyter server's own origin. So also when
# nbgrader's own `autograde` and `generate_feedback` commands are run here, the notebook is
# sanitised after grading (course_admin.grading.sanitize). `course autograde` does the same.
from nbconvert.preprocessors import ClearMetadataPreprocessor  # noqa: E402
from nbgrader.preprocessors import (  # noqa: E402
    AssignLatePenalties,
    CheckCellMetadata,
    Execute,
    IgnorePattern,
    LimitOutput,
    SaveAutoGrades,
)

from course_admin.grading.judging import JudgeRecords  # noqa: E402
from course_admin.grading.sanitize import SanitizeNotebook, feedback_config  # noqa: E402

# The hidden tests only record what the student's code returned; JudgeRecords judges the records
# in nbgrader's own process, after execution and before the grades are saved.
c.Autograde.autograde_preprocessors = [
    Execute, JudgeRecords, IgnorePattern, ClearMetadataPreprocessor, LimitOutput, SaveAutoGrades, AssignLatePenalties,
    CheckCellMetadata, SanitizeNotebook,
]
feedback_config(c)
# A student's feedback page shows hidden tests as pass/fail only (course_admin.grading.feedback_policy);
# `course autograde --term` takes the policy from the term file instead.
from course_admin.grading.feedback_policy import policy_config  # noqa: E402

policy_config(c, "pass_fail")
