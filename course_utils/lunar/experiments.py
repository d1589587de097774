"""Tutorial 3's policy-gradient experiments (vpg, epg, bpg, cpg, then aac) with an on-disk
cache: ``run_experiment`` trains a network with the notebook's classes, or reloads the
result of the same code and hyperparameters (``code_fingerprint``); ``plot_experiment_results``
draws the four panels the notebook compares them on.
"""

from __future__ import annotations

import json
import numbers
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch
from torch import nn

from course_utils.lunar.critic import CriticFit
from course_utils.lunar.env import make_env
from course_utils.lunar.harness import VectorBatchDataset
from course_utils.lunar.sizes import SIZES
from course_utils.paths import ASSETS
from course_utils.runtime import positive_int, seed_torch, start_forked_child

EXPERIMENTS = {"vpg": (False, False), "epg": (False, True), "bpg": (True, False), "cpg": (True, True)}
"""Policy-gradient experiments: name -> (baseline, entropy)."""

STORED_RESULTS = ASSETS / "lunar_experiments.json"
"""The course's own full-size runs of the five experiments (``course train lunar-experiments``):
what the notebook shows while a student's classes do not pass their checks yet."""


def stored_results() -> dict:
    """The course's stored runs: ``{"runs": {name: training data}, "max_episodes", "seed",
    "pg_hp", "aac_hp", ...}``; each run has the curves ``run_experiment`` returns (no weights)."""
    return json.loads(STORED_RESULTS.read_text())


def experiment_cache_dir() -> Path:
    """Where experiment results are kept: ``$COURSE_CACHE/lunar`` (default ``~/.cache/rl-course/lunar``)."""
    from course_utils.checkpoints import cache_dir

    return cache_dir() / "lunar"


def code_fingerprint(*things) -> str:
    """A short hash of the code of classes, functions and loss objects, and of plain values.

    Two notebooks with the same classes (the same bytecode) and hyperparameters get the same
    fingerprint; changing a method changes it. Used in the experiment cache's file names so
    results are reloaded only for the code that produced them.
    """
    import hashlib
    import types

    digest = hashlib.sha256()

    def add_code(code: types.CodeType) -> None:
        digest.update(code.co_code)
        digest.update(repr(code.co_names).encode())
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                add_code(const)
            else:
                digest.update(repr(const).encode())

    def add(thing) -> None:
        if isinstance(thing, type):
            for klass in thing.__mro__:
                if klass.__module__.split(".")[0] in ("builtins", "torch", "typing"):
                    continue
                digest.update(klass.__qualname__.encode())
                for key, value in sorted(vars(klass).items()):
                    value = getattr(value, "__func__", value)
                    if hasattr(value, "__code__"):
                        digest.update(key.encode())
                        add_code(value.__code__)
        elif hasattr(thing, "__code__"):
            add_code(thing.__code__)
        elif isinstance(thing, nn.Module):
            add(type(thing))
            add({k: v for k, v in vars(thing).items() if isinstance(v, int | float | str | bool)})
        elif isinstance(thing, dict):
            for key, value in sorted(thing.items()):
                digest.update(repr(key).encode())
                add(value)
        elif isinstance(thing, list | tuple):
            for item in thing:
                add(item)
        else:
            digest.update(repr(thing).encode())

    for thing in things:
        add(thing)
    return digest.hexdigest()[:12]


def _cache_file(name: str, max_episodes: int, seed: int, fingerprint: str) -> Path:
    from course_utils.runtime import fast_mode

    mode = "fast" if fast_mode() else "full"  # fast results never stand in for full ones
    return experiment_cache_dir() / f"{name}-{mode}-{max_episodes}ep-seed{seed}-{fingerprint}.json"


class Experiment(NamedTuple):
    """One experiment of Sections 6 and 7: the notebook's network class, its losses, its
    trainer class, its hyperparameters (``batch_size``, ``gamma``, ``learn_rate``,
    ``hidden_layers``, and for an actor-critic ``critic_steps``: ``TrainerLoop.train``'s) and
    the ``Episode`` and ``TrainBatch`` classes the episodes are built as."""

    net_type: type
    loss_fns: list
    trainer_type: type
    hp: dict
    batch_type: type
    episode_type: type


