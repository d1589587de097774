"""No submission forges a verdict: the red-team corpus (``tests/forgeries.py``, tutorial 2 cut
after its last hidden test) graded by ``course autograde``, next to an honest full submission
and an untouched one."""

from __future__ import annotations

import csv

import forgeries
import pytest
from submissions import write

from course_admin import grading

POINTS = {forgeries.ACTOR: 5.0, forgeries.MEMORY: 3.0}
"""Tutorial 2's points by exercise (its discounted returns are optional: no marks)."""


def _grade(tmp_path_factory, scheduler, folder, **kwargs) -> dict[str, dict]:
    out, course = tmp_path_factory.mktemp("grades"), tmp_path_factory.mktemp("course")
    report = grading.autograde(folder, out=out, course_dir=course, scheduler=scheduler, progress=False, **kwargs)
    rows = {row["student"]: row for row in csv.DictReader(report.csv_path.open())}
    rows["summary.md"] = {"text": report.summary_path.read_text()}
    return rows


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, dask_scheduler):
    folder = tmp_path_factory.mktemp("forgeries")
    attacks = forgeries.build(folder)
    write(folder, "honest_full", forgeries.load_cut("solution"))
    write(folder, "untouched", forgeries.load_cut("student"))
    source = forgeries.cut_source(tmp_path_factory.mktemp("source"))
    return attacks, _grade(tmp_path_factory, dask_scheduler, folder, source=source)


def test_every_attack_scores_zero_on_what_it_attacks_and_full_marks_on_its_honest_answer(corpus):
    attacks, rows = corpus
    scores = {name: (rows[name][attacked], rows[name][answered]) for name, (attacked, answered) in attacks.items()}
    expected = {name: ("0", f"{POINTS[answered]:g}") for name, (attacked, answered) in attacks.items()}
    assert scores == expected
    for name in attacks:
        assert "grader failed" not in rows[name]["problems"], rows[name]["problems"]


def test_an_honest_and_an_untouched_submission_keep_full_marks_and_zero(corpus):
    _, rows = corpus
    assert float(rows["honest_full"]["score"]) == float(rows["honest_full"]["max_score"]) == sum(POINTS.values())
    assert float(rows["untouched"]["score"]) == 0


def test_the_corpus_can_fail_when_judging_moves_back_into_the_kernel(tmp_path_factory, dask_scheduler):
    """The planted regression: with the hidden tests judging in the student's kernel (the old
    way), the one-line patch of the check earns the exercise's points."""
    folder = tmp_path_factory.mktemp("regression")
    forgeries.build(folder)
    for path in folder.iterdir():
        if path.stem != "patch_check":  # the attack asserted on: each other one is a grading more
            path.unlink()
    rows = _grade(tmp_path_factory, dask_scheduler, folder, source=forgeries.in_kernel_source(tmp_path_factory.mktemp("source")))
    assert rows["patch_check"][forgeries.ACTOR] == f"{POINTS[forgeries.ACTOR]:g}"


def test_the_cheat_report_lists_every_forgery_for_the_instructor(corpus):
    attacks, rows = corpus
    flagged = {name for name in attacks if rows[name]["flags"]}
    assert flagged == set(attacks) - {"nan"}  # a NaN is a wrong answer, not a forgery
    assert not rows["honest_full"]["flags"] and not rows["untouched"]["flags"]
    summary = rows["summary.md"]["text"]
    section = summary[summary.index("## Flagged for review") :]
    assert all(f"| {name} |" in section for name in flagged) and "| honest_full |" not in section
