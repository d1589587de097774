"""Tutorial 1's stored evolution: the evolved agent's checkpoint and the per-generation history
that ``course train harlow`` writes, and the scored first population of the notebook."""

from __future__ import annotations

import json

import numpy as np
import torch

from course_utils import checkpoints
from course_utils.harlow.agent import ActorCritic, agent_from_state
from course_utils.harlow.batch import evaluate_population, initial_population, unstack_agent
from course_utils.paths import ASSETS

HISTORY = ASSETS / "harlow_evolution.json"
CHECKPOINT = "harlow_evolved"


def load_evolved_agent() -> ActorCritic:
    """The agent evolved by ``course train harlow``, from the checkpoint registry."""
    return agent_from_state(checkpoints.load_checkpoint(CHECKPOINT))


def load_history() -> dict:
    """The saved evolution: ``generation``, ``mean``, ``best`` lists and the settings used."""
    return json.loads(HISTORY.read_text())


def scored_population(size: int = 50, num_tasks: int = 10, seed: int = 0) -> list[tuple[ActorCritic, float]]:
    """A fresh population in the notebook's form: a list of (agent, total score over ``num_tasks``
    tasks), scored with the batched evaluation (each agent learns each task afresh, like
    ``evaluate_individual``)."""
    generator = torch.Generator().manual_seed(seed)
    params, hypers = initial_population(size, generator)
    totals = evaluate_population(params, hypers, np.random.default_rng(seed), num_tasks).sum(1)
    return [(unstack_agent(params, hypers, i), float(totals[i])) for i in range(size)]
