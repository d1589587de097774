"""Deep Q-learning (DQN) on CartPole with uniform or prioritized replay (tutorial 4).

The agent: an MLP Q-network (obs_dim -> 128 -> 128 -> one Q-value per action), a target
network copied from it every ``target_update`` gradient steps (hard updates), epsilon-greedy
acting with epsilon decayed linearly, and the element-wise smooth-L1 (Huber) loss between
``Q(s, a)`` and the TD target ``r + gamma * (1 - done) * max_a' Q_target(s', a')``.
That loss is the tutorial's Exercise 4 (``prioritized_td_loss``): this module holds no copy of
it, so every agent here is given one (``loss_fn``). With prioritized replay each element of the loss is multiplied by its
importance-sampling weight before the mean, and the new priority of each replayed transition
is ``|delta| + prior_eps``, with ``delta`` the TD error (target minus ``Q(s, a)``), as in
Schaul et al. (2016). The loss is Huber for robustness to large errors; the priority is the
error itself, not the loss (which is ``delta**2 / 2`` for small errors and would make small
errors far rarer still).

Shapes: ``B`` transitions per batch, observations of 4 float32 features (cart position,
cart velocity, pole angle, pole angular velocity), 2 actions (push left, push right).

CartPole-v1 pays 1 per step the pole stays up; here episodes are cut at 200 steps, so a
score of 195 is nearly perfect. "Solved" is the course's lenient criterion: the mean score of
the last 10 episodes reaches 195 (Gym's CartPole-v0 averages over 100 consecutive episodes);
``frames_to_solve`` is the environment step at which that first happens.

The agent learns from the memory it is given (``train_dqn``'s ``memory``): in the notebook the
student's own buffers (``buffer.ReplayBuffer`` on their memory, their prioritized buffer on their
trees). The course's fast buffers, which produced the stored comparison, are instructor code
(``course_admin.replay``).

The agent watched at the start of the notebook is the checkpoint ``cartpole_dqn`` (its
Q-network's state_dict), trained by ``course train cartpole`` (``replay.train``).
"""

from __future__ import annotations

import copy
import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from course_utils.animation import side_by_side
from course_utils.paths import ASSETS
from course_utils.replay.buffer import beta_schedule
from course_utils.runtime import fork_map, positive_int, seed_torch

ENV_ID = "CartPole-v1"
MAX_EPISODE_STEPS = 200
SOLVED_SCORE = 195.0
SOLVED_WINDOW = 10
RESULTS = ASSETS / "per_results.json"
LIVE_EVERY = 1000  # frames between two redraws of the live plots
MIN_SEEDS = 5  # paired seeds below which a comparison concludes nothing
CHECKPOINT = "cartpole_dqn"  # the trained agent's Q-network (``course train cartpole``)


def require_loss(loss_fn):
    """``loss_fn`` if it is callable; otherwise a TypeError that says what to pass."""
    if not callable(loss_fn):
        raise TypeError(
            f"loss_fn must be the TD loss function, got {loss_fn!r}: pass your prioritized_td_loss "
            "(Exercise 4) as loss_fn=prioritized_td_loss once it passes its check cell."
        )
    return loss_fn


def make_env(render_mode: str | None = None) -> gym.Env:
    """CartPole-v1 with episodes cut at 200 steps (``render_mode="rgb_array"`` to record frames)."""
    return gym.make(ENV_ID, max_episode_steps=MAX_EPISODE_STEPS, render_mode=render_mode)


class QNetwork(nn.Module):
    """obs (B, obs_dim) float32 -> Q-values (B, n_actions): two hidden layers of 128 ReLUs."""

    def __init__(self, obs_dim: int = 4, n_actions: int = 2, hidden: int = 128):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(obs_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, n_actions)
        )

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.layers(obs)

    @torch.no_grad()
    def greedy(self, obs) -> int:
        """The action with the largest Q-value for one observation (4,)."""
        return int(self(torch.as_tensor(obs, dtype=torch.float32)).argmax())


def trained_q_network() -> QNetwork:
    """The course's trained CartPole Q-network, loaded from the ``cartpole_dqn`` checkpoint
    (``course train cartpole``); its ``greedy`` method plays."""
    from course_utils.checkpoints import load_checkpoint

    net = QNetwork()
    net.load_state_dict(load_checkpoint(CHECKPOINT))
    return net.eval()


