"""Instructor side of tutorial 4: the trained CartPole agent (``course train cartpole``) and the
stored uniform-vs-prioritized comparison (``assets/per_results.json``).

Both train with the reference answer to Exercise 4, ``solutions.prioritized_td_loss`` (harvested
from the notebook by ``course release``), and the course's own fast buffers (``make_memory``: the
ring of ``per`` and the vectorised prioritized buffer of ``vector_per``): ``course_utils.replay.dqn``
holds no copy of the loss and no buffer, and the student's package holds none of this package.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch

from course_admin.replay import solutions
from course_admin.replay.per import ReplayBuffer
from course_admin.replay.vector_per import VectorPrioritizedReplayBuffer
from course_utils.replay.dqn import (
    CHECKPOINT,
    MAX_EPISODE_STEPS,
    RESULTS,
    SOLVED_SCORE,
    DQNConfig,
    QNetwork,
    TrainResult,
    learning_curves,
    make_env,
    train_dqn,
)

CHECKPOINT_SEED = 1
"""The seed of the checkpoint's training run (prioritized replay; it solves CartPole in a few
thousand frames and stops there)."""
EVAL_SEEDS = tuple(range(100, 110))
"""Episode starts the checkpoint must balance the pole on (``random_and_trained`` plays 100)."""


def make_memory(kind: str, config: DQNConfig, obs_dim: int = 4):
    """The course's replay memory of a kind: ``"prioritized"`` (the vectorised buffer) or ``"uniform"``."""
    if kind == "prioritized":
        return VectorPrioritizedReplayBuffer(obs_dim, config)
    if kind == "uniform":
        return ReplayBuffer(obs_dim, config.memory_size, config.batch_size)
    raise ValueError(f'memory kind must be "prioritized" or "uniform", got {kind!r}.')


COURSE_MEMORIES = {kind: (lambda config, kind=kind: make_memory(kind, config)) for kind in ("uniform", "prioritized")}
"""``dqn.learning_curves``' ``memories`` for the stored comparison: the course's buffers."""


def train_cartpole(num_frames: int = 10_000, seed: int = CHECKPOINT_SEED) -> TrainResult:
    """A prioritized DQN trained with the reference loss for at most ``num_frames`` environment
    steps, stopped once solved (the mean score of the last 10 episodes reaches 195)."""
    config = DQNConfig(num_frames=num_frames)
    return train_dqn(seed=seed, config=config, memory=make_memory("prioritized", config),
                     stop_when_solved=True, loss_fn=solutions.prioritized_td_loss)


def greedy_scores(net: QNetwork, seeds=EVAL_SEEDS) -> np.ndarray:
    """Steps the pole stays up (at most 200) in one greedy episode of ``net`` per start seed: (len(seeds),)."""
    env = make_env()
    scores = []
    for seed in seeds:
        obs, _ = env.reset(seed=int(seed))
        score, done = 0.0, False
        while not done:
            obs, reward, terminated, truncated, _ = env.step(net.greedy(obs))
            score += reward
            done = terminated or truncated
        scores.append(score)
    env.close()
    return np.asarray(scores)


def train_and_register(progress: bool = True) -> dict:
    """``course train cartpole``: train the agent of the notebook's opening, check that it balances
    the pole on every ``EVAL_SEEDS`` start, and save its Q-network as the ``cartpole_dqn``
    checkpoint (hashes in ``assets/checkpoints.json``). Returns the registry entry."""
    from course_utils.checkpoints import save_checkpoint

    run = train_cartpole()
    if not run.solved:
        raise RuntimeError(f"The CartPole agent did not solve within {len(run.epsilons)} frames; nothing was saved.")
    scores = greedy_scores(run.agent.q)
    if scores.min() < SOLVED_SCORE:
        raise RuntimeError(f"The trained agent's greedy scores {scores.tolist()} fall below {SOLVED_SCORE:.0f}; "
                           "nothing was saved.")
    entry = save_checkpoint(run.agent.q.state_dict(), CHECKPOINT, "course train cartpole")
    if progress:
        print(f"wrote assets/checkpoints/{entry['file']} ({entry['size']} bytes)")
        print(f"solved at frame {run.frames_to_solve} ({run.wall_s:.1f} s wall, {run.cpu_s:.1f} s CPU); greedy scores "
              f"over {len(scores)} episodes: min {scores.min():.0f}, mean {scores.mean():.1f} (at most {MAX_EPISODE_STEPS})")
    return entry


def measure_and_save(seeds=(0, 1, 2, 3, 4), path: Path = RESULTS) -> dict:
    """Full-size uniform vs prioritized runs over ``seeds`` with the reference loss; written to
    ``assets/per_results.json`` (what the notebook's Section 4 shows)."""
    config = DQNConfig()
    curves = learning_curves(seeds, config, memories=COURSE_MEMORIES, loss_fn=solutions.prioritized_td_loss)
    results = {"config": asdict(config), "torch_threads": torch.get_num_threads(), "curves": curves}
    Path(path).write_text(json.dumps(results, indent=1) + "\n")
    return results