SEEDS = (0, 1, 2)
"""The seeds every experiment is run with (``run_experiments``): one run can mislead."""


def _fingerprint(experiment: Experiment, train_kw: dict) -> str:
    e = experiment
    # the critic's own steps are code the trainer calls, not one of its classes: a change must show
    critic = [CriticFit] if e.hp.get("critic_steps") else []
    return code_fingerprint(e.net_type, list(e.loss_fns), e.trainer_type, e.batch_type, e.episode_type, e.hp, train_kw,
                            *critic)


def _load(path: Path) -> dict:
    data = json.loads(path.read_text())
    data["model_state"] = torch.load(path.with_suffix(".pt"), weights_only=True)
    return data


def _train(name: str, experiment: Experiment, max_episodes: int, seed: int, path: Path, *, workers=None,
           progress: bool = False, post_batch_fn=None, dataset_type=VectorBatchDataset, **train_kw) -> dict:
    """Train one run (see ``run_experiment``) and save it in ``path`` (+ ``.pt``); returns its data.
    ``dataset_type`` plays the episodes (``course bench lunar-experiments`` passes today's way)."""
    e = experiment
    seed_torch(seed)
    env = make_env()
    net = e.net_type.build_for_env(env, hidden_layers=e.hp["hidden_layers"])
    env.close()
    dataset = dataset_type(net, e.hp["batch_size"], e.hp["gamma"], seed=seed, batch_type=e.batch_type,
                           episode_type=e.episode_type, workers=workers)
    optimizer = torch.optim.Adam(net.parameters(), lr=e.hp["learn_rate"])
    trainer = e.trainer_type(net, optimizer, e.loss_fns, dataset)
    # an actor-critic's hyperparameters may give its critic more steps per batch (TrainerLoop.train)
    critic = {key: e.hp[key] for key in ("critic_steps", "critic_learn_rate") if key in e.hp}
    data = trainer.train(max_episodes=max_episodes, progress=progress, desc=name, post_batch_fn=post_batch_fn,
                         **critic, **train_kw)
    data = {key: list(value) for key, value in data.items()}
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(net.state_dict(), path.with_suffix(".pt"))
    path.write_text(json.dumps(data) + "\n")  # last: a run counts as cached once both files are whole
    data["model_state"] = net.state_dict()
    return data


def run_experiment(
    name: str,
    net_type,
    loss_fns,
    trainer_type,
    hp: dict,
    max_episodes: int,
    seed: int = 0,
    *,
    batch_type,
    episode_type,
    force: bool = False,
    progress: bool = True,
    **train_kw,
) -> dict:
    """Train ``net_type.build_for_env`` with ``loss_fns`` for ``max_episodes`` episodes, or reload.

    The episodes are played by ``VectorBatchDataset`` as ``episode_type`` (the notebook's
    ``Episode``) and turned into batches by ``batch_type.from_episodes`` (its ``TrainBatch``).
    The results (the trainer's ``training_data`` and the final weights) are saved in
    ``experiment_cache_dir()``; a later call with the same name, size, seed, mode, code and
    hyperparameters (see ``code_fingerprint``) reloads them unless ``force=True``. Returns the
    training data plus ``"model_state"``.
    """
    experiment = Experiment(net_type, list(loss_fns), trainer_type, hp, batch_type, episode_type)
    path = _cache_file(name, max_episodes, seed, _fingerprint(experiment, train_kw))
    if path.exists() and not force:
        if progress:
            print(f"{name}: loaded from {path} (force=True to run again)")
        return _load(path)
    return _train(name, experiment, max_episodes, seed, path, progress=progress, **train_kw)


