"""What tutorial 3's notebook gives students ready-made, around their exercises: the
``Experience`` record, the ``TrainerLoop`` their ``PolicyTrainer`` fills in, and collection of
whole episodes with many environments stepped together (``VectorBatchDataset``, which the
experiments train on), plus ``greedy_policy`` for animations.

Nothing here is an exercise's solution, and nothing here imports them: the classes built
from episodes are parameters (``episode_type``, ``batch_type``), so the notebook can hand in
the student's own ``TrainBatch`` or the course's (``course_utils.lunar.solutions``).

Shapes: ``N`` samples in a batch, ``E`` environments stepped together, 8 observation
features (9 with the time feature), 4 actions.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

import numpy as np
import torch

from course_utils.lunar.env import make_env


class Experience(NamedTuple):
    """One step: the ``state`` seen (tensor (8,)), the ``action`` taken (int), the ``reward``
    received (float) and whether the episode ended with it (``is_done``: terminated or truncated)."""

    state: torch.Tensor
    action: int
    reward: float
    is_done: bool


def _progress(total: int, enabled: bool, desc: str):
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc)


class TrainerLoop:
    """The training loop around ``train_batch`` (which subclasses write).

    ``train`` pulls TrainBatches from ``dataloader``, calls ``train_batch`` on each and stops
    when the mean total reward of the last ``running_mean_len`` episodes reaches
    ``target_reward`` or after ``max_episodes`` episodes. ``training_data`` records, per batch,
    the episode count, each loss's value, the mean reward and the best mean reward.
    """

    def __init__(self, model, optimizer, loss_fns, dataloader, checkpoints_file=None):
        self.model = model
        self.optimizer = optimizer
        self.loss_fns = list(loss_fns)
        self.dataloader = dataloader
        self.checkpoints_file = checkpoints_file
        self.training_data: dict[str, list] = {"episode_num": [], "mean_reward": [], "best_mean_reward": []}

    def train_batch(self, batch) -> tuple[float, dict]:
        raise NotImplementedError()

    @staticmethod
    def loss_input(loss_fn, model_output):
        """What ``loss_fn`` takes: the whole model output for losses with ``needs_values = True``
        (the AAC loss: action scores and state values), otherwise only the action scores."""
        if getattr(loss_fn, "needs_values", False):
            return model_output
        return model_output[0] if isinstance(model_output, tuple) else model_output

    def train(
        self,
        target_reward=None,
        running_mean_len: int = 100,
        max_episodes: int = 10_000,
        post_batch_fn=None,
        progress: bool = True,
        desc: str = "training",
    ):
        from collections import deque

        rewards = deque(maxlen=running_mean_len)
        best, episodes = -float("inf"), 0
        bar = _progress(max_episodes, progress, desc)
        for batch_idx, batch in enumerate(self.dataloader):
            total_loss, losses = self.train_batch(batch)
            rewards.extend(float(r) for r in batch.total_rewards)
            episodes += len(batch.total_rewards)
            mean = float(np.mean(rewards))
            improved = mean > best
            best = max(best, mean)
            data = self.training_data
            data["episode_num"].append(episodes)
            data["mean_reward"].append(mean)
            data["best_mean_reward"].append(best)
            for key, value in losses.items():
                data.setdefault(key, []).append(float(value))
            if improved and self.checkpoints_file:
                torch.save({"params": self.model.state_dict(), "best_mean_reward": best}, self.checkpoints_file)
            if bar is not None:
                bar.set_postfix(episodes=episodes, mean_reward=f"{mean:.1f}", best=f"{best:.1f}")
                bar.update(len(batch.total_rewards))
            if post_batch_fn is not None:
                post_batch_fn(batch_idx, self.model, batch)
            if (target_reward is not None and mean >= target_reward) or episodes >= max_episodes:
                break
        if bar is not None:
            bar.close()
        return self.training_data


# --------------------------------------------------------------------------------------------
# Many environments, one batched forward per step
# --------------------------------------------------------------------------------------------


def _scores(output) -> torch.Tensor:
    """Action scores from a network's output (a tensor, or a tuple starting with the scores)."""
    return output[0] if isinstance(output, tuple) else output


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
            scores = _scores(p_net(batch))
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


class VectorBatchDataset:
    """TrainBatches of ``episode_batch_size`` episodes played side by side by ``p_net``.

    Batch k uses the seeds ``seed * 10**6 + k * episode_batch_size + i``: reproducible, and
    every episode starts from a different landscape. ``episode_type`` is the class the
    episodes are built as (``episode_type(total_reward, experiences)``, with ``calc_qvals``),
    ``batch_type`` the class whose ``from_episodes(episodes, gamma)`` turns them into a batch.
    """

    def __init__(self, p_net, episode_batch_size: int, gamma: float, seed: int = 0, *, batch_type, episode_type):
        self.p_net, self.episode_batch_size, self.gamma = p_net, episode_batch_size, gamma
        self.seed, self.batch_type, self.episode_type = seed, batch_type, episode_type
        self.generator = torch.Generator().manual_seed(seed)

    def __iter__(self):
        k = 0
        while True:
            first = self.seed * 10**6 + k * self.episode_batch_size
            episodes = collect_episodes(
                self.p_net, range(first, first + self.episode_batch_size), self.generator, episode_type=self.episode_type
            )
            yield self.batch_type.from_episodes(episodes, self.gamma)
            k += 1


def greedy_policy(net):
    """``policy(obs) -> action``: the most probable action of ``net`` (for ``animation.record_episode``)."""

    def policy(obs):
        with torch.no_grad():
            return int(_scores(net(torch.as_tensor(obs, dtype=torch.float32).unsqueeze(0))).argmax())

    return policy
