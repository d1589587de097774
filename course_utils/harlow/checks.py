"""Exercise checks for tutorial 1 (Harlow meta-RL): ``evaluate_individual`` and the genetic
algorithm (``create_new_agent``'s hyperparameters and ``update_population``).

Like every course check, each function is used both by the student's check cell and by the
hidden nbgrader test (``strict=True``). To stay fast and to see *how* the student's code
calls the course's functions, the checks temporarily replace the functions it calls
(``train_evaluate_agent``, ``evaluate_individual``, ``create_new_agent``) by recording
stand-ins, then run it once more for real on a tiny budget.
"""

from __future__ import annotations

import contextlib
import inspect
import random
import sys

import numpy as np
import torch

from course_utils.checking import Problem, call_student, fmt, verdict
from course_utils.harlow.agent import HYPER_MUTATION, ActorCritic, train_evaluate_agent
from course_utils.harlow.env import HarlowExperimentEnv


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
    return {k: v.detach().clone() for k, v in agent.state_dict().items()}


def _same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def _seed(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


# --------------------------------------------------------------------------------------
# Exercise 1: evaluate_individual


def check_evaluate_individual(evaluate_individual, strict: bool = False) -> bool:
    """Check ``evaluate_individual(env, agent, optimizer_func, num_tasks, num_gradient_steps,
    num_trials, num_evaluation_trials)`` -> (total score, list of per-task scores)."""

    def check():
        _seed(0)
        env = HarlowExperimentEnv()
        env.reset(seed=0)
        # Warm up torch's optimizer machinery (seconds, the first time) outside the time limit.
        train_evaluate_agent(env, ActorCritic(), num_gradient_steps=1, num_evaluation_trials=1)
        agent = ActorCritic()
        agent.learning_rate = 0.01
        original = _weights(agent)
        planned = [3.0, -1.0, 7.0, 5.0]
        calls = []
        signature = inspect.signature(train_evaluate_agent)

        def stand_in(*args, **kwargs):
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError as error:
                raise Problem(f"train_evaluate_agent was called with arguments it does not take ({error}).") from None
            bound.apply_defaults()
            learner = bound.arguments["agent"]
            calls.append(
                {
                    "agent": learner,
                    "same_start": _same(_weights(learner), original),
                    "settings": {k: bound.arguments[k] for k in ("num_gradient_steps", "num_trials", "num_evaluation_trials")},
                }
            )
            with torch.no_grad():  # pretend to learn: training changes the agent it is given
                for p in learner.parameters():
                    p.add_(1.0)
            return planned[len(calls) - 1] if len(calls) <= len(planned) else 0.0

        settings = {"num_tasks": 4, "num_gradient_steps": 7, "num_trials": 6, "num_evaluation_trials": 9}
        with _replaced(evaluate_individual, "train_evaluate_agent", stand_in) as visible:
            if not visible:
                raise Problem("evaluate_individual should call train_evaluate_agent(...) for each task.")
            result = call_student("evaluate_individual", evaluate_individual, env, agent, torch.optim.RMSprop, **settings)
        if len(calls) != 4:
            raise Problem(
                f"with num_tasks=4, train_evaluate_agent was called {len(calls)} times. "
                "Hint: loop `for _ in range(num_tasks):` and train and score once per task."
            )
        if any(call["agent"] is agent for call in calls):
            raise Problem(
                "the agent itself was trained, so its weights changed. Hint: train a copy, "
                "`copy.deepcopy(agent)`: the Baldwin effect inherits the ability to learn, not what was learned."
            )
        if not all(call["same_start"] for call in calls):
            raise Problem(
                "some tasks started from weights trained on an earlier task. Hint: make a fresh "
                "`copy.deepcopy(agent)` inside the loop, so that every task starts from the agent's own weights."
            )
        if not _same(_weights(agent), original):
            raise Problem("the agent's weights changed. Hint: only ever train copies of it.")
        wanted = {k: settings[k] for k in ("num_gradient_steps", "num_trials", "num_evaluation_trials")}
        for call in calls:
            if call["settings"] != wanted:
                raise Problem(
                    f"train_evaluate_agent got {call['settings']}, expected {wanted}. "
                    "Hint: pass num_gradient_steps, num_trials and num_evaluation_trials on to it."
                )
        try:
            total, scores = result
            scores = [float(s) for s in scores]
        except (TypeError, ValueError):
            raise Problem(f"expected (total score, list of scores), got {result!r}.") from None
        if scores != planned:
            raise Problem(f"the scores of the 4 tasks were {fmt(planned)}, you returned {fmt(scores)}.")
        if not np.isclose(float(total), sum(planned)):
            raise Problem(f"the total of scores {fmt(planned)} is {sum(planned):g}, you returned {total!r}.")

        # Once for real, on a tiny budget: the agent must come out unchanged.
        total, scores = call_student(
            "evaluate_individual",
            evaluate_individual,
            env,
            agent,
            torch.optim.RMSprop,
            num_tasks=2,
            num_gradient_steps=2,
            num_trials=6,
            num_evaluation_trials=4,
        )
        if len(scores) != 2 or not all(-4 <= s <= 4 for s in scores) or not np.isclose(float(total), float(np.sum(scores))):
            raise Problem(
                f"with 2 tasks of 4 evaluation trials, expected 2 scores between -4 and 4 and their total, "
                f"got {total!r}, {scores!r}."
            )
        if not _same(_weights(agent), original):
            raise Problem("after really training, the agent's weights changed. Hint: train `copy.deepcopy(agent)`.")

    return verdict("evaluate_individual", check, strict)


# --------------------------------------------------------------------------------------
# Exercise 2: the genetic algorithm


def _parents():
    """Two parents whose hyperparameters sit near the ends of their ranges, so that clamps matter."""
    a, b = ActorCritic(), ActorCritic()
    a.learning_rate, a.gamma, a.value_cost, a.entropy_cost = 0.0099, 0.62, 0.68, 0.0002
    b.learning_rate, b.gamma, b.value_cost, b.entropy_cost = 0.00015, 0.985, 0.12, 0.049
    return a, b


def _check_offspring(create_new_agent) -> None:
    _seed(1)
    a, b = _parents()
    saved = [(_weights(p), p.hyperparameters()) for p in (a, b)]
    children = []
    for _ in range(200):
        child = call_student("create_new_agent", create_new_agent, a, b)
        if child is a or child is b:
            raise Problem("create_new_agent returned a parent itself. Hint: the child starts as `copy.deepcopy(agent1)`.")
        if not isinstance(child, ActorCritic):
            raise Problem(
                f"create_new_agent should return the child agent (an ActorCritic), got {type(child).__name__}. "
                "Hint: `return child` at the end."
            )
        children.append(child)
    for parent, (weights, hypers) in zip((a, b), saved, strict=True):
        if not _same(_weights(parent), weights) or parent.hyperparameters() != hypers:
            raise Problem("making a child changed a parent. Hint: change only the child's values (`setattr(child, ...)`).")
    values = {name: np.array([float(getattr(c, name)) for c in children]) for name in HYPER_MUTATION}
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
    for name, (noise, low, high) in HYPER_MUTATION.items():
        got, pa, pb = values[name], getattr(a, name), getattr(b, name)
        if got.min() < low - 1e-12 or got.max() > high + 1e-12:
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


def _individuals(population):
    try:
        return [(ind[0], float(ind[1])) for ind in population]
    except (TypeError, IndexError, ValueError):
        raise Problem("the population should be a list of (agent, score) pairs.") from None


def _run_update(update_population, seed: int, new_scores, old_best: float = 100.0, count: int = 4):
    """Run the student's update_population with recording stand-ins; returns what happened."""
    _seed(seed)
    population = [(ActorCritic(hidden_size=2), 10.0 * (k + 1)) for k in range(10)]
    parents = [population[9], population[7], population[8]]
    log = {"children": [], "parents": [], "evaluated": []}

    def fake_create(agent1, agent2, *args, **kwargs):
        log["parents"].append((agent1, agent2))
        child = ActorCritic(hidden_size=2)
        log["children"].append(child)
        return child

    def fake_evaluate(env, agent, *args, **kwargs):
        score = float(new_scores[len(log["evaluated"]) % len(new_scores)])
        log["evaluated"].append((agent, score))
        return score, [score]

    with _replaced(update_population, "create_new_agent", fake_create) as sees_create:
        with _replaced(update_population, "evaluate_individual", fake_evaluate) as sees_evaluate:
            if not (sees_create and sees_evaluate):
                raise Problem(
                    "update_population should call create_new_agent(...) and evaluate_individual(...) for each offspring."
                )
            result = call_student(
                "update_population",
                update_population,
                HarlowExperimentEnv(),
                torch.optim.RMSprop,
                list(population),
                parents,
                old_best,
                new_generation_new_individuals=count,
            )
    try:
        new_population, best = result
    except (TypeError, ValueError):
        raise Problem(f"expected (new population, best score), got {result!r}.") from None
    return population, parents, log, _individuals(new_population), best


def _check_update(update_population) -> None:
    population, parents, log, new, best = _run_update(update_population, 0, [120.0, 30.0, 150.0, 60.0])
    if len(log["children"]) != 4:
        raise Problem(f"with new_generation_new_individuals=4, create_new_agent was called {len(log['children'])} times.")
    parent_agents = [p[0] for p in parents]
    for agent1, agent2 in log["parents"]:
        if not all(any(x is p for p in parent_agents) for x in (agent1, agent2)):
            raise Problem(
                "create_new_agent was not given two agents from parents_population. Hint: "
                "`(agent1, _), (agent2, _) = random.choices(parents_population, k=2)`: individuals are (agent, score)."
            )
    if {id(a) for a, _ in log["evaluated"]} != {id(c) for c in log["children"]}:
        raise Problem("evaluate_individual should score each new agent (the one create_new_agent returned).")
    if len(new) != len(population):
        raise Problem(
            f"the population had {len(population)} individuals and {len(new)} after the update. "
            "Hint: remove as many random old individuals as you add."
        )
    scores = dict((id(a), s) for a, s in log["evaluated"])
    newcomers = [(a, s) for a, s in new if id(a) in scores]
    if len(newcomers) != 4:
        raise Problem(f"the new population holds {len(newcomers)} of the 4 offspring; it should hold all of them.")
    for agent, score in newcomers:
        if score != scores[id(agent)]:
            raise Problem(
                f"an offspring was stored with score {score:g} but evaluate_individual gave it {scores[id(agent)]:g}. "
                "Hint: store (new_agent, score) with the total score evaluate_individual returns."
            )
    old = {id(a): s for a, s in population}
    survivors = [(a, s) for a, s in new if id(a) not in scores]
    if len({id(a) for a, _ in survivors}) != len(survivors) or any(id(a) not in old or old[id(a)] != s for a, s in survivors):
        raise Problem("the survivors should be 6 different individuals of the old population, with their old scores.")
    if best != 150.0:
        raise Problem(f"the best score was 100 and the offspring scored 120, 30, 150 and 60: expected 150, got {best!r}.")
    *_, low_best = _run_update(update_population, 1, [5.0, 6.0, 7.0, 8.0])
    if low_best != 100.0:
        raise Problem(f"when no offspring beats the best score of 100, it should stay 100, got {low_best!r}.")
    removed = []
    for seed in range(12):
        population, _, _, new, _ = _run_update(update_population, 10 + seed, [1.0])
        kept = {id(a) for a, _ in new}
        removed.append(frozenset(k for k, (a, _) in enumerate(population) if id(a) not in kept))
    if len(set(removed)) < 4 or all(r == frozenset(range(4)) for r in removed):
        raise Problem(
            "the same old individuals are removed every time. Hint: remove random individuals, e.g. "
            "`population.pop(random.randrange(len(population)))`: selection happens when parents are chosen."
        )


def check_genetic_algorithm(create_new_agent, update_population, strict: bool = False) -> bool:
    """Check the offspring's hyperparameters (inherited, mutated, each clamped to its own
    range) and ``update_population(env, optimizer_func, population, parents_population,
    best_score, new_generation_new_individuals)`` -> (new population, best score)."""

    def check():
        _check_offspring(create_new_agent)
        _check_update(update_population)

    return verdict("genetic algorithm", check, strict)