def run_experiments(
    experiments: dict[str, Experiment],
    max_episodes: int,
    seeds=SEEDS,
    *,
    force: bool = False,
    progress: bool = True,
    workers: int | None = None,
) -> dict[str, dict]:
    """Every experiment with every seed, for ``max_episodes`` episodes each, or reloaded.

    Each run is ``run_experiment``'s (same cache, same result): runs not in the cache (or all,
    if ``force``) are trained by ``workers`` processes side by side, one run each at a time
    (default: ``balanced_workers`` over ``rollouts.default_workers()`` cores, which is 2 on a
    Linux machine with two cores, else 1 in this process; three runs on two cores get three
    processes), under one progress bar. Returns ``{name: summary}``: each summary has the
    keys of one run's training data, averaged over the seeds batch by batch, plus ``"seeds"``
    and ``"runs"`` (each seed's training data and ``"model_state"``, in seed order), which
    ``plot_experiment_results`` draws as a band. A ``max_episodes`` that is not a positive
    integer, or ``seeds`` that are not a non-empty collection of integers, are refused before
    anything is trained.
    """
    from course_utils.lunar.rollouts import default_workers

    positive_int("max_episodes", max_episodes, TypeError)
    given, seeds = seeds, [] if isinstance(seeds, (str, bytes)) else list(seeds)
    if not seeds or not all(isinstance(seed, numbers.Integral) and not isinstance(seed, bool) for seed in seeds):
        raise TypeError(f"seeds must be a non-empty collection of integers such as range(3), got {given!r}.")
    seeds = [int(seed) for seed in seeds]
    jobs, runs = [], {}
    for name, experiment in experiments.items():
        if not isinstance(experiment, Experiment):
            raise TypeError(f"experiments[{name!r}] is a {type(experiment).__name__}: give an lunar.Experiment(...).")
        fingerprint = _fingerprint(experiment, {})
        for seed in seeds:
            path = _cache_file(name, max_episodes, seed, fingerprint)
            if path.exists() and not force:
                runs[name, seed] = _load(path)
            else:
                jobs.append((name, experiment, max_episodes, seed, path))
    if progress and runs:
        print(f"{len(runs)} of {len(runs) + len(jobs)} runs loaded from {experiment_cache_dir()} (force=True to run them again)")
    if workers is None:
        workers = balanced_workers(len(jobs), default_workers())
    workers = min(workers, len(jobs)) if jobs else 0
    if workers == 1:
        for job in jobs:
            runs[job[0], job[3]] = _train(*job, progress=progress)
    elif workers > 1:
        for job, data in zip(jobs, _train_in_processes(jobs, workers, progress), strict=True):
            runs[job[0], job[3]] = data
    return {name: summarize([runs[name, seed] for seed in seeds], seeds) for name in experiments}


def balanced_workers(jobs: int, cores: int) -> int:
    """Worker processes for ``jobs`` runs of about the same length on ``cores`` cores: one per core,
    except where the runs do not split evenly over the cores and there are fewer than twice as
    many runs as cores: then one per run. Three runs on two cores as three processes sharing the
    cores all end after 1.5 runs' time; two processes would end after two (one core idle for the
    third run). The runs are the same either way (each is trained alone in its process)."""
    if jobs <= cores or jobs % cores == 0 or jobs > 2 * cores:
        return max(1, min(jobs, cores))
    return jobs


def summarize(runs: list[dict], seeds) -> dict:
    """One summary of the runs of an experiment with several seeds: each key of their training
    data averaged over the runs batch by batch (up to the shortest run), ``"seeds"`` and ``"runs"``."""
    n = min(len(run["episode_num"]) for run in runs)
    keys = [key for key in runs[0] if key != "model_state" and all(key in run for run in runs)]
    summary = {key: np.mean([run[key][:n] for run in runs], axis=0).tolist() for key in keys}
    return {**summary, "seeds": list(seeds), "runs": runs}


_JOBS: list = []
"""The jobs of ``_train_in_processes``, which its forked worker processes read by index."""


def _work(tasks, events) -> None:
    """A worker process of ``_train_in_processes``: trains the runs whose indices it takes from
    ``tasks`` (until a None), one at a time with its shards in this process, and reports on
    ``events``. Stops by hand are the parent's to handle: this process ignores them."""
    import traceback

    from course_utils.lunar.numpy_policy import one_blas_thread

    start_forked_child()
    torch.set_num_threads(1)
    one_blas_thread()  # the rollouts' NumPy forwards: see numpy_policy.one_blas_thread
    while (index := tasks.get()) is not None:

        def report(batch_idx, model, batch, index=index):
            events.put(("episodes", index, len(batch.total_rewards)))

        try:
            _train(*_JOBS[index], workers=1, post_batch_fn=report)
            events.put(("done", index, None))
        except BaseException:  # noqa: BLE001 - the parent raises it with the run's name
            events.put(("error", index, traceback.format_exc(limit=-6)))
            return


