"""The course's batched genetic algorithm for tutorial 1 (instructor side): the engine behind
``course train harlow`` (the stored 800-generation evolution and the evolved agent), the stored
runs the notebook shows until the student's own genetic algorithm passes its check
(``course train harlow-runs``), and ``course bench harlow``.

It runs the tutorial's genetic algorithm with its own operators (``make_offspring``: crossing over
per layer and mutation, as ``create_new_agent`` asks; the mean of the learned weights, as
``lamarckian_individual`` asks) on stacked populations, scored by the student package's batched
scorer (``course_utils.harlow.scoring``). The student package holds no copy of these operators: the
notebook's live evolutions use the student's (``course_utils.harlow.evolution``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from tqdm.auto import tqdm

from course_utils.harlow.agent import HYPER_MUTATION, PARAMETER_NOISE, ActorCritic, agent_from_state
from course_utils.harlow.scoring import HYPER_NAMES, evaluate_population, fresh_agents, stack_agents

LAYERS = ("embedding", "rnn", "critic", "actor")
"""Crossing over swaps whole layers: every parameter whose name starts with the layer's name."""

INHERITANCE = ("baldwinian", "lamarckian")
"""What an offspring is made from: its parents' starting weights, or the weights they learned."""


# --------------------------------------------------------------------------------------
# Populations as stacked tensors


def unstack_agent(params: dict[str, torch.Tensor], hypers: np.ndarray, i: int) -> ActorCritic:
    """Individual ``i`` of a stacked population as an ``ActorCritic``."""
    state = {name: p[i].detach().clone() for name, p in params.items()}
    state.update({f"hyper.{k}": torch.tensor(float(hypers[i, j]), dtype=torch.float64) for j, k in enumerate(HYPER_NAMES)})
    return agent_from_state(state)


def _select(params: dict[str, torch.Tensor], index) -> dict[str, torch.Tensor]:
    index = torch.as_tensor(np.asarray(index), dtype=torch.long)
    return {name: p.index_select(0, index) for name, p in params.items()}


def compare_agents(agents: dict[str, ActorCritic], num_tasks: int = 50, seed: int = 0, **settings) -> dict[str, np.ndarray]:
    """Scores (num_tasks,) of each named agent on the same ``num_tasks`` new digit pairs,
    each task learned from the agent's own starting weights (batched ``evaluate_individual``)."""
    params, hypers = stack_agents(list(agents.values()))
    scores = evaluate_population(params, hypers, np.random.default_rng(seed), num_tasks, same_tasks=True, **settings)
    return dict(zip(agents, scores, strict=True))


# --------------------------------------------------------------------------------------
# Genetic algorithm on stacked populations


def make_offspring(
    params: dict[str, torch.Tensor],
    hypers: np.ndarray,
    first: np.ndarray,
    second: np.ndarray,
    rng: np.random.Generator,
    generator: torch.Generator,
) -> tuple[dict[str, torch.Tensor], np.ndarray]:
    """One child per pair of parent indices (``first[k]``, ``second[k]``), exactly like
    ``harlow.create_new_agent``: each layer from either parent, Gaussian noise on every
    weight, each hyperparameter from either parent plus noise, clamped to its own range."""
    K = len(first)
    take_second = rng.random((K, len(LAYERS))) < 0.5
    children = {}
    for name, p in params.items():
        layer = LAYERS.index(name.split(".")[0])
        donor = np.where(take_second[:, layer], second, first)
        base = p.index_select(0, torch.as_tensor(donor, dtype=torch.long))
        children[name] = base + torch.randn(base.shape, generator=generator) * PARAMETER_NOISE
    take_second = rng.random((K, len(HYPER_NAMES))) < 0.5
    child_hypers = np.where(take_second, hypers[second], hypers[first])
    for j, name in enumerate(HYPER_NAMES):
        noise, low, high = HYPER_MUTATION[name]
        child_hypers[:, j] = np.clip(child_hypers[:, j] + rng.normal(size=K) * noise, low, high)
    return children, child_hypers


def write_back(
    params: dict[str, torch.Tensor], hypers: np.ndarray, per_task: dict[str, torch.Tensor], individual: Callable
) -> tuple[dict[str, torch.Tensor], np.ndarray]:
    """What a Lamarckian population keeps of N individuals after their lives, as ``individual``
    (the student's ``lamarckian_individual``) decides it: ``individual(born, trained)`` for each,
    with ``born`` the agent it was born as (``params``, ``hypers``) and ``trained`` the weights its
    copies ended with on its tasks, one state dict per task (``per_task``: ``{name: (N, num_tasks,
    ...)}``, as ``evaluate_population`` gives them). Returns the kept individuals stacked again.
    The trained weights are handed over as weights, not agents: building an agent per copy would
    cost more than the rest of a generation's bookkeeping."""
    N, num_tasks = hypers.shape[0], next(iter(per_task.values())).shape[1]
    kept = []
    for i in range(N):
        trained = [{name: p[i, k] for name, p in per_task.items()} for k in range(num_tasks)]
        kept.append(individual(unstack_agent(params, hypers, i), trained))
    return stack_agents(kept)


def initial_population(size: int, generator: torch.Generator) -> tuple[dict[str, torch.Tensor], np.ndarray]:
    """``size`` fresh agents (``fresh_agents``), stacked."""
    return stack_agents(fresh_agents(size, generator))


