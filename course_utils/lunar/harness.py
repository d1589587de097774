"""What tutorial 3's notebook gives students ready-made, around their exercises: the
``Experience`` record, the ``TrainerLoop`` their ``PolicyTrainer`` fills in, and collection of
whole episodes with many environments stepped together (``VectorBatchDataset``, which the
experiments train on), plus ``monitor_episode`` (one episode of the student's agent, with its
frames) and ``greedy_policy`` for animations (``animation.side_by_side`` joins two), and the checkpoints of a student's run
(``save_checkpoint``, ``load_checkpoint``).

Nothing here is an exercise's solution, and nothing here imports them: the classes built
from episodes are parameters (``episode_type``, ``batch_type``), so the notebook can hand in
the student's own ``TrainBatch`` or the course's (``course_admin.lunar.solutions``).

Shapes: ``N`` samples in a batch, ``E`` environments stepped together, 8 observation
features (9 with the time feature), 4 actions.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch

from course_utils.lunar.env import make_env
from course_utils.runtime import keep_freed_memory, positive_int


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

    ``train(..., lr_decay_episodes=n)`` lowers the optimizer's learning rates linearly, from
    their values at the start to a tenth of them after ``n`` episodes (then they stay there):
    big steps while the policy is poor, small ones once it is nearly right.

    ``train(..., critic_steps=k)`` gives an actor-critic's critic ``k`` more regression steps on
    each batch's q-values after ``train_batch``, with an optimizer of its own (learning rate
    ``critic_learn_rate``, by default the optimizer's), each after setting the bias of the value
    output to the batch's mean error: ``critic.CriticFit``. One step per batch is too few for the
    critic to follow the returns, and Adam's steps too small to follow their level (see that module).

    ``train(..., stop_when=f)`` also stops as soon as ``f(model, training_data)`` returns True
    after a batch (``solve.UntilSolved``: the greedy policy passes the course's bar); the
    checkpoint file then gets the weights it stopped with, marked ``solved=True``.

    With ``train(..., stoppable=True)``, stopping it by hand (Jupyter's stop button, Ctrl-C: a
    ``KeyboardInterrupt``) ends the training, not the cell: ``train`` says so, keeps the
    checkpoint of the best mean reward so far and returns the curve up to the last finished
    batch; ``interrupted`` is then True. Without it a stop ends the cell, as anywhere else (an
    experiment cut short must not pass for a finished one, nor the next one start).
    """

    def __init__(self, model, optimizer, loss_fns, dataloader, checkpoints_file=None):
        self.model = model
        self.optimizer = optimizer
        self.loss_fns = list(loss_fns)
        self.dataloader = dataloader
        self.checkpoints_file = checkpoints_file
        self.training_data: dict[str, list] = {"episode_num": [], "mean_reward": [], "best_mean_reward": []}
        self.interrupted = False

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
        stoppable: bool = False,
        stop_when=None,
        lr_decay_episodes: int | None = None,
        critic_steps: int = 0,
        critic_learn_rate: float | None = None,
    ):
        """Train until ``target_reward``, ``stop_when`` or ``max_episodes`` (or, if ``stoppable``, a
        stop by hand); returns ``training_data``."""
        from collections import deque

        keep_freed_memory()  # every gradient step frees and allocates a batch's arrays again
        rewards = deque(maxlen=running_mean_len)
        best, episodes, saved = -float("inf"), 0, None
        start_lrs = [group["lr"] for group in self.optimizer.param_groups]
        critic_fit = None
        self.interrupted = False
        bar = _progress(max_episodes, progress, desc)
        try:
            for batch_idx, batch in enumerate(self.dataloader):
                total_loss, losses = self.train_batch(batch)
                if critic_steps and critic_fit is None:
                    # imported here: the critic's regression is part of the AAC loss exercise's
                    # answer, and this module is imported where that exercise is graded
                    from course_utils.lunar.critic import CriticFit

                    critic_fit = CriticFit(self.model, batch.states, critic_steps, critic_learn_rate or start_lrs[0])
                # the policy of the next batch is set: its episodes start now, where the dataloader
                # can (VectorBatchDataset.play_ahead), while the critic's steps, the evaluation and
                # the animation run here; not after the last batch
                play_ahead = getattr(self.dataloader, "play_ahead", None)
                if play_ahead is not None and episodes + len(batch.total_rewards) < max_episodes:
                    play_ahead(free=critic_fit.names if critic_fit is not None else ())
                if critic_fit is not None:
                    critic_fit(batch)
                rewards.extend(float(r) for r in batch.total_rewards)
                episodes += len(batch.total_rewards)
                mean = float(np.mean(rewards))
                improved = mean > best
                best = max(best, mean)
                row = {key: float(value) for key, value in losses.items()}
                row.update(mean_reward=mean, best_mean_reward=best, episode_num=episodes)  # episode_num last: see _trim
                for key, value in row.items():
                    self.training_data.setdefault(key, []).append(value)
                if improved and self.checkpoints_file:
                    save_checkpoint(self.model, self.checkpoints_file, best_mean_reward=best, episodes=episodes)
                    saved = best
                if bar is not None:
                    bar.set_postfix(episodes=episodes, mean_reward=f"{mean:.1f}", best=f"{best:.1f}")
                    bar.update(len(batch.total_rewards))
                if lr_decay_episodes:
                    fraction = max(0.1, 1.0 - episodes / lr_decay_episodes)
                    for group, lr in zip(self.optimizer.param_groups, start_lrs, strict=True):
                        group["lr"] = lr * fraction
                    if critic_fit is not None and critic_fit.optimizer is not None:
                        for group in critic_fit.optimizer.param_groups:
                            group["lr"] = critic_fit.learn_rate * fraction
                if post_batch_fn is not None:
                    post_batch_fn(batch_idx, self.model, batch)
                if stop_when is not None and stop_when(self.model, self.training_data):
                    if self.checkpoints_file:
                        save_checkpoint(self.model, self.checkpoints_file, best_mean_reward=best, episodes=episodes, solved=True)
                    break
                if (target_reward is not None and mean >= target_reward) or episodes >= max_episodes:
                    break
        except KeyboardInterrupt:
            if not stoppable:
                raise
            self.interrupted = True
            _trim(self.training_data)
        finally:
            if bar is not None:
                bar.close()
        if self.interrupted:
            print(self._stopped_message(saved))
        return self.training_data

    def _stopped_message(self, saved) -> str:
        data = self.training_data
        if not data["episode_num"]:
            return "Training stopped by you before the first batch finished: no curve and no new checkpoint."
        message = (
            f"Training stopped by you after {data['episode_num'][-1]} episodes ({len(data['episode_num'])} batches): "
            f"the curve so far is what train returned"
        )
        if saved is not None:
            message += f", and {self.checkpoints_file} holds the best weights so far (mean reward {saved:.1f})"
        return message + "."