def _train_in_processes(jobs: list, workers: int, progress: bool) -> list[dict]:
    """Train ``jobs`` (``_train``'s arguments) in ``workers`` forked processes; returns each
    job's data, read back from the files its process wrote. A failed run, a worker that dies
    or a stop by hand stops every worker before the error reaches the caller."""
    import multiprocessing as mp
    import queue

    from course_utils.lunar.harness import _progress

    global _JOBS
    _JOBS = jobs
    context = mp.get_context("fork")
    tasks, events = context.Queue(), context.Queue()
    for index in range(len(jobs)):
        tasks.put(index)
    for _ in range(workers):
        tasks.put(None)
    names = sorted({job[0] for job in jobs}, key=[job[0] for job in jobs].index)
    bar = _progress(len(jobs) * jobs[0][2], progress, f"{', '.join(names)}: {len(jobs)} runs, {workers} at a time")
    processes = [context.Process(target=_work, args=(tasks, events), daemon=True, name="lunar-experiment")
                 for _ in range(workers)]
    done: set[int] = set()
    try:
        for process in processes:
            process.start()
        while len(done) < len(jobs):
            try:
                kind, index, payload = events.get(timeout=1.0)
            except queue.Empty:
                dead = [p for p in processes if not p.is_alive() and p.exitcode != 0]
                if dead:
                    raise RuntimeError(
                        f"An experiment's worker process died (exit code {dead[0].exitcode}: out of memory, or killed). "
                        "Run again with workers=1."
                    ) from None
                continue
            if kind == "episodes" and bar is not None:
                bar.update(payload)
            elif kind == "done":
                done.add(index)
                if bar is not None:
                    bar.set_postfix(finished=f"{len(done)}/{len(jobs)}")
            elif kind == "error":
                name, _, _, seed, _ = jobs[index]
                raise RuntimeError(f"The experiment {name!r} with seed {seed} failed:\n{payload}")
    finally:
        for process in processes:
            process.join(timeout=5 if len(done) == len(jobs) else 0)
            if process.is_alive():
                process.kill()
                process.join()
        if bar is not None:
            bar.close()
        _JOBS = []
    return [_load(job[4]) for job in jobs]


CRITIC_KEYS = {"adv_m": "critic: mean advantage q - v per batch (0: centred)",
               "loss_v": "critic: value loss (v - q)^2 per batch (log scale)"}
"""The recorded fields the critic panels draw (the AAC loss's ``adv_m`` and ``loss_v``), with their titles."""


def has_critic(data: dict) -> bool:
    """Whether a run (or a summary of runs) recorded a critic's fields (``CRITIC_KEYS``)."""
    return all(key in data for key in CRITIC_KEYS)


def plot_experiment_results(results: dict, fig=None):
    """The four panels (policy loss, baseline, entropy loss, mean reward) against episodes, and,
    when a run has a critic (``has_critic``), a row of two critic panels: the mean advantage and
    the value loss of each batch, as the AAC loss recorded them (``CRITIC_KEYS``).

    An experiment run with several seeds (``run_experiments``) is drawn as the mean over its
    seeds with a band from the lowest to the highest seed, batch by batch; a single run as a line.
    """
    import matplotlib.pyplot as plt

    critic = any(has_critic(data) for data in results.values())
    if fig is None:
        fig, _ = plt.subplots(3 if critic else 2, 2, sharex=True, figsize=(12, 11 if critic else 8))
    titles = {"loss_p": "policy loss", "baseline": "baseline", "loss_e": "entropy loss", "mean_reward": "mean reward"}
    if critic:
        titles.update(CRITIC_KEYS)
    for ax, (key, title) in zip(fig.axes, titles.items(), strict=False):
        for index, (name, data) in enumerate(results.items()):
            if key not in data:
                continue
            episodes = data["episode_num"]
            runs = data.get("runs", [])
            label = f"{name} ({len(runs)} seeds)" if len(runs) > 1 else name
            # one colour per experiment in every panel, also where the others have no curve
            (line,) = ax.plot(episodes, data[key], label=label, color=f"C{index % 10}")
            if len(runs) > 1:
                low, high = seed_band(data, key)
                ax.fill_between(episodes, low, high, color=line.get_color(), alpha=0.2, linewidth=0)
        if key == "adv_m":
            ax.axhline(0.0, color="grey", linewidth=0.8, linestyle=":")
        if key == "loss_v":
            ax.set_yscale("log")
        ax.set_title(title + (" (mean over seeds, band: lowest to highest)" if key == "mean_reward" else ""))
        ax.set_xlabel("episode")
        if ax.get_legend_handles_labels()[0]:
            ax.legend()
    fig.tight_layout()
    return fig