@dataclass
class DQNConfig:
    """Hyperparameters (defaults: those of the "Rainbow is all you need" PER notebook, except where noted)."""

    num_frames: int = 10_000  # environment steps
    memory_size: int = 1000  # transitions kept (as in the Rainbow notebook)
    batch_size: int = 32
    target_update: int = 150  # gradient steps between hard target updates
    epsilon_decay_frames: int = 2000  # epsilon falls linearly from max to min over these frames
    max_epsilon: float = 1.0
    min_epsilon: float = 0.01  # (the Rainbow notebook: 0.1; with 0.01 exploration barely disturbs a good policy)
    gamma: float = 0.99
    lr: float = 1e-3  # Adam
    alpha: float = 0.2  # how much priorities matter (0: uniform)
    beta0: float = 0.6  # importance-sampling exponent at the start, annealed linearly to 1
    prior_eps: float = 1e-6  # added to |TD error| so every priority is > 0

    def __post_init__(self):
        for name in ("num_frames", "memory_size", "batch_size", "target_update", "epsilon_decay_frames"):
            positive_int(name, getattr(self, name))
        if self.batch_size > self.memory_size:
            raise ValueError(f"batch_size ({self.batch_size}) must not exceed memory_size ({self.memory_size}).")
        if not 0.0 <= self.min_epsilon <= self.max_epsilon <= 1.0:
            raise ValueError(f"need 0 <= min_epsilon <= max_epsilon <= 1, got {self.min_epsilon} and {self.max_epsilon}.")


def epsilon_at(frame: int, config: DQNConfig) -> float:
    """Linear decay from ``max_epsilon`` at frame 0 to ``min_epsilon`` at ``epsilon_decay_frames``."""
    fraction = min(frame / config.epsilon_decay_frames, 1.0)
    return config.max_epsilon + fraction * (config.min_epsilon - config.max_epsilon)


class DQNAgent:
    """The online Q-network, its target copy and the optimizer; acting and learning."""

    def __init__(self, obs_dim: int = 4, n_actions: int = 2, config: DQNConfig | None = None, loss_fn=None):
        self.td_loss = require_loss(loss_fn)  # (q_net, target_net, batch, gamma, prior_eps) -> (loss, priorities)
        self.config = config or DQNConfig()
        self.last_loss = float("nan")
        self.n_actions = n_actions
        self.q = QNetwork(obs_dim, n_actions)
        self.target = copy.deepcopy(self.q)
        self.target.requires_grad_(False)
        self.optimizer = torch.optim.Adam(self.q.parameters(), lr=self.config.lr, fused=True)  # fused: ~30% faster on CPU
        self.gradient_steps = 0

    def greedy(self, obs) -> int:
        """The action with the largest Q-value for one observation (4,)."""
        return self.q.greedy(obs)

    def act(self, obs, epsilon: float, rng: np.random.Generator) -> int:
        """Epsilon-greedy: a uniformly random action with probability ``epsilon``."""
        if rng.random() < epsilon:
            return int(rng.integers(self.n_actions))
        return self.greedy(obs)

    def learn(self, batch: dict[str, np.ndarray]) -> np.ndarray:
        """One gradient step on a batch (numpy arrays of (B, ...), optional ``weights`` (B,)).

        The loss and the new priorities come from ``self.td_loss``, the ``loss_fn`` the agent was
        given (``prioritized_td_loss``'s signature). Returns the new priorities (B,) as
        numpy: ``|delta| + prior_eps``. ``self.last_loss`` is the weighted loss (a float).
        """
        tensors = batch_tensors(batch)
        loss, priorities = self.td_loss(self.q, self.target, tensors, self.config.gamma, self.config.prior_eps)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        self.gradient_steps += 1
        if self.gradient_steps % self.config.target_update == 0:
            self.target.load_state_dict(self.q.state_dict())
        self.last_loss = float(loss.detach())
        return np.asarray(torch.as_tensor(priorities).detach(), dtype=np.float64)


def batch_tensors(batch: dict[str, np.ndarray]) -> dict[str, torch.Tensor]:
    """A replay buffer's batch as tensors: ``obs`` (B, 4) float32, ``acts`` (B,) int64, ``rews``
    (B,) float32, ``next_obs`` (B, 4) float32, ``done`` (B,) float32 (1.0 where the episode
    ended) and ``weights`` (B,) float32 (all ones for a uniform buffer, which has none)."""
    out = {
        "obs": torch.as_tensor(batch["obs"], dtype=torch.float32),
        "acts": torch.as_tensor(batch["acts"], dtype=torch.int64),
        "rews": torch.as_tensor(batch["rews"], dtype=torch.float32),
        "next_obs": torch.as_tensor(batch["next_obs"], dtype=torch.float32),
        "done": torch.as_tensor(batch["done"], dtype=torch.float32),
    }
    weights = batch.get("weights")
    out["weights"] = torch.ones(len(out["rews"])) if weights is None else torch.as_tensor(weights, dtype=torch.float32)
    return out


