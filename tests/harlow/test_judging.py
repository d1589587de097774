"""Tutorial 1's exercises judged from records: the check cell (public cases, judged in the
kernel) and the grader (hidden cases, judged in its own process) give the same verdict on the
right answers and on every wrong answer of the hint tests; the hidden cases are not the public
ones; and answers tuned to the public cases pass the check cell but not the grader."""

from __future__ import annotations

import copy
import json

import pytest
from verdicts import graded

from course_admin.grading import judging
from course_admin.harlow import solutions
from course_utils import checking
from course_utils.harlow.agent import train_evaluate_agent
from course_utils.harlow.checks import EVOLUTION, EXERCISES, FITNESS
from course_utils.harlow.checks_lamarck import LAMARCK
from harlow.test_checks import STUCK_AT_AN_EDGE, WRONG_FITNESS, WRONG_OFFSPRING, WRONG_UPDATES, _exercise_code, _student


def _fitness(*edits, kind: str = "solution") -> tuple:
    return (_student(*edits, kind=kind)["evaluate_individual"],)


def _evolution(*edits, kind: str = "solution") -> tuple:
    student = _student(*edits, kind=kind)
    return student["create_new_agent"], student["update_population"]


def _param_edits(params) -> list:
    return [(param.id, param.values[0]) for param in params]


def _update_left_to_do() -> tuple:
    answer, stub = (_exercise_code(kind).split("def update_population")[1] for kind in ("solution", "student"))
    return _evolution((answer, stub))


def _returns_nothing(agent1, agent2):
    copy.deepcopy(agent1)


CORPUS = [
    pytest.param(FITNESS, (solutions.evaluate_individual,), True, id="fitness-reference"),
    pytest.param(FITNESS, _fitness(), True, id="fitness-notebook"),
    pytest.param(FITNESS, _fitness(kind="student"), False, id="fitness-not-implemented"),
    *(pytest.param(FITNESS, _fitness(*edits), False, id=f"fitness-{name}") for name, edits in _param_edits(WRONG_FITNESS)),
    pytest.param(EVOLUTION, (solutions.create_new_agent, solutions.update_population), True, id="evolution-reference"),
    pytest.param(EVOLUTION, _evolution(), True, id="evolution-notebook"),
    pytest.param(EVOLUTION, _evolution(kind="student"), False, id="evolution-not-implemented"),
    pytest.param(EVOLUTION, _update_left_to_do(), False, id="update-not-implemented"),
    pytest.param(EVOLUTION, (_returns_nothing, solutions.update_population), False, id="offspring-returns-nothing"),
    pytest.param(
        EVOLUTION,
        _evolution(("random.choices(parents_population, k=2)", "random.choice(parents_population, k=2)")),
        False,
        id="update-raises",
    ),
    *(
        pytest.param(EVOLUTION, _evolution(*edits), False, id=f"evolution-{name}")
        for name, edits in _param_edits(WRONG_OFFSPRING + STUCK_AT_AN_EDGE + WRONG_UPDATES)
    ),
]


@pytest.mark.parametrize("exercise, answers, right", CORPUS)
def test_the_check_cell_and_the_grader_give_the_same_verdict(exercise, answers, right):
    assert checking.passes(exercise.check, *answers) is right
    passed, message = graded(exercise, *answers)
    assert passed is right, message


def test_the_grader_gives_the_check_cells_hint():
    passed, message = graded(FITNESS, *_fitness(("learner = copy.deepcopy(agent)", "learner = agent")))
    assert not passed and "the agent itself was trained" in message
    passed, message = graded(EVOLUTION, *_evolution(("best_score = max(best_score, score)\n", "\n")))
    assert not passed and "the best score was 95 and the offspring scored 110, 40 and 99: expected 110, got 95" in message


def test_hidden_cases_are_not_the_public_ones():
    assert set(EXERCISES) == {"test_evaluate_individual", "test_genetic_algorithm"}
    public, hidden = FITNESS.cases(), FITNESS.cases_for(True)
    planned = [{json.dumps(c, sort_keys=True) for c in cases["planned"]} for cases in (public, hidden)]
    assert not planned[0] & planned[1]
    assert public["real"] != hidden["real"]
    public, hidden = EVOLUTION.cases(), EVOLUTION.cases_for(True)
    assert public["offspring"]["parents"] != hidden["offspring"]["parents"]
    assert public["offspring"]["seed"] != hidden["offspring"]["seed"]
    for key in ("scores", "parents", "best", "count", "main", "low", "removal_seeds"):
        assert public["update"][key] != hidden["update"][key], key
    public, hidden = LAMARCK.cases(), LAMARCK.cases_for(True)
    assert not {json.dumps(c, sort_keys=True) for c in public} & {json.dumps(c, sort_keys=True) for c in hidden}
    for exercise in (FITNESS, EVOLUTION, LAMARCK):
        assert judging.reference_record(exercise.grade_id) != checking.stored_record(exercise.grade_id)


def test_answers_tuned_to_the_public_cases_pass_the_check_but_not_the_grader():
    total, scores = checking.stored_record(FITNESS.grade_id)["planned"][0]["result"]

    def tuned(env, agent, optimizer_func, num_tasks=10, num_gradient_steps=25, num_trials=6, num_evaluation_trials=20):
        for _ in range(num_tasks):
            train_evaluate_agent(env, copy.deepcopy(agent), optimizer_func, num_gradient_steps, num_trials, num_evaluation_trials)
        return (total, scores) if num_tasks == 4 else (0.0, [0.0] * num_tasks)  # the stored public record's result

    assert checking.passes(FITNESS.check, tuned)
    passed, message = graded(FITNESS, tuned)
    assert not passed and "the scores of the 5 tasks were" in message

    four = _evolution(*(("range(new_generation_new_individuals):\n" + line, "range(4):\n" + line) for line in (
        "        (agent1", "        population.pop")))
    assert checking.passes(EVOLUTION.check, *four)
    passed, message = graded(EVOLUTION, *four)
    assert not passed and "with new_generation_new_individuals=3, create_new_agent was called 4 times" in message


def test_replacing_torch_equal_after_the_checks_are_imported_does_not_forge_a_fact(monkeypatch):
    """The drive records whether each task started from the agent's own weights; an answer that
    trains one copy for every task, and replaces torch.equal so that all weights look the same,
    still fails: the checks use the function bound when they were imported (the setup cell)."""

    def reuses_one_copy(env, agent, optimizer_func, num_tasks=10, num_gradient_steps=25, num_trials=6,
                        num_evaluation_trials=20):
        learner = copy.deepcopy(agent)
        scores = [train_evaluate_agent(env, learner, optimizer_func, num_gradient_steps=num_gradient_steps,
                                       num_trials=num_trials, num_evaluation_trials=num_evaluation_trials)
                  for _ in range(num_tasks)]
        return sum(scores), scores

    import torch

    monkeypatch.setattr(torch, "equal", lambda a, b: True)
    passed, message = graded(FITNESS, reuses_one_copy)
    assert not passed and "started from weights trained on an earlier task" in message