def seed_band(summary: dict, key: str = "mean_reward") -> tuple[np.ndarray, np.ndarray]:
    """The lowest and the highest value of ``key`` over the seeds of ``summary`` (a result of
    ``run_experiments``), batch by batch: arrays as long as ``summary[key]``."""
    n = len(summary[key])
    values = np.array([run[key][:n] for run in summary["runs"]])
    return values.min(axis=0), values.max(axis=0)


def final_rewards(summary: dict) -> list[float]:
    """Each run's final mean reward (the last 100 episodes at its end), in seed order; a single
    run (no ``"runs"``) counts as one seed."""
    return [float(run["mean_reward"][-1]) for run in summary.get("runs", [summary])]


def separated(results: dict) -> list[tuple[str, str]]:
    """The pairs ``(a, b)`` of experiments where every seed of ``a`` ended above every seed of
    ``b`` (``final_rewards``): the differences the seeds do not blur."""
    finals = {name: final_rewards(summary) for name, summary in results.items()}
    return [(a, b) for a in finals for b in finals if a != b and min(finals[a]) > max(finals[b])]


def experiment_table(results: dict) -> str:
    """A text table of ``results`` (``run_experiments``' summaries): per experiment the final
    mean reward averaged over the seeds, the lowest and highest seed, and the best point of the
    mean curve; then the pairs whose seeds do not overlap (``separated``)."""
    lines = [f"{'':6}{'final mean reward':>19}{'lowest seed':>13}{'highest seed':>14}{'best of the mean':>18}"]
    for name, summary in results.items():
        finals = final_rewards(summary)
        lines.append(f"{name:6}{np.mean(finals):19.1f}{min(finals):13.1f}{max(finals):14.1f}{max(summary['mean_reward']):18.1f}")
    pairs = separated(results)
    seeds = {len(final_rewards(summary)) for summary in results.values()}
    lines.append(f"({max(seeds)} seeds each; the final mean reward is the mean of the last 100 episodes of each run.)")
    if pairs:
        lines.append("Every seed ended higher: " + ", ".join(f"{a} > {b}" for a, b in pairs) + ".")
    else:
        lines.append("No experiment's seeds all ended above another's: the seeds overlap everywhere.")
    return "\n".join(lines)


PERFORMANCE_BARS = {"cpg": 10.0, "aac": 50.0}
"""Soft bars for the best mean reward (last 100 episodes) of two experiments at full size: the
bars of the graded LunarLander assignment of the Technion's deep-learning course (CS236781)
that tutorial 3 is built on. The notebook prints whether a run cleared its bar; it never stops."""


def performance_bar(results: dict, name: str) -> str:
    """One line saying whether ``results[name]`` cleared its bar in ``PERFORMANCE_BARS``, and what
    to look at if not (with the course's stored run as a yardstick)."""
    if name not in PERFORMANCE_BARS:
        raise KeyError(f"No performance bar for {name!r}; there are bars for {sorted(PERFORMANCE_BARS)}.")
    if name not in results:
        raise KeyError(f"results has no run named {name!r} (it has {sorted(results)}): run the experiment cell first.")
    bar, best = PERFORMANCE_BARS[name], max(results[name]["mean_reward"])
    stored_run = stored_results()["runs"][name]
    stored = max(stored_run["mean_reward"])
    if list(results[name]["mean_reward"]) == list(stored_run["mean_reward"]):
        return f"{name} (the course's run): best mean reward {best:.1f}, {'above' if best > bar else 'below'} the bar of {bar:g}."
    if best > bar:
        return f"{name}: best mean reward {best:.1f}, above the bar of {bar:g} (the course's full-size run reached {stored:.1f})."
    episodes = int(results[name]["episode_num"][-1])
    advice = (f"only {episodes} episodes were run: that is too few to get there"
              if episodes < SIZES.full("experiment_episodes") else
              "compare your loss with the formula, look at the policy-loss and entropy panels, or tune the hyperparameters")
    return (f"{name}: best mean reward {best:.1f}, not above the bar of {bar:g} yet "
            f"(the course's full-size run reached {stored:.1f}): {advice}.")


