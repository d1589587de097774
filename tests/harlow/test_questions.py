"""Tutorial 1's concept checks: one right option each, and feedback that names the misconception."""

import pytest

from course_utils.harlow import questions


@pytest.mark.parametrize("check", questions.CONCEPT_CHECKS, ids=lambda c: c.question[:30])
def test_each_check_has_one_right_option_and_explains_every_option(check):
    right = [i for i, option in enumerate(check.options) if option.correct]
    assert len(right) == 1 and len(check.options) >= 3
    assert check.feedback(right[0]).startswith("Right: ")
    whys = [option.why for option in check.options]
    assert len(set(whys)) == len(whys)  # each option gets its own explanation
    for i, option in enumerate(check.options):
        if i != right[0]:
            assert check.feedback(i).startswith("Not quite: ") and len(option.why.split()) >= 8


def test_the_checks_name_the_misconceptions_they_are_about():
    lamarck = questions.LAMARCKIAN_CHILD
    wrong = {o.text: o.why for o in lamarck.options if not o.correct}
    assert any("Baldwinian" in why for why in wrong.values())  # confusing the two kinds of inheritance
    detach = questions.DETACHED_ADVANTAGE
    assert any("memory" in o.text and not o.correct for o in detach.options)
    assert all(check in questions.CONCEPT_CHECKS for check in (lamarck, detach, questions.FRESH_TASKS))


def test_the_survival_question_agrees_with_update_population(monkeypatch):
    """Random replacement, measured on the solution's update_population (scoring stubbed out): the
    old population's best is still there after about 9 generations in 10, not always."""
    import random

    from course_admin.harlow import solutions
    from course_utils.harlow.sizes import SIZES

    question = questions.BEST_SURVIVES
    assert f"with {SIZES.full('new_individuals')} offspring" in question.question and "of 50" in question.question
    monkeypatch.setattr(solutions, "evaluate_individual", lambda env, agent, optimizer_func: (0, []))
    monkeypatch.setattr(solutions, "create_new_agent", lambda agent1, agent2: object())
    random.seed(0)
    population = [(object(), score) for score in range(1, 51)]
    best = population[-1]
    runs = 4000
    kept = 0
    for _ in range(runs):
        after, _ = solutions.update_population(None, None, population, population[-4:], best[1],
                                               new_generation_new_individuals=5)
        assert len(after) == 50
        kept += best in after
    assert abs(kept / runs - question.answer) < 0.02 and not question.is_right(1.0)
