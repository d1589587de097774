"""Tutorial 1's exercise checks (Harlow meta-RL): the right answers pass, and each typical
wrong answer gets its own specific hint, and no other.

The student's code is the solution notebook's exercise cells, run as the notebook runs them
(one namespace holding ``train_evaluate_agent``, the student's ``evaluate_individual`` and
``create_new_agent``), each wrong answer a minimal edit of that code: (old, new) text pairs.
"""

from __future__ import annotations

import copy
import functools
import linecache
import random
import re

import numpy as np
import pytest
import torch
from submissions import cell_index, load
from verdicts import not_yet

from course_admin.harlow import solutions
from course_utils import harlow
from course_utils.harlow.checks import check_evaluate_individual, check_genetic_algorithm
from course_utils.harlow.checks_lamarck import check_lamarckian_individual

ASSIGNMENT = "01_harlow_meta_rl"
EXERCISES = ("evaluate_individual", "genetic_algorithm")


@functools.cache
def _exercise_code(kind: str) -> str:
    notebook = load(kind, ASSIGNMENT)
    return "\n\n".join("".join(notebook["cells"][cell_index(notebook, grade_id)]["source"]) for grade_id in EXERCISES)


def _student(*edits: tuple[str, str], kind: str = "solution") -> dict:
    """The notebook's namespace after running its two exercise cells, edited by (old, new) pairs."""
    code = _exercise_code(kind)
    for old, new in edits:
        assert code.count(old) == 1, f"the edit's target is not in the solution cells exactly once: {old!r}"
        code = code.replace(old, new)
    # What the notebook's import cell gives the exercise cells.
    namespace = {
        "copy": copy,
        "random": random,
        "np": np,
        "torch": torch,
        "harlow": harlow,
        "HYPER_MUTATION": harlow.HYPER_MUTATION,
        "PARAMETER_NOISE": harlow.PARAMETER_NOISE,
        "train_evaluate_agent": harlow.train_evaluate_agent,
    }
    filename = f"<{ASSIGNMENT} exercise cells>"
    linecache.cache[filename] = (len(code), None, code.splitlines(keepends=True), filename)  # as IPython does for cells
    exec(compile(code, filename, "exec"), namespace)
    return namespace


def _check_fitness(student: dict) -> bool:
    return check_evaluate_individual(student["evaluate_individual"])


def _check_evolution(student: dict) -> bool:
    return check_genetic_algorithm(student["create_new_agent"], student["update_population"])


# A distinctive piece of every message the two checks can give.
HINTS = {
    # evaluate_individual
    "bad arguments": "with arguments it does not take",
    "task count": "Hint: loop `for _ in range(num_tasks):`",
    "agent trained": "the agent itself was trained",
    "copy reused": "some tasks started from weights trained on an earlier task",
    "agent changed": "Hint: only ever train copies of it.",
    "settings": "Hint: pass num_gradient_steps, num_trials and num_evaluation_trials on to it.",
    "fitness result": "expected (total score, list of scores)",
    "task scores": "the scores of the 4 tasks were",
    "total": "the total of scores",
    "real scores": "expected 2 scores between -4 and 4",
    "really trained": "after really training, the agent's weights changed",
    # create_new_agent
    "parent returned": "create_new_agent returned a parent itself",
    "parent changed": "making a child changed a parent",
    "clamped with gamma": "follows their discount factor gamma",
    "stuck at an edge": "sit exactly at an edge",
    "out of range": "Hint: clamp after adding the noise",
    "far from parents": "further than 5 noise standard deviations",
    "one parent": "from either parent with probability 1/2",
    "noise size": "Hint: add Gaussian noise of standard deviation",
    # update_population
    "update result": "expected (new population, best score)",
    "not pairs": "the population should be a list of (agent, score) pairs",
    "offspring count": "with new_generation_new_individuals=4, create_new_agent was called",
    "not parents": "create_new_agent was not given two agents from parents_population",
    "not the child": "evaluate_individual should score each new agent",
    "size": "Hint: remove as many random old individuals as you add.",
    "offspring lost": "of the 4 offspring; it should hold all of them",
    "stored score": "Hint: store (new_agent, score)",
    "survivors": "the survivors should be 6 different individuals",
    "best": "expected 150, got",
    "best lowered": "when no offspring beats the best score of 100, it should stay 100",
    "same removed": "the same old individuals are removed every time",
    # any exercise
    "not implemented": "is not implemented yet",
}