@dataclass
class TrainResult:
    """What a training run returns. Lists are per episode (``scores``, ``episode_ends``: the
    frame at which each ended), per gradient step (``losses``: mean weighted loss) or per
    frame (``epsilons``)."""

    seed: int
    prioritized: bool
    scores: list[float] = field(default_factory=list)
    episode_ends: list[int] = field(default_factory=list)
    losses: list[float] = field(default_factory=list)
    epsilons: list[float] = field(default_factory=list)
    frames_to_solve: int | None = None
    wall_s: float = 0.0
    cpu_s: float = 0.0
    agent: DQNAgent | None = None

    @property
    def solved(self) -> bool:
        return self.frames_to_solve is not None


def solved_at(scores, episode_ends, threshold: float = SOLVED_SCORE, window: int = SOLVED_WINDOW) -> int | None:
    """The first frame at which the mean of the last ``window`` episode scores reaches
    ``threshold`` (None if it never does)."""
    scores = np.asarray(scores, dtype=float)
    if len(scores) < window:
        return None
    means = np.convolve(scores, np.ones(window) / window, mode="valid")  # means[k]: episodes k .. k + window - 1
    hits = np.flatnonzero(means >= threshold)
    return None if hits.size == 0 else int(episode_ends[hits[0] + window - 1])


def require_memory(memory):
    """``memory`` if it is a replay buffer (``store``, ``sample_batch``, ``len``); otherwise a
    TypeError that says what to pass."""
    if isinstance(memory, str) or not all(hasattr(memory, name) for name in ("store", "sample_batch", "__len__")):
        raise TypeError(
            f"memory must be a replay buffer object, got {memory!r}: pass your PrioritizedReplayBuffer (Exercise 3), or "
            "ReplayBuffer(4, size, batch_size, memory=CircularMemory) for uniform replay."
        )
    return memory


def train_dqn(
    seed: int = 0,
    config: DQNConfig | None = None,
    memory=None,
    live_every: int | None = None,
    stop_when_solved: bool = False,
    loss_fn=None,
    live: bool = False,
) -> TrainResult:
    """Train a fresh DQN agent on CartPole for ``config.num_frames`` environment steps.

    ``memory`` (required): a buffer object with ``store``, ``sample_batch`` and ``len`` (and
    ``update_priorities`` if it is prioritized: then ``sample_batch(beta, rng=...)`` must return
    ``weights`` and ``indices``), empty, of ``config.batch_size`` transitions per batch. One
    gradient step per frame once the memory holds a batch; beta is annealed linearly from
    ``beta0`` to 1 over the run (``buffer.beta_schedule``).
    ``live_every``: redraw the score/loss/epsilon plots in place every so many frames
    (in a notebook); None: no plots. ``live=True`` (the notebook): redraw every
    ``LIVE_EVERY`` frames where someone watches, or draw the plots once at the end where nobody
    can (``runtime.headless()``). ``loss_fn``: the function that gives the loss and the
    new priorities (Exercise 4's ``prioritized_td_loss`` or one with its signature; required).
    Returns a ``TrainResult``
    with the agent.
    """
    require_loss(loss_fn)
    buffer = require_memory(memory)
    config = config or DQNConfig()
    if live:
        from course_utils.runtime import headless

        live_every = None if headless() else LIVE_EVERY
    seed_torch(seed)
    rng = np.random.default_rng(seed)
    env = make_env()
    obs_dim, n_actions = env.observation_space.shape[0], int(env.action_space.n)
    prioritized = hasattr(buffer, "update_priorities")
    agent = DQNAgent(obs_dim, n_actions, config, loss_fn)
    result = TrainResult(seed=seed, prioritized=prioritized, agent=agent)
    plot = None
    if live_every:
        from course_utils.plotting import LiveView

        plot = LiveView()
    wall, cpu = time.perf_counter(), time.process_time()

    obs, _ = env.reset(seed=seed)
    score = 0.0
    for frame in range(1, config.num_frames + 1):
        epsilon = epsilon_at(frame - 1, config)
        action = agent.act(obs, epsilon, rng)
        next_obs, reward, terminated, truncated, _ = env.step(action)
        buffer.store(obs, action, reward, next_obs, terminated)  # a time limit is not an end: keep bootstrapping
        obs = next_obs
        score += reward
        result.epsilons.append(epsilon)
        if terminated or truncated:
            result.scores.append(score)
            result.episode_ends.append(frame)
            score = 0.0
            obs, _ = env.reset()
            if result.frames_to_solve is None:
                result.frames_to_solve = solved_at(result.scores[-SOLVED_WINDOW:], result.episode_ends[-SOLVED_WINDOW:])
                if result.frames_to_solve is not None and stop_when_solved:
                    break
        if len(buffer) >= config.batch_size:
            if prioritized:
                batch = buffer.sample_batch(beta_schedule(frame, config.num_frames, config.beta0), rng=rng)
            else:
                batch = buffer.sample_batch(rng=rng)
            priorities = agent.learn(batch)
            result.losses.append(agent.last_loss)
            if prioritized:
                buffer.update_priorities(batch["indices"], priorities)
        if plot is not None and frame % live_every == 0:
            plot.show_figure(plot_training(result, frame))
    result.wall_s = time.perf_counter() - wall
    result.cpu_s = time.process_time() - cpu
    env.close()
    if plot is not None:
        plot.show_figure(plot_training(result, frame))
    elif live:
        import matplotlib.pyplot as plt

        plot_training(result)
        plt.show()
    return result