def _trim(data: dict[str, list]) -> None:
    """Cut every list of ``data`` to the batches recorded in full: a stop can land between two
    appends, and ``episode_num`` is appended last, so its length counts the full rows."""
    rows = len(data["episode_num"])
    for values in data.values():
        del values[rows:]


def save_checkpoint(model, path, **info) -> None:
    """Save ``model``'s weights and ``info`` (e.g. ``best_mean_reward``) in ``path``, whole or not at
    all: written beside it first, then renamed, so a stop in the middle leaves the previous file."""
    import os
    from pathlib import Path

    path = Path(path)
    partial = path.with_name(path.name + ".partial")
    torch.save({"params": model.state_dict(), **info}, partial)
    os.replace(partial, path)


def load_checkpoint(model, path, trained_by: str = "the training cell"):
    """``model`` with the weights saved in ``path`` by ``TrainerLoop.train`` (in eval mode), and what was
    saved with them (``best_mean_reward``, ``episodes``); or ``(None, {})`` after printing what to run
    (``trained_by``) when there is no such checkpoint or its weights do not fit ``model``."""
    from pathlib import Path

    path = Path(path)
    if not path.exists():
        print(f"There is no checkpoint of your agent yet ({path}): run {trained_by} first, then this cell.")
        return None, {}
    saved = torch.load(path, weights_only=True)
    try:
        model.load_state_dict(saved["params"])
    except (RuntimeError, KeyError) as error:
        print(
            f"The checkpoint {path} does not fit the network built here ({type(error).__name__}: {str(error)[:200]}): "
            f"it was saved by a network of other sizes. Run {trained_by} again, then this cell."
        )
        return None, {}
    return model.eval(), {key: value for key, value in saved.items() if key != "params"}


