"""Exercise checks for tutorial 1 (Harlow meta-RL): ``evaluate_individual`` and the genetic
algorithm (``create_new_agent``'s hyperparameters and ``update_population``); Lamarckian
inheritance has its own module, ``checks_lamarck``.

Each exercise is an ``Exercise`` (see ``checking``): ``drive`` runs the student's answer on a
set of cases and records plain facts about what happened; ``judge`` reads those facts and gives
the first hint that applies. The check cell runs both on the public cases; grading runs ``drive``
on the hidden cases in the student's kernel and ``judge`` in the grader.

To stay fast and to see *how* the student's code calls the course's functions, ``drive``
temporarily replaces the functions it calls (``train_evaluate_agent``, ``evaluate_individual``,
``create_new_agent``) by recording stand-ins, and records what they saw: how often they were
called, with which settings, whether the agent itself was trained, which parents were given,
and where each individual of the returned population came from. ``evaluate_individual`` also
runs once for real on a tiny budget. ``create_new_agent`` makes 200 children, whose
hyperparameters are recorded as arrays; ``judge`` computes their statistics.
"""

from __future__ import annotations

import contextlib
import inspect
import random
import sys

import numpy as np
import torch

from course_utils import facts, records
from course_utils.check_helpers import as_number, is_error, shown
from course_utils.checking import Exercise, Problem, attempt, check_length, fmt, raise_if_error
from course_utils.harlow.agent import HYPER_MUTATION, ActorCritic, train_evaluate_agent
from course_utils.harlow.env import HarlowExperimentEnv
from course_utils.records import encode
from course_utils.runtime import seed_torch


@contextlib.contextmanager
def _replaced(fn, name: str, stand_in):
    """Replace ``name`` where the student's ``fn`` looks it up (its globals) and in
    ``course_utils.harlow``; yields True if the student's code can see the stand-in."""
    front_door = sys.modules.get("course_utils.harlow")  # where ``train_evaluate_agent`` is looked up
    places = (getattr(fn, "__globals__", None), vars(front_door) if front_door else None)
    namespaces = [ns for ns in places if ns is not None and name in ns]
    saved = [(ns, ns[name]) for ns in namespaces]
    for ns in namespaces:
        ns[name] = stand_in
    try:
        yield bool(namespaces)
    finally:
        for ns, value in saved:
            ns[name] = value


def _weights(agent) -> dict[str, torch.Tensor]:
    """Copies of what ``agent`` really holds (``facts.weights``): a copy the answer makes can be
    of a class whose ``state_dict()`` reports the weights the check wants."""
    return facts.weights(agent)


def _hyperparameters(agent) -> dict:
    """The hyperparameters in ``agent``'s own dict (a patched ``ActorCritic.hyperparameters`` or a
    property on the class takes no part)."""
    values = {name: facts.attribute(agent, name) for name in HYPER_MUTATION}
    # Plain numbers only: an object whose == always says yes would make a changed parent look unchanged.
    return {name: value if type(value) in (float, int) else ("not a number", id(value)) for name, value in values.items()}


def _weights_seen(agent) -> dict[str, list[float]]:
    """What the record holds of an agent's weights, per tensor: its sum and sum of squares (in float64)
    and its first four numbers. The judge compares them with the course's on the same case, exactly;
    every weight itself would be about 1 MB of record for this exercise's six snapshots."""
    return _tensors_seen(_weights(agent))


def _tensors_seen(tensors: dict) -> dict[str, list[float]]:
    """``_weights_seen`` of a dict of tensors (name -> tensor)."""
    seen = {}
    for name, tensor in tensors.items():
        values = facts.numbers(tensor).astype(np.float64).ravel()
        seen[name] = [float(values.sum()), float((values * values).sum()), *(float(v) for v in values[:4])]
    return seen


def _same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(facts.tensors_equal(a[k], b[k]) for k in a)