def evolve(
    seed: int = 0,
    population_size: int = 50,
    generations: int = 800,
    new_per_generation: int = 5,
    tournament_size: int = 20,
    parents_size: int = 4,
    num_tasks: int = 10,
    final_candidates: int = 10,
    final_tasks: int = 100,
    progress: bool = True,
    inheritance: str = "baldwinian",
    on_generation: Callable[[dict], None] | None = None,
    lamarckian_individual: Callable | None = None,
    **settings,
) -> dict:
    """The tutorial's genetic algorithm, batched, deterministic from ``seed``.

    Generation 0 is ``population_size`` fresh agents. Each generation then takes the
    ``tournament_size`` best, draws ``parents_size`` parents among them (with replacement),
    makes ``new_per_generation`` children of random parent pairs, scores them over
    ``num_tasks`` tasks, and swaps them for as many random old individuals.

    ``inheritance`` is what a child is made from. ``"baldwinian"`` (the tutorial's): the weights
    its parents were born with; what they learned on their tasks is lost. ``"lamarckian"``: the
    weights its parents ended their lives with (each individual keeps the mean of the weights
    its trained copies reached on its ``num_tasks`` tasks). Either way an individual's score is
    how well it learns new tasks from the weights it starts with, and the random numbers drawn
    are the same for both, so two runs with one ``seed`` differ only in what is inherited.
    ``lamarckian_individual(born, trained)`` (the student's function, see ``write_back``), if
    given, decides what a Lamarckian population keeps of each individual instead of the course's
    mean; the result then also holds ``write_back_difference``, the largest difference between
    a weight it kept and the course's mean over the whole run.

    ``on_generation(history)`` is called after every generation (0 included) with the history
    so far, e.g. to draw it live. Scores are noisy (10 tasks), so the returned ``agent`` is the
    best of the final population's ``final_candidates`` top-scored individuals re-scored over
    ``final_tasks`` tasks. Returns the history (``generation``, ``mean``, ``best``, mean
    hyperparameters per generation), the settings, the final re-scoring and the ``agent``.
    """
    if inheritance not in INHERITANCE:
        raise ValueError(f"inheritance must be one of {INHERITANCE}, got {inheritance!r}.")
    lamarckian = inheritance == "lamarckian"
    students = lamarckian and lamarckian_individual is not None
    difference = 0.0
    rng = np.random.default_rng(seed)
    generator = torch.Generator().manual_seed(seed)

    def scored(params, hypers):
        """Score N individuals; a Lamarckian population then keeps what they learned instead."""
        nonlocal difference
        learned, per_task = ({} if lamarckian else None), ({} if students else None)
        scores = evaluate_population(params, hypers, rng, num_tasks, learned=learned, learned_per_task=per_task,
                                     **settings).sum(1)
        if students:
            kept, kept_hypers = write_back(params, hypers, per_task, lamarckian_individual)
            difference = max(difference, *(float((kept[n] - learned[n]).abs().max()) for n in learned))
            return kept, kept_hypers, scores
        return (learned if lamarckian else params), hypers, scores

    params, hypers = initial_population(population_size, generator)
    params, hypers, scores = scored(params, hypers)
    history = {"generation": [], "mean": [], "best": [], **{f"mean_{k}": [] for k in HYPER_NAMES}, "num_tasks": num_tasks}

    def record(generation):
        history["generation"].append(generation)
        history["mean"].append(round(float(scores.mean()), 3))
        history["best"].append(float(scores.max()))
        for j, k in enumerate(HYPER_NAMES):
            history[f"mean_{k}"].append(float(f"{hypers[:, j].mean():.6g}"))

    record(0)
    if on_generation is not None:
        on_generation(history)
    bar = tqdm(range(1, generations + 1), desc="evolving", disable=not progress)
    for generation in bar:
        ranked = np.argsort(-scores, kind="stable")[:tournament_size]
        parents = rng.choice(ranked, size=parents_size, replace=True)
        couples = rng.choice(parents, size=(new_per_generation, 2), replace=True)
        child_params, child_hypers = make_offspring(params, hypers, couples[:, 0], couples[:, 1], rng, generator)
        child_params, child_hypers, child_scores = scored(child_params, child_hypers)
        keep = np.setdiff1d(np.arange(population_size), rng.choice(population_size, new_per_generation, replace=False))
        params = {name: torch.cat([p[keep], child_params[name]]) for name, p in params.items()}
        hypers = np.concatenate([hypers[keep], child_hypers])
        scores = np.concatenate([scores[keep], child_scores])
        record(generation)
        bar.set_postfix(mean=f"{scores.mean():.1f}", best=f"{scores.max():.0f}", refresh=False)
        if on_generation is not None:
            on_generation(history)

    candidates = np.argsort(-scores, kind="stable")[:final_candidates]
    rescored = evaluate_population(_select(params, candidates), hypers[candidates], rng, final_tasks, **settings)
    winner = int(candidates[int(np.argmax(rescored.mean(1)))])
    return {
        **history,
        "settings": {
            "seed": seed,
            "population_size": population_size,
            "generations": generations,
            "new_per_generation": new_per_generation,
            "tournament_size": tournament_size,
            "parents_size": parents_size,
            "inheritance": inheritance,
            **settings,
        },
        "num_tasks": num_tasks,
        "final_candidates_mean_score_per_task": [round(float(m), 3) for m in rescored.mean(1)],
        "final_tasks": final_tasks,
        "best_hyperparameters": {k: float(hypers[winner, j]) for j, k in enumerate(HYPER_NAMES)},
        "agent": unstack_agent(params, hypers, winner),
        **({"write_back_difference": difference} if students else {}),
    }