# --------------------------------------------------------------------------------------
# Plots


def plot_training(result: TrainResult, frame: int | None = None, axes=None):
    """Score per episode (with the mean of the last 10), mean loss per gradient step, and
    epsilon per frame, side by side. Returns the figure."""
    import matplotlib.pyplot as plt

    if axes is None:
        fig, axes = plt.subplots(1, 3, figsize=(15, 3.8))
    else:
        fig = axes[0].figure
    frame = frame if frame is not None else len(result.epsilons)
    scores = np.asarray(result.scores, dtype=float)
    recent = scores[-SOLVED_WINDOW:].mean() if scores.size else float("nan")
    axes[0].plot(result.episode_ends, scores, marker=".", linewidth=1, label="episode score")
    if scores.size >= SOLVED_WINDOW:
        means = np.convolve(scores, np.ones(SOLVED_WINDOW) / SOLVED_WINDOW, mode="valid")
        axes[0].plot(result.episode_ends[SOLVED_WINDOW - 1 :], means, label="mean of last 10")
    axes[0].axhline(SOLVED_SCORE, color="0.5", linestyle=":", label="solved (195)")
    axes[0].set(title=f"Score (frame {frame}, last 10: {recent:.0f})", xlabel="frame", ylabel="score", ylim=(0, 210))
    axes[0].legend(loc="upper left", fontsize=8)
    losses = np.asarray(result.losses, dtype=float)
    axes[1].plot(np.arange(1, losses.size + 1), losses, linewidth=0.5)
    axes[1].set(title="Loss", xlabel="gradient step", ylabel="weighted smooth-L1 loss", yscale="log" if losses.size else "linear")
    axes[2].plot(np.arange(1, len(result.epsilons) + 1), result.epsilons)
    axes[2].set(title="Epsilon", xlabel="frame", ylabel="epsilon", ylim=(0, 1.05))
    fig.tight_layout()
    return fig


def plot_comparison(curves: dict, ax=None, title: str = "Uniform vs prioritized replay on CartPole"):
    """Mean (line) and min-max band (shade) over seeds of the score against frames, one
    colour per method. ``curves``: ``{"uniform": {"frames": [...], "scores": [[...] per seed]}, ...}``
    as returned by ``learning_curves`` (scores of the last 10 episodes, sampled on a grid of frames)."""
    import matplotlib.pyplot as plt

    ax = ax or plt.subplots(figsize=(7, 4))[1]
    for name, curve in curves.items():
        frames, scores = np.asarray(curve["frames"]), np.asarray(curve["scores"], dtype=float)
        mean = np.nanmean(scores, axis=0)
        ax.plot(frames, mean, label=f"{name} (mean of {scores.shape[0]} seeds)")
        ax.fill_between(frames, np.nanmin(scores, axis=0), np.nanmax(scores, axis=0), alpha=0.2)
    ax.axhline(SOLVED_SCORE, color="0.5", linestyle=":", label="solved (195)")
    ax.set(title=title, xlabel="frame", ylabel="mean score of the last 10 episodes", ylim=(0, 210))
    ax.legend(loc="upper left", fontsize=9)
    return ax