def _fails_with(check, student: dict, hint: str) -> str:
    message = not_yet(check, student)
    assert HINTS[hint] in message
    assert [name for name, text in HINTS.items() if name != hint and text in message] == []
    return message


# --------------------------------------------------------------------------------------
# The right answers


def test_reference_answers_pass(capsys):
    assert check_evaluate_individual(solutions.evaluate_individual)
    assert check_genetic_algorithm(solutions.create_new_agent, solutions.update_population)
    assert capsys.readouterr().out.count("✅") == 2


def test_solution_notebook_answers_pass(capsys):
    student = _student()
    assert _check_fitness(student)
    assert _check_evolution(student)
    assert capsys.readouterr().out.count("✅") == 2


def test_untouched_student_notebook_gets_a_prompt(capsys):
    student = _student(kind="student")
    assert not _check_fitness(student)
    assert not _check_evolution(student)
    out = capsys.readouterr().out
    assert "evaluate_individual is not implemented yet" in out and "create_new_agent is not implemented yet" in out
    assert "evaluate_individual is not implemented yet" in not_yet(_check_fitness, student)


def test_update_population_left_to_do_gets_a_prompt():
    # create_new_agent answered, update_population still as released.
    answer, stub = (_exercise_code(kind).split("def update_population")[1] for kind in ("solution", "student"))
    message = _fails_with(_check_evolution, _student((answer, stub)), "not implemented")
    assert "update_population is not implemented yet" in message


def test_a_failing_check_prints_the_hint_and_returns_false(capsys):
    student = _student(("learner = copy.deepcopy(agent)", "learner = agent"))
    assert _check_fitness(student) is False
    out = capsys.readouterr().out
    assert out.startswith("❌ evaluate_individual: not yet.") and HINTS["agent trained"] in out


# --------------------------------------------------------------------------------------
# Exercise 1: evaluate_individual

LOOP_AND_COPY = "    for _ in range(num_tasks):\n        learner = copy.deepcopy(agent)\n"
TRAIN_CALL = (
    "scores.append(train_evaluate_agent(env, learner, optimizer_func, num_gradient_steps, num_trials,\n"
    "                                           num_evaluation_trials))"
)


WRONG_FITNESS = [
    pytest.param(
        [("optimizer_func, num_gradient_steps,", "optimizer_func, num_tasks, num_gradient_steps,")],
        "bad arguments",
        id="passes-num_tasks-on-too",
    ),
    pytest.param([("range(num_tasks)", "range(10)")], "task count", id="always-10-tasks"),
    pytest.param([("range(num_tasks)", "range(1, num_tasks)")], "task count", id="one-task-short"),
    pytest.param([("learner = copy.deepcopy(agent)", "learner = agent")], "agent trained", id="trains-the-agent"),
    pytest.param(
        [(LOOP_AND_COPY, "    learner = copy.deepcopy(agent)\n    for _ in range(num_tasks):\n")],
        "copy reused",
        id="one-copy-for-all-tasks",
    ),
    pytest.param([("learner = copy.deepcopy(agent)", "learner = copy.copy(agent)")], "copy reused", id="shallow-copy"),
    pytest.param(
        # Lamarckian: keeps what the last copy learned.
        [
            (
                "    return np.sum(scores), scores",
                "    agent.load_state_dict(learner.state_dict())\n    return np.sum(scores), scores",
            )
        ],
        "agent changed",
        id="keeps-the-learned-weights",
    ),
    pytest.param(
        [(TRAIN_CALL, "scores.append(train_evaluate_agent(env, learner, optimizer_func))")],
        "settings",
        id="settings-not-passed",
    ),
    pytest.param([("num_gradient_steps, num_trials,", "num_trials, num_gradient_steps,")], "settings", id="settings-swapped"),
    pytest.param([("return np.sum(scores), scores", "return np.sum(scores)")], "fitness result", id="total-only"),
    pytest.param([("return np.sum(scores), scores", "return scores, np.sum(scores)")], "fitness result", id="swapped-result"),
    pytest.param(
        # A running total in the list of scores.
        [
            ("    scores = []\n", "    scores, total = [], 0\n"),
            ("scores.append(train_evaluate_agent(", "total += train_evaluate_agent("),
            ("num_evaluation_trials))\n", "num_evaluation_trials)\n        scores.append(total)\n"),
            ("return np.sum(scores), scores", "return total, scores"),
        ],
        "task scores",
        id="running-total-as-scores",
    ),
    pytest.param([("return np.sum(scores), scores", "return np.mean(scores), scores")], "total", id="mean-not-total"),
]


