"""``course bench colour``: the course's A2C step against a straightforward one, measured in
the same process, and the replay memory's size."""

from __future__ import annotations

import time

import numpy as np
import torch
import torch.nn.functional as F

from course_admin.colour.solutions import ReplayMemory, discounted_returns, replay_actor_loss
from course_utils.colour.agent import ActorCritic
from course_utils.colour.env import MAX_REWARD, ColourEnv
from course_utils.colour.training import train_agent
from course_utils.runtime import seed_torch


def _reference_style_step(env, agent, optimizer, num_trials: int) -> None:
    """One A2C gradient step the straightforward way: a forward pass with autograd per
    trial, a tensor built per trial, losses stacked at the end (the baseline)."""
    obs = torch.from_numpy(env.observation())
    prev_reward = torch.zeros(1)
    prev_action = torch.zeros(2)
    log_probs, values, rewards, entropies = [], [], [], []
    for _ in range(num_trials):
        value, logits = agent(torch.cat((obs, prev_reward, prev_action)))
        dist = torch.distributions.Categorical(logits=logits)
        action = dist.sample()
        next_obs, reward, _, _, _ = env.step(int(action))
        rewards.append(reward / MAX_REWARD)
        values.append(value)
        log_probs.append(dist.log_prob(action))
        entropies.append(dist.entropy())
        obs = torch.from_numpy(next_obs)
        prev_reward = torch.tensor([reward / MAX_REWARD])
        prev_action = F.one_hot(action, 2).float()
    q = torch.from_numpy(discounted_returns(rewards, agent.gamma)).float()
    advantage = q - torch.stack(values)
    loss = (
        (-torch.stack(log_probs) * advantage.detach()).mean()
        + agent.value_cost * advantage.pow(2).mean()
        - agent.entropy_cost * torch.stack(entropies).mean()
    )
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


def bench_colour(course_steps: int = 200, baseline_steps: int = 20) -> dict:
    """Seconds per gradient step (100 trials) of the course's loop and of the baseline loop,
    and the replay memory's bytes for 250 experiences."""
    seed_torch(0)
    env = ColourEnv()
    agent = ActorCritic()
    train_agent(env, agent, 1, 5, rng=0, progress=False, actor_loss_fn=replay_actor_loss)  # warm-up
    start = time.perf_counter()
    train_agent(env, agent, 1, course_steps, rng=1, progress=False, actor_loss_fn=replay_actor_loss)
    course = (time.perf_counter() - start) / course_steps

    baseline_agent = ActorCritic()
    optimizer = baseline_agent.make_optimizer()
    env.reset(seed=0)
    _reference_style_step(env, baseline_agent, optimizer, 100)  # warm-up
    start = time.perf_counter()
    for _ in range(baseline_steps):
        _reference_style_step(env, baseline_agent, optimizer, 100)
    baseline = (time.perf_counter() - start) / baseline_steps

    memory = ReplayMemory(250)
    train_agent(env, ActorCritic(), 1, 250, replay=memory, replay_mode="write", rng=2, progress=False,
                actor_loss_fn=replay_actor_loss)
    stored = sum(e.nbytes() for e in memory.slots if e is not None)
    return {
        "benchmark": "colour",
        "course_s_per_step": round(course, 5),
        "baseline_s_per_step": round(baseline, 5),
        "speedup": round(baseline / course, 1),
        "replay_memory_bytes_250": stored,
        "replay_memory_mb_250": round(stored / 1e6, 2),
        "torch_threads": torch.get_num_threads(),
        "numpy": np.__version__,
        "torch": torch.__version__,
    }
