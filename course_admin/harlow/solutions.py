"""Reference solutions of tutorial 1's graded exercises, harvested by `course release`
from the solution cells of solutions/01_harlow_meta_rl.ipynb: edit the notebook, not this file.

The instructor package uses them to train checkpoints, compute expected values and run
benchmarks; the student package does not hold them."""

from __future__ import annotations

import copy
import random

import numpy as np
import torch

from course_utils.harlow.agent import HYPER_MUTATION, PARAMETER_NOISE, train_evaluate_agent


# Solution cell 'evaluate_individual'
def evaluate_individual(env, agent, optimizer_func, num_tasks=10, num_gradient_steps=25, num_trials=6,
                        num_evaluation_trials=20):
    '''Baldwinian fitness: how well copies of `agent` learn `num_tasks` new tasks.

    Returns (total score, list of the num_tasks scores). `agent` is never changed.
    '''
    scores = []
    for _ in range(num_tasks):
        learner = copy.deepcopy(agent)
        scores.append(train_evaluate_agent(env, learner, optimizer_func, num_gradient_steps, num_trials,
                                           num_evaluation_trials))
    return np.sum(scores), scores


# Solution cell 'genetic_algorithm'
def choose_parents(population, tournament_size=20, parents_size=4):
    '''Selection (given): the best `tournament_size` individuals form the tournament, and
    `parents_size` parents are drawn from it at random. population: list of (agent, score).'''
    ranked = sorted(population, key=lambda individual: individual[1], reverse=True)
    return random.choices(ranked[:tournament_size], k=parents_size)


def create_new_agent(agent1, agent2):
    '''An offspring of two parent agents: crossing over per layer, then mutation.'''
    child = copy.deepcopy(agent1)
    with torch.no_grad():
        for name, layer in child.named_children():  # embedding, rnn, critic, actor
            donor = getattr(agent2 if random.random() < 0.5 else agent1, name)
            donor_weights = dict(donor.named_parameters())
            for weight_name, p in layer.named_parameters():
                p.copy_(donor_weights[weight_name] + torch.randn_like(p) * PARAMETER_NOISE)
    # The four hyperparameters: inherit, mutate, clamp each to its own range.
    for name, (noise, low, high) in HYPER_MUTATION.items():
        value = getattr(agent2 if random.random() < 0.5 else agent1, name)
        value += np.random.normal() * noise
        setattr(child, name, min(max(value, low), high))
    return child


def update_population(env, optimizer_func, population, parents_population, best_score,
                      new_generation_new_individuals=5):
    '''One generation: new scored offspring replace random old individuals.

    population, parents_population: lists of (agent, score). Returns (new population, best score).
    '''
    newcomers = []
    for _ in range(new_generation_new_individuals):
        (agent1, _), (agent2, _) = random.choices(parents_population, k=2)
        child = create_new_agent(agent1, agent2)
        score, _ = evaluate_individual(env, child, optimizer_func)
        best_score = max(best_score, score)
        newcomers.append((child, score))
    population = list(population)
    for _ in range(new_generation_new_individuals):
        population.pop(random.randrange(len(population)))
    return population + newcomers, best_score


# Solution cell 'lamarckian_individual'
def lamarckian_individual(born, trained):
    '''What a Lamarckian population keeps of an individual after its life.

    born: the ActorCritic it was born as (its starting weights and its four hyperparameters).
    trained: list of the weights its copies ended with, one dict {weight name: tensor} per task it learned.
    Returns a new ActorCritic with born's hyperparameters and, for every weight, the mean of that
    weight over the trained copies. born and trained are not changed and share no tensor with it.
    '''
    individual = copy.deepcopy(born)
    individual.load_state_dict({name: torch.stack([weights[name] for weights in trained]).mean(0) for name in trained[0]})
    return individual