@pytest.mark.parametrize("edits, hint", WRONG_FITNESS)
def test_fitness_mistakes_get_their_hint(edits, hint):
    _fails_with(_check_fitness, _student(*edits), hint)


# --------------------------------------------------------------------------------------
# Exercise 2: create_new_agent's hyperparameters

LOOP = "    for name, (noise, low, high) in HYPER_MUTATION.items():\n"
PICK = "        value = getattr(agent2 if random.random() < 0.5 else agent1, name)\n"
NOISE = "        value += np.random.normal() * noise\n"
CLAMP = "        setattr(child, name, min(max(value, low), high))\n"
UNROLLED = """\
    def inherited(name):
        noise, _, _ = harlow.HYPER_MUTATION[name]
        return getattr(agent2 if random.random() < 0.5 else agent1, name) + np.random.normal() * noise

    learning_rate, gamma, value_cost, entropy_cost = (inherited(name) for name in harlow.HYPER_MUTATION)
    child.learning_rate = min(max(learning_rate, 0.0001), 0.01)
    child.gamma = min(max(gamma, 0.6), 0.99)
    child.value_cost = min(max({value_cost}, 0.1), 0.7)
    child.entropy_cost = min(max({entropy_cost}, 0.0001), 0.05)
"""


WRONG_OFFSPRING = [
    pytest.param([("child = copy.deepcopy(agent1)", "child = agent1")], "parent returned", id="child-is-agent1"),
    pytest.param([("child = copy.deepcopy(agent1)", "child = copy.copy(agent1)")], "parent changed", id="shallow-copy"),
    pytest.param(
        [
            (
                PICK + NOISE + CLAMP,
                "        parent = agent2 if random.random() < 0.5 else agent1\n"
                "        setattr(parent, name, getattr(parent, name) + np.random.normal() * noise)\n"
                "        setattr(child, name, min(max(getattr(parent, name), low), high))\n",
            )
        ],
        "parent changed",
        id="mutates-the-parent",
    ),
    pytest.param(
        [(LOOP + PICK + NOISE + CLAMP, UNROLLED.format(value_cost="gamma", entropy_cost="entropy_cost"))],
        "clamped with gamma",
        id="value_cost-clamped-with-gamma",
    ),
    pytest.param(
        [(LOOP + PICK + NOISE + CLAMP, UNROLLED.format(value_cost="value_cost", entropy_cost="gamma"))],
        "stuck at an edge",  # gamma is always above entropy_cost's range: only the edge shows
        id="entropy_cost-clamped-with-gamma",
    ),
    pytest.param(
        [
            (
                NOISE + CLAMP,
                "        value = min(max(value, low), high)\n"
                "        setattr(child, name, value + np.random.normal() * noise)\n",
            )
        ],
        "out of range",
        id="clamps-before-the-noise",
    ),
    pytest.param([(CLAMP, "        setattr(child, name, value)\n")], "out of range", id="no-clamp"),
    pytest.param(
        [(PICK, "        value = (getattr(agent1, name) + getattr(agent2, name)) / 2\n")],
        "far from parents",
        id="average-of-the-parents",
    ),
    pytest.param([(NOISE, "        value = np.random.uniform(low, high)\n")], "far from parents", id="fresh-random-value"),
    pytest.param([(PICK, "        value = getattr(child, name)\n")], "one parent", id="always-from-agent1"),
    pytest.param([(PICK, "        value = getattr(agent2, name)\n")], "one parent", id="always-from-agent2"),
    pytest.param([(NOISE, "")], "noise size", id="no-noise"),
    pytest.param([(NOISE, NOISE.replace("normal()", "rand()"))], "noise size", id="uniform-noise"),
    pytest.param([(NOISE, NOISE.replace("normal()", "normal(0, noise**2)"))], "noise size", id="variance-for-std"),
    pytest.param([(NOISE, NOISE.replace("noise\n", "noise * value\n"))], "noise size", id="noise-relative-to-value"),
]


