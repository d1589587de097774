"""``course train colour``: the tutorial's three pretrained agents (instructor side: it trains
with the harvested reference replay memory and replay actor loss, which the student package does
not hold)."""

from __future__ import annotations

import copy
import time

from course_admin.colour.solutions import ReplayMemory, replay_actor_loss
from course_utils import checkpoints
from course_utils.colour.agent import ActorCritic
from course_utils.colour.env import ColourEnv
from course_utils.colour.training import train_agent
from course_utils.runtime import set_seed


def train_colour_agents(seed: int = 1, num_gradient_steps: int = 1000, progress: bool = True) -> dict[str, ActorCritic]:
    """The tutorial's three agents, trained deterministically from ``seed``.

    ``mode1``: trained on mode 1 (its experiences written to a replay memory);
    ``mode2``: ``mode1`` then trained on mode 2 without replay;
    ``replay``: ``mode1`` then trained on mode 2 while replaying mode-1 experiences.
    """
    set_seed(seed)
    env = ColourEnv()
    memory = ReplayMemory(250)
    mode1 = ActorCritic()
    train_agent(env, mode1, 1, num_gradient_steps, replay=memory, replay_mode="write", rng=seed, progress=progress,
                actor_loss_fn=replay_actor_loss)
    mode2, replay = copy.deepcopy(mode1), copy.deepcopy(mode1)
    train_agent(env, mode2, 2, num_gradient_steps, rng=seed + 10, progress=progress, actor_loss_fn=replay_actor_loss)
    train_agent(env, replay, 2, num_gradient_steps, replay=memory, replay_mode="read", rng=seed + 10, progress=progress,
                actor_loss_fn=replay_actor_loss)
    return {"mode1": mode1, "mode2": mode2, "replay": replay}


def train_and_register(progress: bool = True) -> None:
    """``course train colour``: train the three agents and write their checkpoints and hashes."""
    start = time.perf_counter()
    for name, agent in train_colour_agents(seed=1, progress=progress).items():
        entry = checkpoints.save_checkpoint(agent.state_dict(), f"colour_{name}", "course train colour")
        print(f"colour_{name}: {entry['file']} {entry['size']} bytes sha256 {entry['sha256'][:12]}...")
    print(f"trained in {time.perf_counter() - start:.1f} s; registry: {checkpoints.REGISTRY}")
