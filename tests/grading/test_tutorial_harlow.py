"""Tutorial 1 graded with nbgrader end to end: full, zero and partial marks for the three coding
exercises (3 + 4 + 2 points); the written Think! answer (2 points) waits for manual grading."""

import forgeries
import harlow_graded
import pytest
from submissions import rows_by_student

pytestmark = pytest.mark.grading

ASSIGNMENT = harlow_graded.ASSIGNMENT


@pytest.fixture(scope="module")
def rows(tmp_path_factory, dask_scheduler):
    """The grades of ``harlow_graded``'s run, which the manual-grading browser test shares."""
    return rows_by_student(harlow_graded.graded(tmp_path_factory, dask_scheduler)["csv"])


def marks(row):
    return row["test_evaluate_individual"], row["test_genetic_algorithm"], row["test_lamarckian_individual"]


def test_solution_gets_full_automatic_marks(rows):
    row = rows["full"]
    assert marks(row) == ("3", "4", "2")
    assert float(row["score"]) == 9 and float(row["max_score"]) == 11  # + 2 manual points for Think!


def test_untouched_student_notebook_gets_zero(rows):
    row = rows["zero"]
    assert marks(row) == ("0", "0", "0") and float(row["score"]) == 0 and float(row["max_score"]) == 11


def test_each_exercise_alone_gets_exactly_its_points(rows):
    assert marks(rows["fitness_only"]) == ("3", "0", "0") and float(rows["fitness_only"]["score"]) == 3
    assert marks(rows["evolution_only"]) == ("0", "4", "0") and float(rows["evolution_only"]["score"]) == 4


def test_the_monkeypatch_attack_scores_zero_on_what_it_attacks_only(rows):
    """The attacked answer cell patches every check of the tutorial and every Exercise's judge in
    the kernel, and answers wrongly: the grader, judging outside the kernel, gives it 0; the
    other exercises, answered honestly, keep their points."""
    _, _, attacked, _ = forgeries.MONKEYPATCH_ATTACKS["harlow"]
    row, full = rows["monkeypatch"], rows["full"]
    assert row[attacked] == "0" and full[attacked] != "0"
    others = [name for name in full if name.startswith("test_") and name != attacked]
    assert others and all(row[name] == full[name] for name in others)
    assert "patch" in row["flags"] or "replaces" in row["flags"] or "setattr" in row["flags"]