def _seed(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    seed_torch(seed)


def _index(items: list, item) -> int | None:
    """Where ``item`` itself (not an equal object) is in ``items``, or None."""
    return next((k for k, candidate in enumerate(items) if candidate is item), None)


# --------------------------------------------------------------------------------------
# Exercise 1: evaluate_individual
#
# A planned case runs the student's function with a stand-in for train_evaluate_agent that
# returns the case's scores in turn (and 0.0 after them); the real case runs it for real.

_SETTINGS = ("num_gradient_steps", "num_trials", "num_evaluation_trials")


def _fitness_cases() -> dict:
    return {
        "planned": [{"seed": 0, "settings": fitness_settings(4, 7, 6, 9), "scores": [3.0, -1.0, 7.0, 5.0]}],
        "real": {"seed": 0, "settings": fitness_settings(2, 2, 6, 4)},
    }


def fitness_settings(tasks: int, steps: int, trials: int, evaluation: int) -> dict:
    """The settings of one fitness case, by the names ``evaluate_individual`` takes."""
    return {"num_tasks": tasks, "num_gradient_steps": steps, "num_trials": trials, "num_evaluation_trials": evaluation}


def _drive_planned(case: dict, evaluate_individual) -> dict:
    _seed(case["seed"])
    env = HarlowExperimentEnv()
    env.reset(seed=case["seed"])
    agent = ActorCritic()
    agent.learning_rate = 0.01
    original = _weights_seen(agent)
    planned, calls = case["scores"], []
    signature = inspect.signature(train_evaluate_agent)

    def stand_in(*args, **kwargs):
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as error:
            calls.append({"bad_arguments": str(error)})
            raise TypeError(f"train_evaluate_agent() {error}") from None
        bound.apply_defaults()
        learner = bound.arguments["agent"]
        calls.append(
            {
                "trained_the_agent": learner is agent,
                # the weights themselves, which the judge compares with the agent's it started from
                "learner_weights": _weights_seen(learner),
                "settings": {k: encode(bound.arguments[k]) for k in _SETTINGS},
            }
        )
        # Pretend to learn: training changes the agent it is given (its real parameters, not what
        # an overridden parameters() of the answer's copy would hand out).
        facts.add_to_parameters(learner, 1.0)
        return planned[len(calls) - 1] if len(calls) <= len(planned) else 0.0

    with _replaced(evaluate_individual, "train_evaluate_agent", stand_in) as visible:
        result = None
        if visible:
            result = attempt("evaluate_individual", evaluate_individual, env, agent, torch.optim.RMSprop, **case["settings"])
    return {"visible": visible, "calls": calls, "result": encode(result), "agent_weights": original,
            "agent_after": _weights_seen(agent)}


def _drive_fitness(cases: dict, evaluate_individual) -> dict:
    _seed(0)
    env = HarlowExperimentEnv()
    env.reset(seed=0)
    # Warm up torch's optimizer machinery (seconds, the first time) outside the time limit.
    train_evaluate_agent(env, ActorCritic(), num_gradient_steps=1, num_evaluation_trials=1)
    planned = [_drive_planned(case, evaluate_individual) for case in cases["planned"]]
    real = cases["real"]
    _seed(real["seed"])
    env.reset(seed=real["seed"])
    agent = ActorCritic()
    original = _weights_seen(agent)
    result = attempt("evaluate_individual", evaluate_individual, env, agent, torch.optim.RMSprop, **real["settings"])
    return {"planned": planned, "real": {"result": encode(result), "agent_weights": original,
                                         "agent_after": _weights_seen(agent)}}


def _fitness_result(result) -> tuple[float, list[float]]:
    raise_if_error(result)
    try:
        total, scores = result
        return float(total), [float(s) for s in scores]
    except (TypeError, ValueError):
        raise Problem(f"expected (total score, list of scores), got {shown(result, 300)}.") from None


def _unchanged(weights, original) -> bool:
    """Whether recorded ``weights`` (``_weights_seen``) are ``original``'s: the agent's weights as the
    course's own drive of the same case recorded them (the judge's, never the answer's)."""
    if type(weights) is not dict or type(original) is not dict or weights.keys() != original.keys():
        return False
    try:
        return all(np.array_equal(np.asarray(weights[k], dtype=float), np.asarray(original[k], dtype=float))
                   for k in original)
    except (TypeError, ValueError):
        return False


def _judge_planned(case: dict, seen: dict, reference: dict) -> None:
    settings, planned = case["settings"], case["scores"]
    tasks = settings["num_tasks"]
    if seen["visible"] is not True:
        raise Problem("evaluate_individual should call train_evaluate_agent(...) for each task.")
    calls = seen["calls"]
    for call in calls:
        if "bad_arguments" in call:
            raise Problem(f"train_evaluate_agent was called with arguments it does not take ({call['bad_arguments']}).")
    raise_if_error(seen["result"])
    if len(calls) != tasks:
        raise Problem(
            f"with num_tasks={tasks}, train_evaluate_agent was called {len(calls)} times. "
            "Hint: loop `for _ in range(num_tasks):` and train and score once per task."
        )
    if any(call["trained_the_agent"] is not False for call in calls):
        raise Problem(
            "the agent itself was trained, so its weights changed. Hint: train a copy, "
            "`copy.deepcopy(agent)`: the Baldwin effect inherits the ability to learn, not what was learned."
        )
    original = reference["agent_weights"]
    if not all(_unchanged(call.get("learner_weights"), original) for call in calls):
        raise Problem(
            "some tasks started from weights trained on an earlier task. Hint: make a fresh "
            "`copy.deepcopy(agent)` inside the loop, so that every task starts from the agent's own weights."
        )
    if not _unchanged(seen.get("agent_after"), original):
        raise Problem("the agent's weights changed. Hint: only ever train copies of it.")
    wanted = {k: settings[k] for k in _SETTINGS}
    for call in calls:
        if call["settings"] != wanted:
            raise Problem(
                f"train_evaluate_agent got {call['settings']}, expected {wanted}. "
                "Hint: pass num_gradient_steps, num_trials and num_evaluation_trials on to it."
            )
    total, scores = _fitness_result(seen["result"])
    if scores != planned:
        raise Problem(f"the scores of the {tasks} tasks were {fmt(planned)}, you returned {fmt(scores)}.")
    if not np.isclose(total, sum(planned)):
        raise Problem(f"the total of scores {fmt(planned)} is {sum(planned):g}, you returned {total!r}.")


def _judge_fitness(got: dict, expected, cases: dict) -> None:
    check_length(got["planned"], cases["planned"], "planned cases")
    for case, seen, reference in zip(cases["planned"], got["planned"], expected["planned"], strict=True):
        _judge_planned(case, seen, reference)
    # Once for real, on a tiny budget: plausible scores, and the agent must come out unchanged.
    settings, real = cases["real"]["settings"], got["real"]
    tasks, trials = settings["num_tasks"], settings["num_evaluation_trials"]
    total, scores = _fitness_result(real["result"])
    if len(scores) != tasks or not all(-trials <= s <= trials for s in scores) or not np.isclose(total, sum(scores)):
        raise Problem(
            f"with {tasks} tasks of {trials} evaluation trials, expected {tasks} scores between -{trials} and {trials} "
            f"and their total, got {total!r}, {scores!r}."
        )
    if not _unchanged(real.get("agent_after"), expected["real"]["agent_weights"]):
        raise Problem("after really training, the agent's weights changed. Hint: train `copy.deepcopy(agent)`.")


FITNESS = Exercise(
    name="evaluate_individual",
    grade_id="test_evaluate_individual",
    cases=_fitness_cases,
    drive=_drive_fitness,
    judge=_judge_fitness,
    reference=("evaluate_individual",),
)


def check_evaluate_individual(evaluate_individual) -> bool:
    """Check ``evaluate_individual(env, agent, optimizer_func, num_tasks, num_gradient_steps,
    num_trials, num_evaluation_trials)`` -> (total score, list of per-task scores)."""
    return FITNESS.check(evaluate_individual)


# --------------------------------------------------------------------------------------
# Exercise 2: the genetic algorithm. Offspring: 200 children of two parents whose
# hyperparameters sit near the ends of their ranges, so that clamps matter.


def _evolution_cases() -> dict:
    return {
        "offspring": {
            "seed": 1, "children": 200,
            "parents": [hypers(0.0099, 0.62, 0.68, 0.0002), hypers(0.00015, 0.985, 0.12, 0.049)],
        },
        "update": {
            "scores": [10.0 * (k + 1) for k in range(10)], "parents": [9, 7, 8], "best": 100.0, "count": 4,
            "main": {"seed": 0, "new_scores": [120.0, 30.0, 150.0, 60.0]},
            "low": {"seed": 1, "new_scores": [5.0, 6.0, 7.0, 8.0]},
            "removal_seeds": list(range(10, 22)),
        },
    }


def hypers(learning_rate: float, gamma: float, value_cost: float, entropy_cost: float) -> dict:
    """One individual's hyperparameters, by the names the genetic algorithm uses."""
    return {"learning_rate": learning_rate, "gamma": gamma, "value_cost": value_cost, "entropy_cost": entropy_cost}


def _drive_offspring(case: dict, create_new_agent) -> dict:
    _seed(case["seed"])
    a, b = ActorCritic(), ActorCritic()
    for parent, hypers in zip((a, b), case["parents"], strict=True):
        for name, value in hypers.items():
            setattr(parent, name, value)
    seen, children = {"error": None, "returned_a_parent": False, "not_an_agent": None}, []
    seen["parents_before"] = _parents_seen(a, b)
    for _ in range(case["children"]):
        child = attempt("create_new_agent", create_new_agent, a, b)
        if is_error(child):
            seen["error"] = child
            break
        if child is a or child is b:
            seen["returned_a_parent"] = True
            break
        if not facts.is_instance(child, ActorCritic):
            seen["not_an_agent"] = type(child).__name__
            break
        children.append(child)
    seen["parents_after"] = _parents_seen(a, b)
    try:
        # Lists of floats (not arrays): records then compare with ==, as plain data.
        seen["hyperparameters"] = {name: [float(getattr(c, name)) for c in children] for name in HYPER_MUTATION}
    except Exception as error:
        problem = f"the children's hyperparameters should be numbers ({type(error).__name__}: {error})."
        seen["hyperparameters"] = records.error(problem)
    return seen


def _parents_seen(*parents) -> list:
    """The parents' weights (``_weights_seen``) and hyperparameters, for the judge to compare with
    the course's parents before any child was made."""
    try:
        return [{"weights": _weights_seen(p), "hypers": _hyperparameters(p)} for p in parents]
    except Exception as error:  # noqa: BLE001 (the answer left a parent that cannot be read)
        return records.error(f"the parents could not be read after making children ({type(error).__name__}).")


def _parents_unchanged(after, before) -> bool:
    if type(after) is not list or type(before) is not list or len(after) != len(before):
        return False
    return all(type(a) is dict and _unchanged(a.get("weights"), b["weights"]) and a.get("hypers") == b["hypers"]
               for a, b in zip(after, before, strict=True))


def _judge_offspring(case: dict, seen: dict, reference: dict) -> None:
    raise_if_error(seen["error"])
    if seen["returned_a_parent"] is not False:
        raise Problem("create_new_agent returned a parent itself. Hint: the child starts as `copy.deepcopy(agent1)`.")
    if seen["not_an_agent"] is not None:
        raise Problem(
            f"create_new_agent should return the child agent (an ActorCritic), got {seen['not_an_agent']}. "
            "Hint: `return child` at the end."
        )
    if not _parents_unchanged(seen.get("parents_after"), reference["parents_before"]):
        raise Problem("making a child changed a parent. Hint: change only the child's values (`setattr(child, ...)`).")
    raise_if_error(seen["hyperparameters"])
    values = {}
    for name in HYPER_MUTATION:
        value = seen["hyperparameters"][name]
        if type(value) is not list or len(value) != case["children"] or not all(type(x) is float for x in value):
            raise Problem(f"the record of the children's {name} is not {case['children']} numbers.")
        values[name] = np.array(value)
    gamma = values["gamma"]
    for name, (noise, low, high) in HYPER_MUTATION.items():
        if name == "gamma":
            continue
        at_edge = np.isclose(values[name], low) | np.isclose(values[name], high)
        from_gamma = np.isclose(values[name], np.clip(gamma, low, high))
        # gamma (0.6 to 0.99) lies mostly above value_cost's and entropy_cost's ranges, so a
        # child clamped from gamma mostly sits at the top edge; only children whose gamma fell
        # inside the range tell that mistake apart from swapped min/max or far too much noise.
        if np.mean(from_gamma) > 0.5 and np.any(from_gamma & ~at_edge):
            raise Problem(
                f"the children's {name} follows their discount factor gamma: it was clamped using gamma. "
                f"Hint: clamp each hyperparameter using its own value, min(max({name}, low), high)."
            )
        if np.mean(at_edge) > 0.5:
            raise Problem(
                f"{np.mean(at_edge):.0%} of the children's {name} sit exactly at an edge of its range "
                f"[{low:g}, {high:g}]. Hint: clamp {name}'s own noisy value, min(max({name} + noise, low), high) "
                f"(not another hyperparameter such as gamma, and min and max in that order), with noise "
                f"`np.random.normal() * {noise:g}`."
            )
    first, second = case["parents"]
    for name, (noise, low, high) in HYPER_MUTATION.items():
        got, pa, pb = values[name], first[name], second[name]
        if not np.all(np.isfinite(got)) or got.min() < low - 1e-12 or got.max() > high + 1e-12:
            raise Problem(
                f"{name} must stay within [{low:g}, {high:g}], got values from {got.min():.5g} to {got.max():.5g}. "
                "Hint: clamp after adding the noise: min(max(value, low), high)."
            )
        nearest = np.minimum(abs(got - pa), abs(got - pb))
        if nearest.max() > 5 * noise:
            raise Problem(
                f"the parents' {name} are {pa:g} and {pb:g}, but a child got {got[np.argmax(nearest)]:.5g}, "
                f"further than 5 noise standard deviations ({noise:g}) from both. Hint: start from one parent's value "
                f"and add `np.random.normal() * noise`."
            )
        from_a = np.mean(abs(got - pa) < abs(got - pb))
        if not 0.3 < from_a < 0.7:
            raise Problem(
                f"{from_a:.0%} of the children took {name} from the first parent. Hint: take each hyperparameter "
                "from either parent with probability 1/2 (`random.random() < 0.5`)."
            )
        inside = (got > low + 1e-12) & (got < high - 1e-12)
        spread = np.std(np.where(abs(got - pa) < abs(got - pb), got - pa, got - pb)[inside])
        if not 0.4 * noise < spread < 2 * noise:
            raise Problem(
                f"the children's {name} vary by {spread:.3g} around their parent's value, expected about {noise:g}. "
                f"Hint: add Gaussian noise of standard deviation {noise:g}: `np.random.normal() * noise`."
            )


def _drive_update_run(update_population, case: dict, seed: int, new_scores: list[float]) -> dict:
    """Run update_population once with stand-ins for create_new_agent and evaluate_individual.

    Records: how many children the stand-in made, which parents (index in parents_population,
    None for anything else) each call got, which child (None: not one) each evaluation got, and
    the returned population as [where from ("old", "child", "other"), index, score]."""
    _seed(seed)
    population, parent_agents, old_agents = [], [], []
    made, given, evaluated = [], [], []

    def fake_create(agent1, agent2, *args, **kwargs):
        given.append([_index(parent_agents, agent1), _index(parent_agents, agent2)])
        made.append(ActorCritic(hidden_size=2))
        return made[-1]

    def fake_evaluate(env, agent, *args, **kwargs):
        score = float(new_scores[len(evaluated) % len(new_scores)])
        evaluated.append(_index(made, agent))
        return score, [score]

    result = None
    with _replaced(update_population, "create_new_agent", fake_create) as sees_create:
        with _replaced(update_population, "evaluate_individual", fake_evaluate) as sees_evaluate:
            if sees_create and sees_evaluate:
                # Built here, right after the seed (as the answer's random draws then follow the
                # same ones): an answer that cannot see the stand-ins costs no agents.
                population += [(ActorCritic(hidden_size=2), float(score)) for score in case["scores"]]
                parents = [population[k] for k in case["parents"]]
                parent_agents += [agent for agent, _ in parents]
                old_agents += [agent for agent, _ in population]
                result = attempt(
                    "update_population", update_population, HarlowExperimentEnv(), torch.optim.RMSprop, list(population),
                    parents, case["best"], new_generation_new_individuals=case["count"],
                )
    seen = {"visible": sees_create and sees_evaluate, "children": len(made), "parents_given": given, "evaluated": evaluated}
    if result is None or is_error(result):
        return {**seen, "result": result}
    try:
        new_population, best = result
    except Exception:
        return {**seen, "result": {"not_a_pair": encode(result)}}
    individuals = []
    try:
        for individual in new_population:
            agent, score = individual[0], individual[1]
            child, old = _index(made, agent), _index(old_agents, agent)
            where = ["child", child] if child is not None else ["old", old] if old is not None else ["other", None]
            individuals.append([*where, encode(score)])
    except Exception:
        individuals = None
    return {**seen, "result": {"population": individuals, "best": encode(best)}}


def _drive_evolution(cases: dict, create_new_agent, update_population) -> dict:
    offspring, update = _drive_offspring(cases["offspring"], create_new_agent), cases["update"]
    runs = {name: _drive_update_run(update_population, update, update[name]["seed"], update[name]["new_scores"])
            for name in ("main", "low")}
    runs["removal"] = [_drive_update_run(update_population, update, seed, [1.0]) for seed in update["removal_seeds"]]
    return {"offspring": offspring, "update": runs}


def _population(run: dict) -> tuple[list[tuple[str, int | None, float]], object]:
    """The returned population as (where from, index, score), and the best score."""
    if run["visible"] is not True:
        raise Problem("update_population should call create_new_agent(...) and evaluate_individual(...) for each offspring.")
    result = run["result"]
    raise_if_error(result)
    if type(result) is not dict or "population" not in result:
        got = result.get("not_a_pair") if type(result) is dict else result
        raise Problem(f"expected (new population, best score), got {shown(got, 300)}.")
    try:
        return [(where, index, float(score)) for where, index, score in result["population"]], result["best"]
    except (TypeError, ValueError):
        raise Problem("the population should be a list of (agent, score) pairs.") from None


def _judge_run(case: dict, run: dict, new_scores: list[float]) -> tuple[list, object]:
    """The checks every update_population run must pass: what it called, and what it kept."""
    new, best = _population(run)
    count, old_scores = case["count"], case["scores"]
    if run["children"] != count:
        raise Problem(f"with new_generation_new_individuals={count}, create_new_agent was called {run['children']} times.")
    if not all(type(k) is int for pair in run["parents_given"] for k in pair):
        raise Problem(
            "create_new_agent was not given two agents from parents_population. Hint: "
            "`(agent1, _), (agent2, _) = random.choices(parents_population, k=2)`: individuals are (agent, score)."
        )
    evaluated = run["evaluated"]
    if set(evaluated) != set(range(count)):
        raise Problem("evaluate_individual should score each new agent (the one create_new_agent returned).")
    if len(new) != len(old_scores):
        raise Problem(
            f"the population had {len(old_scores)} individuals and {len(new)} after the update. "
            "Hint: remove as many random old individuals as you add."
        )
    scores = {child: float(new_scores[call % len(new_scores)]) for call, child in enumerate(evaluated)}
    newcomers = [(index, score) for where, index, score in new if where == "child"]
    if len(newcomers) != count:
        raise Problem(f"the new population holds {len(newcomers)} of the {count} offspring; it should hold all of them.")
    for index, score in newcomers:
        if score != scores[index]:
            raise Problem(
                f"an offspring was stored with score {score:g} but evaluate_individual gave it {scores[index]:g}. "
                "Hint: store (new_agent, score) with the total score evaluate_individual returns."
            )
    survivors = [(where, index, score) for where, index, score in new if where != "child"]
    if (
        any(where != "old" or type(index) is not int or old_scores[index] != score for where, index, score in survivors)
        or len({index for _, index, _ in survivors}) != len(survivors)
    ):
        raise Problem(
            f"the survivors should be {len(old_scores) - count} different individuals of the old population, "
            "with their old scores."
        )
    return new, best


def _judge_update(case: dict, runs: dict) -> None:
    main, low = case["main"]["new_scores"], case["low"]["new_scores"]
    _, best = _judge_run(case, runs["main"], main)
    want = max([case["best"], *main])
    offspring = ", ".join(f"{s:g}" for s in main[:-1]) + f" and {main[-1]:g}"
    if as_number(best) != want:
        raise Problem(
            f"the best score was {case['best']:g} and the offspring scored {offspring}: expected {want:g}, "
            f"got {shown(best, 300)}."
        )
    _, low_best = _judge_run(case, runs["low"], low)
    if as_number(low_best) != case["best"]:
        old = f"{case['best']:g}"
        raise Problem(f"when no offspring beats the best score of {old}, it should stay {old}, got {shown(low_best, 300)}.")
    check_length(runs["removal"], case["removal_seeds"], "removal runs")
    removed = []
    for run in runs["removal"]:
        new, _ = _judge_run(case, run, [1.0])
        removed.append(frozenset(range(len(case["scores"]))) - {index for where, index, _ in new if where == "old"})
    if len(set(removed)) < 4 or all(r == frozenset(range(case["count"])) for r in removed):
        raise Problem(
            "the same old individuals are removed every time. Hint: remove random individuals, e.g. "
            "`population.pop(random.randrange(len(population)))`: selection happens when parents are chosen."
        )


def _judge_evolution(got: dict, expected, cases: dict) -> None:
    _judge_offspring(cases["offspring"], got["offspring"], expected["offspring"])
    _judge_update(cases["update"], got["update"])


EVOLUTION = Exercise(
    name="genetic algorithm",
    grade_id="test_genetic_algorithm",
    cases=_evolution_cases,
    drive=_drive_evolution,
    judge=_judge_evolution,
    reference=("create_new_agent", "update_population"),
)


def check_genetic_algorithm(create_new_agent, update_population) -> bool:
    """Check the offspring's hyperparameters (inherited, mutated, each clamped to its own
    range) and ``update_population(env, optimizer_func, population, parents_population,
    best_score, new_generation_new_individuals)`` -> (new population, best score)."""
    return EVOLUTION.check(create_new_agent, update_population)


EXERCISES = {exercise.grade_id: exercise for exercise in (FITNESS, EVOLUTION)}
"""This module's exercises by the grade id of their hidden-test cell (Lamarckian inheritance: ``checks_lamarck``)."""