def loss_scales(run: dict, delta: float, batches: int = 10) -> str:
    """What ``delta`` balances: the sizes of the policy term and the value term of the AAC loss over
    the first ``batches`` batches of ``run`` (training data with ``loss_p`` and ``loss_v``), and the
    weights their gradients put on each step: the policy term weighs grad log pi by the advantage
    q - v, the value term weighs grad v by 2 * delta * (v - q), the same error (reward units)."""
    if "loss_v" not in run or "loss_p" not in run:
        raise KeyError("This run has no loss_p and loss_v: pass the aac run (results['aac']).")
    n = min(batches, len(run["loss_v"]))
    policy = float(np.mean(np.abs(run["loss_p"][:n])))
    value = float(np.mean(run["loss_v"][:n]))
    error = float(np.sqrt(value))
    return (f"Over the first {n} batches: |policy term| {policy:.0f} on average, value term (v - q)^2 {value:.0f} "
            f"(v off by about {error:.0f}), so delta * value term = {delta * value:.0f}.\n"
            f"What the shared weights feel is the gradients: per step the policy term weighs grad log pi by the "
            f"advantage q - v (about {error:.0f} in size), the value term weighs grad v by 2 * delta * (v - q) "
            f"(about {2 * delta * error:.1f} with delta = {delta:g}, {2 * error:.0f} with delta = 1).")


def critic_lines(label: str, summary: dict, first: int = 10, last: int = 50) -> list[str]:
    """Per seed of ``summary`` (a run or a summary of runs with a critic, ``has_critic``): the mean
    advantage (reward units) averaged over the ``first`` batches and over the ``last`` batches, the
    value loss over the ``last`` batches and its square root (how far off v is, in reward units),
    and the final mean reward."""
    lines = [f"{label}:"]
    for seed, run in zip(summary.get("seeds", [None]), summary.get("runs", [summary]), strict=False):
        adv, loss_v = np.asarray(run["adv_m"]), np.asarray(run["loss_v"])
        n_first, n_last = min(first, len(adv)), min(last, len(adv))
        name = "" if seed is None else f"seed {seed}: "
        lines.append(f"  {name}mean advantage {np.mean(adv[:n_first]):+.0f} over the first {n_first} batches, "
                     f"{np.mean(adv[-n_last:]):+.0f} over the last {n_last}; value loss over the last {n_last} batches "
                     f"{np.mean(loss_v[-n_last:]):,.0f} (v off by about {np.sqrt(np.mean(loss_v[-n_last:])):.0f}); "
                     f"final mean reward {run['mean_reward'][-1]:.1f}")
    return lines


def critic_report(results: dict, name: str = "aac") -> str:
    """What the critic of ``results[name]`` did (``critic_lines``), then the course's stored runs
    beside it: its ``aac`` (unless ``results[name]`` is that run) and the stored ablation whose
    critic got one step per batch only (``stored["ablations"]``)."""
    if name not in results or not has_critic(results[name]):
        raise KeyError(f"results has no run {name!r} with a critic (adv_m and loss_v): run the aac experiment first.")
    stored = stored_results()
    ours = results[name]["mean_reward"] == stored["runs"][name]["mean_reward"]
    course = f"{name} (the course's run, critic_steps={stored['aac_hp']['critic_steps']})"
    lines = critic_lines(course if ours else f"{name} (yours)", results[name])
    if not ours:
        lines += critic_lines(course, stored["runs"][name])
    for label, summary in stored.get("ablations", {}).items():
        lines += critic_lines(f"{label} (the course's run: one critic step per batch, the loss's own)", summary)
    return "\n".join(lines)