class VectorBatchDataset:
    """TrainBatches of ``episode_batch_size`` episodes played side by side by ``p_net``.

    Batch k uses the seeds ``seed * 10**6 + k * episode_batch_size + i``: reproducible, and
    every episode starts from a different landscape. ``episode_type`` is the class the
    episodes are built as (``episode_type(total_reward, experiences)``, with ``calc_qvals``),
    ``batch_type`` the class whose ``from_episodes(episodes, gamma)`` turns them into a batch.

    The episodes are played by ``rollouts.RolloutCollector.play_episodes``: the environments
    are split in two shards, each with its own copy of the network (given the weights before
    every batch) and its own action generator (seeded from ``seed``); ``workers`` processes run
    them (``default_workers()``: 2 where the machine has two cores and can ``fork``, else 1, in
    this process). The batches are the same whatever ``workers`` is; it only sets the speed.
    The worker processes live while the batches are read, and stop when the loop over them
    ends (a ``break``, an error, a stop by hand).
    """

    def __init__(
        self, p_net, episode_batch_size: int, gamma: float, seed: int = 0, *, batch_type, episode_type,
        workers: int | None = None,
    ):
        self.p_net, self.episode_batch_size, self.gamma = p_net, episode_batch_size, gamma
        self.seed, self.batch_type, self.episode_type = seed, batch_type, episode_type
        self.shards = min(2, episode_batch_size)
        # the rollout workers are imported where they are used: they sample actions from a policy's
        # scores, as tutorial 3's agent exercise does, and that exercise is graded with this module
        from course_utils.lunar.rollouts import default_workers

        self.workers = default_workers(self.shards) if workers is None else workers

    def __iter__(self):
        import gc

        from course_utils.lunar.rollouts import RolloutCollector

        size = self.episode_batch_size
        # Python's full garbage collections walk every object of the process (a notebook's kernel:
        # a few hundred thousand, 0.1-0.2 s a walk), and a batch's thousands of Experiences and
        # tensors set off one every few dozen batches: 8% of a run's CPU. The first two batches
        # put what lives before them out of their reach (gc.freeze: still freed when no longer
        # used; only garbage in reference cycles waits), the second one what the first step
        # imported; later walks cover what the loop made since (a few ms), and collect its cycles
        # (an animation's figure). The end of the loop puts everything back, unless the process
        # had frozen its objects itself (a forked worker, which keeps them frozen).
        thawed = gc.get_freeze_count() == 0
        try:
            with RolloutCollector(range(size), self.p_net, self.seed, shards=self.shards, workers=self.workers) as collector:
                self._collector, self._ahead, k = collector, None, 0
                while True:
                    if k < 2:
                        gc.freeze()
                    seeds = self._seeds(k)
                    if self._ahead is None:
                        played = collector.play_episodes(self.p_net, seeds)
                    else:
                        (sent, free), self._ahead = self._ahead, None
                        played = collector.receive_episodes()
                        if not _same_weights(sent, self.p_net.state_dict(), free):
                            collector.rewind()  # the policy changed after all: played again, as if never played ahead
                            played = collector.play_episodes(self.p_net, seeds)
                    episodes = [self._episode(*arrays) for arrays in played]
                    self._next = k + 1
                    yield self.batch_type.from_episodes(episodes, self.gamma)
                    k += 1
        finally:
            self._collector = self._ahead = None
            if thawed:
                gc.unfreeze()

    def _seeds(self, k: int) -> range:
        first = self.seed * 10**6 + k * self.episode_batch_size
        return range(first, first + self.episode_batch_size)

    def play_ahead(self, free=()) -> bool:
        """Start the next batch's episodes now, with ``p_net``'s current weights, while the loop
        reading the batches works on (``TrainerLoop.train`` calls it once the student's
        ``train_batch`` has set the policy: the critic's own steps, the evaluations and the
        animations then run while the worker processes play). ``free`` names the entries of
        ``p_net.state_dict()`` that may still change meanwhile without changing the episodes:
        the critic's own parameters, which the action scores do not depend on
        (``critic.critic_parameters``). When the next batch is read, every other entry is
        compared with the weights sent: if one changed, the episodes are played again with the
        new weights, their draws rewound (``RolloutCollector.rewind``), so the batches are the
        same as without playing ahead. False (nothing started) outside a loop over the batches
        or when the next batch is already started."""
        collector = getattr(self, "_collector", None)
        if collector is None or self._ahead is not None:
            return False
        self._ahead = (collector.send_episodes(self.p_net, self._seeds(self._next)), set(free))
        return True

    def _episode(self, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray):
        """The notebook's ``Episode`` of one played episode's arrays (``Shard.play_episodes``)."""
        rows = torch.from_numpy(states).unbind(0)  # one view per step, in one call (half the cost of indexing each)
        rewards, last = rewards.tolist(), len(rewards) - 1
        total = sum(rewards)
        steps = enumerate(zip(rows, actions.tolist(), rewards, strict=True))
        experiences = [Experience(state, a, r, t == last) for t, (state, a, r) in steps]
        return self.episode_type(total, experiences)