@pytest.mark.parametrize("edits, hint", WRONG_OFFSPRING)
def test_offspring_mistakes_get_their_hint(edits, hint):
    _fails_with(_check_evolution, _student(*edits), hint)


STUCK_AT_AN_EDGE = [
    pytest.param([(NOISE, NOISE.replace("normal() * noise", "normal() * 100 * noise"))], id="noise-far-too-big"),
    pytest.param([(CLAMP, CLAMP.replace("min(max(value, low), high)", "max(min(value, low), high)"))], id="min-max-swapped"),
]


@pytest.mark.parametrize("edits", STUCK_AT_AN_EDGE)
def test_children_stuck_at_an_edge_get_a_hint_naming_every_cause(edits):
    """Noise far too big and min/max swapped pin the children to an edge of the range, as
    clamping gamma in their place would: the hint names every cause, and does not blame gamma."""
    message = not_yet(_check_evolution, _student(*edits))
    assert HINTS["clamped with gamma"] not in message
    assert HINTS["stuck at an edge"] in message
    assert "gamma" in message and "min and max in that order" in message and "np.random.normal()" in message


# --------------------------------------------------------------------------------------
# Exercise 2: update_population

RETURN = "    return population + newcomers, best_score"
REMOVAL = (
    "    population = list(population)\n"
    "    for _ in range(new_generation_new_individuals):\n"
    "        population.pop(random.randrange(len(population)))\n"
)
BEST = "        best_score = max(best_score, score)\n"


WRONG_UPDATES = [
    pytest.param([(RETURN, "    return population + newcomers")], "update result", id="forgets-the-best-score"),
    pytest.param([("newcomers.append((child, score))", "newcomers.append(child)")], "not pairs", id="stores-agents-only"),
    pytest.param(
        [("for _ in range(new_generation_new_individuals):\n        (agent1", "for _ in range(5):\n        (agent1")],
        "offspring count",
        id="always-5-offspring",
    ),
    pytest.param(
        [("(agent1, _), (agent2, _) = random.choices", "agent1, agent2 = random.choices")],
        "not parents",
        id="passes-individuals-not-agents",
    ),
    pytest.param(
        [("random.choices(parents_population, k=2)", "random.choices(population, k=2)")],
        "not parents",
        id="parents-from-the-whole-population",
    ),
    pytest.param(
        [("evaluate_individual(env, child, optimizer_func)", "evaluate_individual(env, agent1, optimizer_func)")],
        "not the child",
        id="scores-a-parent",
    ),
    pytest.param([(REMOVAL, "")], "size", id="removes-nobody"),
    pytest.param(
        [
            ("    population = list(population)\n", "    population = list(population) + newcomers\n"),
            (RETURN, "    return population, best_score"),
        ],
        "offspring lost",
        id="removes-after-adding",
    ),
    pytest.param(
        [("newcomers.append((child, score))", "newcomers.append((child, best_score))")],
        "stored score",
        id="stores-the-best-score",
    ),
    pytest.param(
        [(REMOVAL, "    population = random.choices(population, k=len(population) - new_generation_new_individuals)\n")],
        "survivors",
        id="survivors-drawn-with-replacement",
    ),
    pytest.param([(BEST, "")], "best", id="best-never-updated"),
    pytest.param(
        # best_score's line one indent too far left: after the loop, it sees only the last offspring.
        [
            (
                BEST + "        newcomers.append((child, score))\n",
                "        newcomers.append((child, score))\n    " + BEST.lstrip(),
            )
        ],
        "best",
        id="best-of-the-last-only",
    ),
    pytest.param(
        [(BEST, ""), (RETURN, "    return population + newcomers, max(score for _, score in newcomers)")],
        "best lowered",
        id="best-of-this-generation",
    ),
    pytest.param(
        [(REMOVAL, "    population = population[new_generation_new_individuals:]\n")], "same removed", id="removes-the-oldest"
    ),
    pytest.param(
        [(REMOVAL, "    population = sorted(population, key=lambda ind: ind[1])[new_generation_new_individuals:]\n")],
        "same removed",
        id="removes-the-worst",
    ),
]