# --------------------------------------------------------------------------------------
# Multi-seed comparison


def running_score(result: TrainResult, frames) -> np.ndarray:
    """Mean score of the last 10 episodes finished by each frame in ``frames`` (NaN before the first)."""
    ends = np.asarray(result.episode_ends)
    scores = np.asarray(result.scores, dtype=float)
    out = np.full(len(frames), np.nan)
    for i, frame in enumerate(frames):
        finished = np.searchsorted(ends, frame, side="right")
        if finished:
            out[i] = scores[max(0, finished - SOLVED_WINDOW) : finished].mean()
    return out


def learning_curves(seeds=(0, 1, 2), config: DQNConfig | None = None, memories: dict | None = None, grid: int = 250,
                    loss_fn=None) -> dict:
    """Train one agent per seed and memory kind with ``loss_fn`` (required: see ``train_dqn``).
    ``memories`` (required): ``{kind: make(config)}``, a function per kind (``"uniform"``,
    ``"prioritized"``) that returns a new empty buffer for a run. Returns per kind the running
    score on a grid of frames, the frames to solve and the wall/CPU seconds of every run
    (JSON-ready)."""
    require_loss(loss_fn)
    if not memories:
        raise TypeError('memories must map each memory kind to a function of the config that makes a new buffer, e.g. '
                        '{"prioritized": lambda config: PrioritizedReplayBuffer(4, config.memory_size, config.batch_size, '
                        'config.alpha)}.')
    config = config or DQNConfig()
    frames = list(range(grid, config.num_frames + 1, grid))

    def one_run(job) -> dict:
        kind, seed = job
        run = train_dqn(seed, config, memory=memories[kind](config), loss_fn=loss_fn)
        return {"scores": [None if math.isnan(x) else round(float(x), 2) for x in running_score(run, frames)],
                "frames_to_solve": run.frames_to_solve, "wall_s": round(run.wall_s, 2), "cpu_s": round(run.cpu_s, 2)}

    # the runs are independent: one per core (each seeds itself, so the curves are those of
    # running them one after the other)
    jobs = [(kind, seed) for kind in memories for seed in seeds]
    runs = dict(zip(jobs, fork_map(one_run, jobs), strict=True))
    curves = {}
    for kind in memories:
        mine = [runs[kind, seed] for seed in seeds]
        curves[kind] = {"seeds": list(seeds), "frames": frames, **{key: [run[key] for run in mine] for key in
                                                                   ("scores", "frames_to_solve", "wall_s", "cpu_s")}}
    return curves


def load_results(path: Path = RESULTS) -> dict:
    """The stored comparison (written by ``course_admin.replay.train.measure_and_save`` with the
    course's own buffers)."""
    return json.loads(Path(path).read_text())


def summarize_comparison(stored: dict) -> dict:
    """The stored uniform-vs-prioritized comparison (``load_results``) in a few numbers, per kind:
    ``seeds``, ``solved`` (how many seeds solved within the run), ``frames_to_solve`` (per seed,
    None if not solved), ``median_frames`` (the median over seeds, an unsolved seed counting as
    the run's length: an optimistic bound for it), ``final_mean`` (mean over seeds of the score at
    the last grid frame) and ``cpu_s`` (mean CPU seconds per run). ``paired``: for the same seeds,
    how many prioritized runs solved sooner than the uniform run, later, or equally (an unsolved
    run counts as solving after the end)."""
    num_frames = stored["config"]["num_frames"]
    out = {"num_frames": num_frames}
    for kind, curve in stored["curves"].items():
        frames = [num_frames + 1 if f is None else f for f in curve["frames_to_solve"]]
        finals = [s[-1] for s in curve["scores"] if s[-1] is not None]
        out[kind] = {
            "seeds": list(curve["seeds"]),
            "solved": sum(f is not None for f in curve["frames_to_solve"]),
            "frames_to_solve": list(curve["frames_to_solve"]),
            "median_frames": float(np.median(np.minimum(frames, num_frames))),
            "final_mean": float(np.mean(finals)) if finals else float("nan"),
            "cpu_s": float(np.mean(curve["cpu_s"])),
        }
    if {"uniform", "prioritized"} <= set(stored["curves"]):
        uniform, prioritized = (_solve_frames(stored["curves"][kind], num_frames) for kind in ("uniform", "prioritized"))
        common = sorted(set(uniform) & set(prioritized))
        out["paired"] = {
            "seeds": len(common),
            "prioritized_sooner": sum(prioritized[s] < uniform[s] for s in common),
            "uniform_sooner": sum(uniform[s] < prioritized[s] for s in common),
            "ties": sum(uniform[s] == prioritized[s] for s in common),
        }
    return out


