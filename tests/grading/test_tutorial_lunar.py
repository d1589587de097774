"""Autograding tutorial 3 (policy gradients) with nbgrader: full, zero and partial marks, and
credit for later exercises when the earlier ones they build on are missing."""

import forgeries
import pytest
from submissions import grade_variants

pytestmark = pytest.mark.grading

ASSIGNMENT = "03_policy_gradients"
POINTS = {
    "test_policy_net": 1,
    "test_agent_distribution": 1,
    "test_agent_step": 2,
    "test_calc_qvals": 2,
    "test_from_episodes": 1,
    "test_score_function": 3,
    "test_vpg_loss": 1,
    "test_bpg_loss": 1,
    "test_entropy_loss": 2,
    "test_policy_trainer": 2,
    "test_aac_net": 1,
    "test_aac_agent": 1,
    "test_aac_loss": 2,
}
AUTO = sum(POINTS.values())  # 20; the three written answers (2 points each) are graded by hand


@pytest.fixture(scope="module")
def rows(tmp_path_factory, dask_scheduler):
    return grade_variants(
        tmp_path_factory,
        dask_scheduler,
        ASSIGNMENT,
        partial=("calc_qvals", "policy_trainer", "aac_loss"),
        # Later exercises without the earlier ones they build on (the agent, the network).
        later_only=("score_function", "aac_agent", "entropy_loss"),
        extra={"monkeypatch": forgeries.monkeypatch_attack("lunar")},
        # "later_only" runs whole: the cells between the exercises must not stop later ones
        on_grading_path=("partial", "monkeypatch"),
    )


def _auto_score(row) -> int:
    return sum(int(float(row[name])) for name in POINTS)


def test_solution_gets_every_automatic_point(rows):
    assert AUTO == 20
    assert {name: int(float(rows["full"][name])) for name in POINTS} == POINTS
    assert float(rows["full"]["score"]) == AUTO


def test_untouched_notebook_gets_zero(rows):
    assert _auto_score(rows["zero"]) == 0 and float(rows["zero"]["score"]) == 0
    # the stubs' methods read ``self.env``, an attribute, not the setup cell's ``env``
    assert "uses course code" not in rows["zero"]["problems"], rows["zero"]["problems"]


def test_partial_answers_get_exactly_their_points(rows):
    row = rows["partial"]
    assert {name for name in POINTS if float(row[name]) > 0} == {"test_calc_qvals", "test_policy_trainer", "test_aac_loss"}
    assert float(row["score"]) == 6


def test_later_exercises_earn_credit_without_the_earlier_ones(rows):
    row = rows["later_only"]
    assert {name for name in POINTS if float(row[name]) > 0} == {"test_score_function", "test_aac_agent", "test_entropy_loss"}
    assert float(row["score"]) == 6


def test_written_answers_count_in_the_maximum(rows):
    assert float(rows["full"]["max_score"]) == AUTO + 6


def test_the_courses_own_outputs_stay_under_the_output_cap(rows):
    # The cap flags a submission that prints too much; the tutorial's own plots and
    # animations must never trip it, or the flag would mean nothing.
    for student, row in rows.items():
        assert "of output" not in row["problems"], (student, row["problems"])


def test_the_monkeypatch_attack_scores_zero_on_what_it_attacks_only(rows):
    """The attacked answer cell patches every check of the tutorial and every Exercise's judge in
    the kernel, and answers wrongly: the grader, judging outside the kernel, gives it 0; the
    other exercises, answered honestly, keep their points."""
    _, _, attacked, _ = forgeries.MONKEYPATCH_ATTACKS["lunar"]
    row, full = rows["monkeypatch"], rows["full"]
    assert row[attacked] == "0" and full[attacked] != "0"
    others = [name for name in full if name.startswith("test_") and name != attacked]
    assert others and all(row[name] == full[name] for name in others)
    assert "patch" in row["flags"] or "replaces" in row["flags"] or "setattr" in row["flags"]