def _same_weights(sent: dict, current: dict, free: set) -> bool:
    """Whether ``current`` (a ``state_dict``) has the same entries as ``sent``, each equal to the last
    bit except those named in ``free``."""
    return sent.keys() == current.keys() and all(torch.equal(sent[k], current[k]) for k in sent if k not in free)


def monitor_episode(p_net, seed: int = 0, *, agent_type, max_steps: int = 300, every: int = 1) -> tuple[list, int, float]:
    """Play one episode with ``agent_type(env, p_net, seed)`` (the notebook's ``PolicyAgent`` or
    ``AACPolicyAgent``) in a LunarLander that draws itself, and keep a picture of every step (of
    every ``every``-th step: each picture costs about 2.5 ms to draw, the step itself a tenth of that).

    Returns ``(frames, n_steps, total_reward)``: ``frames`` a list of (400, 600, 3) uint8 arrays,
    the first before any step and one after every step (every ``every``-th) but the last (the agent
    resets the environment when the episode ends, so the picture after the last step would show the
    next episode's start); ``n_steps`` at most ``max_steps``; ``total_reward`` undiscounted.
    """
    positive_int("every", every)
    env = make_env(render_mode="rgb_array")
    try:
        agent = agent_type(env, p_net, seed)
        frames = [env.render()]
        n_steps, total_reward = 0, 0.0
        while n_steps < max_steps:
            experience = agent.step()
            n_steps += 1
            total_reward += experience.reward
            if experience.is_done:
                break
            if n_steps % every == 0:
                frames.append(env.render())
    finally:
        env.close()
    return frames, n_steps, total_reward


def greedy_policy(net):
    """``policy(obs) -> action``: the most probable action of ``net`` (for ``animation.record_episode``)."""

    def policy(obs):
        with torch.no_grad():
            scores = net(torch.as_tensor(obs, dtype=torch.float32).unsqueeze(0))
            return int((scores[0] if isinstance(scores, tuple) else scores).argmax())

    return policy