def _solve_frames(curve: dict, num_frames: int) -> dict:
    """{seed: frames to solve}, an unsolved run counting as ``num_frames + 1``."""
    return {s: num_frames + 1 if f is None else f for s, f in zip(curve["seeds"], curve["frames_to_solve"], strict=True)}


def describe_comparison(summary: dict) -> str:
    """``summarize_comparison``'s numbers as the sentences the notebook prints."""
    lines = []
    for kind in ("uniform", "prioritized"):
        item = summary[kind]
        lines.append(f"{kind:>11}: solved in {item['solved']} of {len(item['seeds'])} seeds within "
                     f"{summary['num_frames']} frames "
                     f"(frames to solve {item['frames_to_solve']}, median {item['median_frames']:.0f}); mean score of the "
                     f"last 10 episodes at the end {item['final_mean']:.1f}; {item['cpu_s']:.1f} s of CPU time per run.")
    paired = summary.get("paired")
    if paired:
        lines.append(f"Seed by seed: prioritized replay solved sooner in {paired['prioritized_sooner']} of "
                     f"{paired['seeds']} seeds, "
                     f"uniform replay in {paired['uniform_sooner']}, {paired['ties']} tied.")
    lines.append(comparison_verdict(summary))
    return "\n".join(lines)


def comparison_verdict(summary: dict) -> str:
    """What ``summarize_comparison``'s numbers allow one to conclude. Fewer than ``MIN_SEEDS``
    paired seeds: nothing. Otherwise a memory is called better only if it solved sooner in every
    seed but at most one, and solved in at least two more seeds."""
    paired = summary.get("paired")
    uniform, prioritized = summary["uniform"], summary["prioritized"]
    if not paired or paired["seeds"] < MIN_SEEDS:
        seeds = paired["seeds"] if paired else 0
        return (f"Verdict: {seeds} seeds are too few to tell the two memories apart (fewer than {MIN_SEEDS}): "
                "this is a demonstration, not a measurement.")
    for name, other in (("prioritized", "uniform"), ("uniform", "prioritized")):
        if paired[f"{name}_sooner"] >= paired["seeds"] - 1 and summary[name]["solved"] >= summary[other]["solved"] + 2:
            return (f"Verdict: {name} replay did better on these seeds, consistently enough to take seriously, "
                    f"though {paired['seeds']} seeds on one task are still a small sample.")
    return (f"Verdict: the difference ({prioritized['solved']} against {uniform['solved']} seeds solved, final scores "
            f"{prioritized['final_mean']:.0f} against {uniform['final_mean']:.0f}) is within the seed-to-seed spread: these "
            "runs do not show that either memory is better on CartPole.")


# --------------------------------------------------------------------------------------
# Something to watch: a random and a trained agent side by side


@dataclass
class WatchPair:
    """A random and a trained agent on the same CartPole episode: the frames side by side and the
    scores (steps the pole stayed up)."""

    frames: list
    random_score: float
    trained_score: float


def random_and_trained(seed: int = 1, episode_seed: int = 100, every: int = 2) -> WatchPair:
    """Play one episode (the same start, ``episode_seed``) with random pushes (drawn with
    ``seed``) and with the course's trained agent (the ``cartpole_dqn`` checkpoint: nothing is
    trained here); keep every ``every``-th frame."""
    from course_utils.animation import record_episode

    net = trained_q_network()
    env = make_env(render_mode="rgb_array")
    rng = np.random.default_rng(seed)
    random_frames, random_score, _ = record_episode(env, lambda obs: int(rng.integers(2)), seed=episode_seed,
                                                    max_steps=MAX_EPISODE_STEPS, every=every)
    trained_frames, trained_score, _ = record_episode(env, net.greedy, seed=episode_seed,
                                                      max_steps=MAX_EPISODE_STEPS, every=every)
    env.close()
    return WatchPair(side_by_side(random_frames, trained_frames), random_score, trained_score)