@pytest.mark.parametrize("edits, hint", WRONG_UPDATES)
def test_update_population_mistakes_get_their_hint(edits, hint):
    _fails_with(_check_evolution, _student(*edits), hint)


def test_an_error_in_update_population_names_the_students_line():
    student = _student(("random.choices(parents_population, k=2)", "random.choice(parents_population, k=2)"))
    message = not_yet(_check_evolution, student)
    assert "update_population raised TypeError" in message and "random.choice(parents_population, k=2)" in message


def test_an_offspring_that_is_not_an_agent_gets_a_message_not_a_traceback():
    def returns_nothing(agent1, agent2):
        copy.deepcopy(agent1)

    message = not_yet(check_genetic_algorithm, returns_nothing, solutions.update_population)
    assert re.search("should return the child agent .an ActorCritic., got NoneType", message)


# --------------------------------------------------------------------------------------
# Exercise 3: Lamarckian inheritance


def _mean_state(trained):
    return {name: torch.stack([weights[name] for weights in trained]).mean(0) for name in trained[0]}


def baldwinian(born, trained):
    return copy.deepcopy(born)


def last_copy_only(born, trained):
    individual = copy.deepcopy(born)
    individual.load_state_dict(trained[-1])
    return individual


def hyperparameters_not_inherited(born, trained):
    individual = harlow.ActorCritic()
    individual.load_state_dict(_mean_state(trained))
    return individual


def weights_shared(born, trained):
    individual = copy.deepcopy(born)
    mean = _mean_state(trained)
    for name, p in individual.named_parameters():
        p.data = trained[0][name]  # the first copy's tensor itself, then overwritten in place
        p.data.copy_(mean[name])
    return individual


def written_into_born(born, trained):
    born.load_state_dict(_mean_state(trained))
    return born


def mutated_again(born, trained):
    individual = solutions.lamarckian_individual(born, trained)
    with torch.no_grad():
        for p in individual.parameters():
            p.add_(torch.randn_like(p) * harlow.PARAMETER_NOISE)
    return individual


def summed(born, trained):
    individual = copy.deepcopy(born)
    individual.load_state_dict({name: sum(weights[name] for weights in trained) for name in trained[0]})
    return individual


WRONG_INHERITANCE = [
    (baldwinian, "that is Baldwinian inheritance"),
    (last_copy_only, "the weights of one trained copy"),
    (hyperparameters_not_inherited, "they are the defaults of a new ActorCritic"),
    (weights_shared, "shares its weights with a trained copy"),
    (written_into_born, "shares its weights with the agent it was born as"),
    (mutated_again, "mutation would be applied twice"),
    (summed, "the mean of that weight over the trained copies"),
]


def test_the_solution_passes_the_lamarckian_check(capsys):
    assert check_lamarckian_individual(solutions.lamarckian_individual)
    assert "all checks passed" in capsys.readouterr().out


