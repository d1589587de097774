"""Judging records in the grader: the same verdict as the check cell, the outputs replaced by
the verdict alone, and a clear reason for a missing, doubled or damaged record."""

from __future__ import annotations

import json

import nbformat
import pytest
from colour.test_checks import WRONG_ACTOR_LOSSES, WRONG_MEMORIES
from verdicts import graded, record_output

from course_admin.colour import solutions
from course_admin.grading import judging
from course_utils import checking, records
from course_utils.colour.checks import ACTOR, MEMORY

CORPUS = [(ACTOR, solutions.replay_actor_loss, True)] + [(ACTOR, wrong, False) for wrong, _ in WRONG_ACTOR_LOSSES]
CORPUS += [(MEMORY, solutions.ReplayMemory, True)] + [(MEMORY, wrong, False) for wrong, _ in WRONG_MEMORIES]


@pytest.mark.parametrize("exercise, answer, right", CORPUS, ids=lambda x: getattr(x, "__name__", str(x))[:30])
def test_the_check_cell_and_the_grader_give_the_same_verdict(monkeypatch, exercise, answer, right):
    monkeypatch.setattr(checking, "TIME_LIMIT", 0.3)
    assert checking.passes(exercise.check, answer) is right
    assert graded(exercise, answer)[0] is right


def test_hidden_cases_are_not_the_public_ones():
    for exercise in judging.exercises():
        assert exercise.cases_for(True) != exercise.cases(), exercise.name
        assert judging.reference_record(exercise.grade_id) != checking.stored_record(exercise.grade_id)


def test_answers_tuned_to_the_public_cases_pass_the_check_but_not_the_grader():
    import numpy as np
    import torch

    cases, seen = ACTOR.cases(), checking.stored_record(ACTOR.grade_id)
    public = [(case, record) for case, record in zip(cases, seen, strict=True)]

    def lookup(log_pi, mu, advantage, rho_max):
        """The recorded loss and gradient of a public case (a loss linear in log_pi with that gradient)."""
        for case, record in public:
            if len(case["log_pi"]) == len(log_pi) and np.allclose(case["log_pi"], log_pi.detach().numpy()):
                grad = torch.as_tensor(np.asarray(record["grad_log_pi"], dtype=np.float32))
                linear = (grad * log_pi).sum()
                return linear + (float(np.asarray(record["loss"]).reshape(-1)[0]) - linear).detach()
        return (log_pi * 0.0).mean()

    assert checking.passes(ACTOR.check, lookup)
    passed, message = graded(ACTOR, lookup)
    assert not passed and "should be" in message


@pytest.mark.parametrize(
    "outputs, reason",
    [
        ([], "left no record"),
        ([{"output_type": "error", "ename": "NameError", "evalue": "name 'x' is not defined", "traceback": []}], "NameError"),
        ([record_output(ACTOR.grade_id, "[]")] * 2, "2 records"),
        ([record_output(MEMORY.grade_id, "[]")], "not for this cell"),
        ([{"output_type": "display_data", "metadata": {}, "data": {records.RECORD_MIME: "{broken"}}], "could not be read"),
        ([record_output(ACTOR.grade_id, "{broken")], "could not be read"),
        ([record_output(ACTOR.grade_id, "[]")], "holds 0 cases"),
    ],
)
def test_no_record_two_records_or_a_damaged_one_fail_with_a_reason(outputs, reason):
    passed, message = judging.judge_outputs(ACTOR.grade_id, outputs)
    assert not passed and reason in message and message.startswith("replay_actor_loss: not yet.")


def _test_cell(grade_id: str, source: str, outputs: list) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["nbgrader"] = {"grade": True, "solution": False, "grade_id": grade_id, "points": 2}
    cell.outputs = [nbformat.from_dict(o) for o in outputs]
    return cell


def test_judged_cells_keep_only_the_verdict():
    forged = [
        {"output_type": "stream", "name": "stdout", "text": "✅ replay_actor_loss: all checks passed. Well done!\n"},
        {"output_type": "execute_result", "execution_count": 3, "metadata": {}, "data": {"text/plain": "2"}},
        record_output(ACTOR.grade_id, ACTOR.record(lambda log_pi, mu, advantage, rho_max: (log_pi * 0.0).mean(), hidden=True)),
    ]
    honest = [record_output(ACTOR.grade_id, ACTOR.record(solutions.replay_actor_loss, hidden=True))]
    notebook = nbformat.v4.new_notebook(cells=[
        _test_cell(ACTOR.grade_id, "ACTOR.submit(replay_actor_loss)", forged),
        _test_cell(ACTOR.grade_id, "ACTOR.submit(replay_actor_loss)", honest),
        _test_cell(ACTOR.grade_id, "assert check_replay_actor_loss(replay_actor_loss)", forged[:1]),
    ])
    judging.JudgeRecords().preprocess(notebook, {})
    wrong, right, old_style = notebook.cells
    assert [o.output_type for o in wrong.outputs] == ["error"] and wrong.outputs[0].ename == judging.NOT_YET
    assert "should be" in wrong.outputs[0].evalue
    assert [o.output_type for o in right.outputs] == ["stream"] and "all checks passed" in right.outputs[0].text
    assert old_style.outputs == [nbformat.from_dict(forged[0])]  # a test that judges in the kernel is nbgrader's


def test_stored_records_are_the_course_answers_on_the_public_cases(tmp_path):
    assert judging.stale_check_records() == []
    stale = tmp_path / checking.CHECK_RECORDS
    stale.write_text("{}\n")
    assert judging.stale_check_records(stale) and judging.write_check_records(stale) == stale
    assert judging.stale_check_records(stale) == []


def test_the_synthetic_assignment_judged_from_records_scores_like_its_asserts(tmp_path):
    """The grading benchmark compares the two ways on this assignment: same scores."""
    import csv

    from course_admin import grading
    from course_admin.grading.synthetic import student_version, synthetic_assignment

    scores = {}
    for records_on in (False, True):
        source = tmp_path / f"source-{records_on}"
        solution = json.loads(synthetic_assignment(source, records=records_on).read_text())
        folder = tmp_path / f"submissions-{records_on}"
        folder.mkdir()
        for name, answered in (("full", ("add", "square")), ("half", ("add",)), ("none", ())):
            (folder / f"{name}.ipynb").write_text(json.dumps(student_version(solution, *answered)))
        tuned = student_version(solution, "add", "square")
        add_cell = next(c for c in tuned["cells"] if c["metadata"]["nbgrader"]["grade_id"] == "add")
        add_cell["source"] = "def add(a, b):\n    return 3"  # right on the visible case only
        (folder / "tuned.ipynb").write_text(json.dumps(tuned))
        report = grading.autograde(folder, out=tmp_path / f"out-{records_on}", course_dir=tmp_path / f"course-{records_on}",
                                   source=source, workers=0, progress=False)
        scores[records_on] = {row["student"]: row["score"] for row in csv.DictReader(report.csv_path.open())}
        feedback = (report.feedback_dir / "full").glob("*.html")
        assert ("add: all checks passed" in next(feedback).read_text()) is records_on  # the grader's verdict
    assert scores[True] == scores[False] == {"full": "3", "half": "1", "none": "0", "tuned": "2"}
