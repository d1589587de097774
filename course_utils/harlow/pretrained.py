"""Tutorial 1's stored results: the evolved agent's checkpoint and the per-generation history
that ``course train harlow`` writes, the runs the notebook shows until the student's code passes
its checks (``course train harlow-runs`` writes them with the course's own genetic algorithm), and
the notebook's scored first population."""

from __future__ import annotations

import json

import numpy as np
import torch

from course_utils import checkpoints
from course_utils.harlow.agent import ActorCritic, agent_from_state
from course_utils.harlow.scoring import evaluate_population, fresh_agents, stack_agents
from course_utils.paths import ASSETS

HISTORY = ASSETS / "harlow_evolution.json"
RUNS = ASSETS / "harlow_runs.json"
CHECKPOINT = "harlow_evolved"


def load_evolved_agent() -> ActorCritic:
    """The agent evolved by ``course train harlow``, from the checkpoint registry."""
    return agent_from_state(checkpoints.load_checkpoint(CHECKPOINT))


def load_history() -> dict:
    """The saved evolution: ``generation``, ``mean``, ``best`` lists and the settings used."""
    return json.loads(HISTORY.read_text())


def load_runs() -> dict:
    """The course's stored runs of the notebook's size: ``"baldwinian"`` and ``"lamarckian"`` (each
    an evolution's history, as ``evolution.evolve`` returns it, plus ``seconds``, its wall time,
    from seed 1) and ``"newbie_scores"`` (the newbie's scores on 10 new tasks, of 20 each)."""
    return json.loads(RUNS.read_text())


def scored_population(size: int = 50, num_tasks: int = 10, seed: int = 0) -> list[tuple[ActorCritic, float]]:
    """A fresh population in the notebook's form: a list of (agent, total score over ``num_tasks``
    tasks), scored with the batched evaluation (each agent learns each task afresh, like
    ``evaluate_individual``)."""
    agents = fresh_agents(size, torch.Generator().manual_seed(seed))
    totals = evaluate_population(*stack_agents(agents), np.random.default_rng(seed), num_tasks).sum(1)
    return [(agent, float(total)) for agent, total in zip(agents, totals, strict=True)]
