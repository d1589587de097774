"""`course autograde` on tutorial 4: full, zero and partial marks. One autograde run backs all
the assertions (each notebook runs in fast mode, about a minute)."""

import forgeries
import pytest
from submissions import grade_variants

pytestmark = pytest.mark.grading

ASSIGNMENT = "04_prioritized_replay"
POINTS = {"test_memory_add": 3, "test_segment_trees": 4, "test_prioritized_buffer": 4, "test_td_loss": 3}


@pytest.fixture(scope="module")
def rows(tmp_path_factory, dask_scheduler):
    return grade_variants(
        tmp_path_factory,
        dask_scheduler,
        ASSIGNMENT,
        memory_only=("memory_add",),
        # the buffer without the trees: its hidden test gives it the check's stand-in trees
        buffer_only=("prioritized_buffer",),
        # the loss alone: the DQN that follows trains with the course's buffer and the student's loss
        loss_only=("td_loss",),
        extra={"monkeypatch": forgeries.monkeypatch_attack("replay")},
        # the DQN runs after the exercises train with the loss: "full" and "loss_only" run them whole
        on_grading_path=("memory_only", "buffer_only", "monkeypatch"),
    )


def marks(row):
    return {grade_id: float(row[grade_id]) for grade_id in POINTS}


def test_solution_gets_full_marks(rows):
    assert (float(rows["full"]["score"]), float(rows["full"]["max_score"])) == (14, 14)
    assert marks(rows["full"]) == POINTS


def test_untouched_student_notebook_gets_zero(rows):
    assert (float(rows["zero"]["score"]), float(rows["zero"]["max_score"])) == (0, 14)


def test_partial_submissions_get_exactly_their_exercises_points(rows):
    zero = dict.fromkeys(POINTS, 0)
    assert marks(rows["memory_only"]) == {**zero, "test_memory_add": 3}
    assert float(rows["memory_only"]["score"]) == 3
    assert marks(rows["buffer_only"]) == {**zero, "test_prioritized_buffer": 4}
    assert float(rows["buffer_only"]["score"]) == 4
    assert marks(rows["loss_only"]) == {**zero, "test_td_loss": 3}
    assert float(rows["loss_only"]["score"]) == 3


def test_the_monkeypatch_attack_scores_zero_on_what_it_attacks_only(rows):
    """The attacked answer cell patches every check of the tutorial and every Exercise's judge in
    the kernel, and answers wrongly: the grader, judging outside the kernel, gives it 0; the
    other exercises, answered honestly, keep their points."""
    _, _, attacked, _ = forgeries.MONKEYPATCH_ATTACKS["replay"]
    row, full = rows["monkeypatch"], rows["full"]
    assert row[attacked] == "0" and full[attacked] != "0"
    others = [name for name in full if name.startswith("test_") and name != attacked]
    assert others and all(row[name] == full[name] for name in others)
    assert "patch" in row["flags"] or "replaces" in row["flags"] or "setattr" in row["flags"]
