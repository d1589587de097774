"""Tutorial 3's policy-gradient experiments (vpg, epg, bpg, cpg, then aac) with an on-disk
cache: ``run_experiment`` trains a network with the notebook's classes, or reloads the
result of the same code and hyperparameters (``code_fingerprint``); ``plot_experiment_results``
draws the four panels the notebook compares them on.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
from torch import nn

from course_utils.lunar.env import make_env
from course_utils.lunar.harness import VectorBatchDataset
from course_utils.lunar.sizes import SIZES
from course_utils.paths import ASSETS

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
    fingerprint = code_fingerprint(net_type, list(loss_fns), trainer_type, batch_type, episode_type, hp, train_kw)
    path = _cache_file(name, max_episodes, seed, fingerprint)
    if path.exists() and not force:
        data = json.loads(path.read_text())
        data["model_state"] = torch.load(path.with_suffix(".pt"), weights_only=True)
        if progress:
            print(f"{name}: loaded from {path} (force=True to run again)")
        return data
    torch.manual_seed(seed)
    env = make_env()
    net = net_type.build_for_env(env, hidden_layers=hp["hidden_layers"])
    env.close()
    dataset = VectorBatchDataset(net, hp["batch_size"], hp["gamma"], seed=seed, batch_type=batch_type, episode_type=episode_type)
    optimizer = torch.optim.Adam(net.parameters(), lr=hp["learn_rate"])
    trainer = trainer_type(net, optimizer, loss_fns, dataset)
    data = trainer.train(max_episodes=max_episodes, progress=progress, desc=name, **train_kw)
    data = {key: list(value) for key, value in data.items()}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data) + "\n")
    torch.save(net.state_dict(), path.with_suffix(".pt"))
    data["model_state"] = net.state_dict()
    return data


def plot_experiment_results(results: dict, fig=None):
    """The four panels (policy loss, baseline, entropy loss, mean reward) against episodes."""
    import matplotlib.pyplot as plt

    if fig is None:
        fig, _ = plt.subplots(2, 2, sharex=True, figsize=(12, 8))
    titles = {"loss_p": "policy loss", "baseline": "baseline", "loss_e": "entropy loss", "mean_reward": "mean reward"}
    for ax, (key, title) in zip(fig.axes, titles.items(), strict=False):
        for name, data in results.items():
            if key in data:
                ax.plot(data["episode_num"], data[key], label=name)
        ax.set_title(title)
        ax.set_xlabel("episode")
        ax.legend()
    fig.tight_layout()
    return fig


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
    episodes = results[name]["episode_num"][-1]
    advice = (f"only {episodes} episodes were run: that is too few to get there"
              if episodes < SIZES.full("experiment_episodes") else
              "compare your loss with the formula, look at the policy-loss and entropy panels, or tune the hyperparameters")
    return (f"{name}: best mean reward {best:.1f}, not above the bar of {bar:g} yet "
            f"(the course's full-size run reached {stored:.1f}): {advice}.")


def loss_scales(run: dict, delta: float, batches: int = 10) -> str:
    """What ``delta`` balances: the sizes of the policy term and the value term of the AAC loss over
    the first ``batches`` batches of ``run`` (training data with ``loss_p`` and ``loss_v``)."""
    if "loss_v" not in run or "loss_p" not in run:
        raise KeyError("This run has no loss_p and loss_v: pass the aac run (results['aac']).")
    n = min(batches, len(run["loss_v"]))
    policy = float(np.mean(np.abs(run["loss_p"][:n])))
    value = float(np.mean(run["loss_v"][:n]))
    return (f"Over the first {n} batches: |policy term| {policy:.0f} on average, value term (v - q)^2 {value:.0f} "
            f"(v off by about {np.sqrt(value):.0f}), so delta * value term = {delta * value:.0f}.")
