"""The hidden cases are the grader's alone (``course_admin.grading.hidden_cases``).

The student's package holds each exercise's public cases and the code that builds cases of each
kind, never the hidden inputs: an answer can neither be fitted to them nor replaced by a table or
a record of the course's answers on them made in the notebook, where the course's own code runs.
"""

from __future__ import annotations

import json
import subprocess
import sys

from course_admin.exercises import GRADED
from course_admin.grading import hidden_cases, judging
from course_admin.lunar import solutions
from course_utils import checking
from grading.test_drive_apart import _graded, _notebook, _with_answer, drive_many


def test_every_graded_exercise_has_hidden_cases_only_the_grader_holds():
    graded = {exercise.grade_id for exercise in judging.exercises()}
    assert set(hidden_cases.every_tutorial()) == graded
    for exercise in judging.exercises():
        hidden = exercise.cases_for(True)
        assert hidden and hidden != exercise.cases(), exercise.grade_id
        assert hidden_cases.encode(hidden) == hidden_cases.encode(exercise.cases_for(True))  # the same on every call


STUDENT = """
import importlib, json, sys
from course_utils import checking
found = {}
for module, grade_id in json.loads(sys.argv[1]):  # each check's module, from the index (course_admin)
    exercise = getattr(importlib.import_module(module), "EXERCISES", {}).get(grade_id)
    if exercise is None:
        continue
    try:
        exercise.cases_for(True)
        found[exercise.grade_id] = "given"
    except LookupError as error:
        found[exercise.grade_id] = str(error)
print(json.dumps({"found": found, "installed": sorted(checking.HIDDEN_CASES), "oracles": sorted(checking.ORACLES),
                  "admin": sorted(m for m in sys.modules if m.startswith("course_admin"))}))
"""


def test_the_student_package_gives_no_hidden_case():
    """What a student's kernel can reach: every exercise of the four tutorials, and not one hidden case."""
    checks = [(cell.check.split(":")[0], cell.grade_id) for cell in GRADED if cell.check]
    done = subprocess.run([sys.executable, "-c", STUDENT, json.dumps(checks)], capture_output=True, text=True,
                          timeout=300, check=True)
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["installed"] == [] and seen["oracles"] == [] and seen["admin"] == []
    assert set(seen["found"]) == set(hidden_cases.every_tutorial())
    assert all("not in the student's package" in why for why in seen["found"].values()), seen["found"]


def test_the_grader_hands_the_judges_their_oracles():
    """The judges that need more of a hidden case than the course's record get it from the grader
    (``checking.ORACLES``, filled by ``install``), not by loading ``course_admin`` by name."""
    from course_admin.lunar import bandit_oracle
    from course_admin.replay import td_judge, tree_judge

    given = {exercise.grade_id: checking.grader_oracle(exercise.grade_id) for exercise in judging.exercises()}
    assert {grade_id: oracle for grade_id, oracle in given.items() if oracle is not None} == {
        "test_score_function": bandit_oracle.figures, "test_td_loss": td_judge.variants,
        "test_segment_trees": tree_judge.speed_total}


def test_a_hidden_cell_run_in_the_notebook_says_the_grader_runs_it(capsys, monkeypatch):
    monkeypatch.setattr(checking, "HIDDEN_CASES", {})
    exercise = judging.exercise_for("test_calc_qvals")
    exercise.submit(solutions.Episode)
    assert "the hidden tests run when the notebook is graded" in capsys.readouterr().out


FORGED_LINE = '''
import json as _json, os as _os, sys as _sys
_PAYLOAD = {payload!r}
_frame = _sys._getframe()
while _frame is not None and not ("exercise" in _frame.f_locals and "out" in _frame.f_locals):
    _frame = _frame.f_back
if _frame is not None and _frame.f_locals["exercise"].get("grade_id") == {grade_id!r}:
    _frame.f_locals["out"].write((_json.dumps({{"grade_id": {grade_id!r}, "payload": _PAYLOAD, "notes": []}}) + "\\n").encode())
    _frame.f_locals["out"].flush()
    _os._exit(0)
'''


def _forged(grade_id: str, hidden: bool) -> str:
    """An answer cell that writes the drive's result line itself: the course's own answer's record,
    made in the notebook on the public cases (all a student can compute there) or, planted, on
    the hidden ones."""
    exercise = judging.exercise_for(grade_id)
    answers = [getattr(solutions, name) for name in exercise.reference]
    payload = json.dumps({"grade_id": grade_id, "record": exercise.record(*answers, hidden=hidden)})
    return FORGED_LINE.format(payload=payload, grade_id=grade_id)


def test_a_record_made_in_the_notebook_scores_only_on_cases_the_student_cannot_know(tmp_path):
    """The drive's result line can be written by the answer itself (it runs in the process that
    drives it); what keeps the forgery from scoring is that its record must hold the answers on
    the hidden cases, which the student's package does not hold. Planted: the same forgery made
    on the hidden cases passes, so this test fails if they reach the student."""
    cases = []
    for hidden in (False, True):
        graded = _graded("test_calc_qvals")
        source = _forged(graded.grade_id, hidden) + "\n\nclass Episode:\n    pass\n"
        cases.append((_with_answer(_notebook(graded.tutorial), graded.solution, source), graded.grade_id))
    (public, _), (planted, _) = drive_many(cases, tmp_path)
    assert not public, "a record of the public cases passed the hidden test"
    assert planted, "the planted forgery (made on the hidden cases) should pass: the test would not notice a leak"
