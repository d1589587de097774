"""Many LunarLanders stepped together, one batched forward of the policy per step.

``play_together`` is the one stepping loop behind ``collect_episodes`` (the episodes of a
training batch, for the course's benchmarks and tests) and ``aac.evaluate`` and ``variance``
(total rewards, gradients). It lives apart from ``harness`` (the code every tutorial-3 answer is
given) because it plays an agent's episodes: it would be a drop-in answer to the agent
exercises (``PolicyAgent.step``), whose hidden cases are driven without it.
"""

from __future__ import annotations

from collections.abc import Iterator

import torch

from course_utils.lunar.env import make_env
from course_utils.lunar.harness import Experience


def play_together(
    p_net, envs, seeds, generator: torch.Generator | None = None, deterministic: bool = False
) -> Iterator[tuple[int, torch.Tensor, int, float, bool]]:
    """One full episode in each of ``envs`` (reset with ``seeds``), all stepped together.

    Each step runs ``p_net`` once on the states of the environments still playing (shape
    (active, d)) and samples one action each (``generator`` makes it reproducible) or takes
    the most probable action if ``deterministic``. Yields ``(i, state, action, reward, done)``
    for every step of environment ``i``, ``state`` being the float32 tensor (d,) the action was
    chosen in; environments finish in their own time, the others play on. The one stepping
    loop behind ``collect_episodes`` (training batches) and ``aac.evaluate`` (total rewards).
    """
    states = [torch.as_tensor(env.reset(seed=int(s))[0], dtype=torch.float32) for env, s in zip(envs, seeds, strict=True)]
    active = list(range(len(states)))
    while active:
        batch = torch.stack([states[i] for i in active])
        with torch.no_grad():
            scores = p_net(batch)
            if isinstance(scores, tuple):  # an actor-critic's (scores, values)
                scores = scores[0]
            if deterministic:
                actions = scores.argmax(-1)
            else:
                actions = torch.multinomial(torch.softmax(scores, -1), 1, generator=generator).squeeze(-1)
        still = []
        for j, i in enumerate(active):
            action = int(actions[j])
            state, reward, terminated, truncated, _ = envs[i].step(action)
            done = bool(terminated or truncated)
            yield i, states[i], action, float(reward), done
            states[i] = torch.as_tensor(state, dtype=torch.float32)
            if not done:
                still.append(i)
        active = still


def collect_episodes(
    p_net,
    seeds,
    generator: torch.Generator | None = None,
    deterministic: bool = False,
    *,
    episode_type,
    experience_type=Experience,
) -> list:
    """One full episode per seed in course LunarLanders, all stepped together (``play_together``).

    Returns the episodes in seed order, built as
    ``episode_type(total_reward, [experience_type(state, action, reward, is_done), ...])``:
    ``episode_type`` is the notebook's ``Episode`` (the student's or the course's).
    """
    envs = [make_env() for _ in seeds]
    experiences: list[list] = [[] for _ in envs]
    totals = [0.0] * len(envs)
    for i, state, action, reward, done in play_together(p_net, envs, seeds, generator, deterministic):
        experiences[i].append(experience_type(state, action, reward, done))
        totals[i] += reward
    for env in envs:
        env.close()
    return [episode_type(total, exps) for total, exps in zip(totals, experiences, strict=True)]