@pytest.mark.parametrize("wrong, hint", WRONG_INHERITANCE, ids=lambda item: getattr(item, "__name__", ""))
def test_lamarckian_mistakes_get_their_hint(capsys, wrong, hint):
    assert not check_lamarckian_individual(wrong)
    out = capsys.readouterr().out
    assert hint in out, out


def _live(student: dict, **settings) -> dict:
    """The notebook's live evolution (``evolution.evolve``) on a student namespace, at a small size."""
    from course_utils.harlow.evolution import evolve

    small = {"seed": 3, "population_size": 6, "generations": 2, "new_per_generation": 2, "num_tasks": 3,
             "num_gradient_steps": 5}
    select = functools.partial(student["choose_parents"], tournament_size=4)
    return evolve(student["update_population"], select, **{**small, **settings})


def test_the_race_runs_on_the_students_functions_and_they_decide_what_is_kept():
    """The notebook's live evolutions run on the student's update_population (which makes the
    offspring with their create_new_agent) and lamarckian_individual: a Lamarckian run whose
    function keeps the born agent is the Baldwinian run, and one that keeps the mean of the learned
    weights is another run."""
    student = _student()
    own, made, kept = student["evaluate_individual"], [], []
    create = student["create_new_agent"]

    def offspring(agent1, agent2):
        made.append(1)
        return create(agent1, agent2)

    def keep(born, trained):
        kept.append(len(trained))
        return solutions.lamarckian_individual(born, trained)

    student["create_new_agent"] = offspring
    run = _live(student, lamarckian_individual=keep)
    # update_population runs twice a generation from one random state: to make the offspring, then
    # with their scores; each individual is kept once, after it was scored.
    assert len(made) == 2 * 2 * 2 and kept == [3] * (6 + 2 * 2) and run["settings"]["inheritance"] == "lamarckian"
    assert student["evaluate_individual"] is own  # the stand-in is gone after the run
    assert run["mean"] == _live(student, lamarckian_individual=keep)["mean"]
    born_only = _live(student, lamarckian_individual=baldwinian)
    baldwin = _live(student)
    assert born_only["mean"] == baldwin["mean"] and run["mean"][1:] != baldwin["mean"][1:]


def test_the_live_evolution_keeps_what_the_students_update_population_returns():
    """The live evolution has no replacement of its own: an update_population that throws its
    offspring away keeps the first population, and the scores it stores are the ones recorded."""
    keeps_old = _student(("    population = list(population)\n", "    old, population = population, list(population)\n"),
                         ("return population + newcomers, best_score", "return old, best_score"))
    run = _live(keeps_old)
    assert run["mean"] == [run["mean"][0]] * 3 and run["mean_gamma"] == [run["mean_gamma"][0]] * 3
    inflated = _live(_student(("newcomers.append((child, score))", "newcomers.append((child, score + 1000))")))
    assert inflated["best"][0] < 1000 <= inflated["best"][1]


def test_offspring_made_differently_the_second_time_are_scored_on_their_own(monkeypatch):
    """An answer drawing from a generator of its own makes other offspring when update_population
    runs again: each is then scored when it asks, so the scores stored are still its own."""
    from course_utils.harlow import evolution

    batches = []
    scorer = evolution.evaluate_population
    def counted(params, *args, **kwargs):
        batches.append(len(next(iter(params.values()))))
        return scorer(params, *args, **kwargs)

    monkeypatch.setattr(evolution, "evaluate_population", counted)
    student = _student(("value += np.random.normal() * noise", "value += OWN.normal() * noise"))
    student["OWN"] = np.random.default_rng(0)
    run = _live(student)
    assert batches == [6, 2, 1, 1, 2, 1, 1] and all(-60 <= m <= 60 for m in run["mean"])


def test_the_stand_in_goes_back_when_the_students_update_population_fails():
    student = _student(("    population = list(population)\n", "    raise KeyError('mine')\n"))
    own = student["evaluate_individual"]
    with pytest.raises(KeyError, match="mine"):
        _live(student)
    assert student["evaluate_individual"] is own
    del student["evaluate_individual"]
    with pytest.raises(ValueError, match="should call evaluate_individual"):
        _live(student)
