"""Exercise checks of tutorial 3, exercises 4-5: ``Episode.calc_qvals``, ``TrainBatch.from_episodes``
and the episode-batch generator, as ``Exercise``s (drive on cases, judge the record; see
``course_utils.checking``). Their ``check_*`` functions are in ``agents``.

``from_episodes`` gets the check's own episodes (``expected.StoredEpisode``: they know their
q-values for the case's gamma and for 1 only, and cannot be built as ``Episode(total_reward,
experiences)``); the generator plays the check's ``_ScriptedAgent``. Neither is an answer to
an exercise.
"""

from __future__ import annotations

import functools

import numpy as np
import torch

from course_utils import facts
from course_utils.checking import Exercise, Problem, attempt, fmt, raise_if_error
from course_utils.lunar.checks.agent_standins import (
    _ScriptedAgent,
    attribute,
    close,
    flag,
    is_error,
    method,
    number,
    safely,
)
from course_utils.lunar.checks.common import tensor_of
from course_utils.lunar.checks.qvals import CALC_QVALS  # noqa: F401 (the tutorial's checks import it from here)
from course_utils.lunar.expected import StoredEpisode, load_expected, stored_episode
from course_utils.returns import discounted_returns
from course_utils.runtime import seed_torch

# ---------------------------------------------------------------------------------------------
# 5. TrainBatch.from_episodes


def _from_episodes_cases(hidden: bool) -> list[dict]:
    """Batches of episodes (states, actions, rewards and the q-values their calc_qvals(gamma) returns) and gamma."""
    if not hidden:
        data = load_expected()["batch"]
        episodes, start = [], 0
        for ep in data["episodes"]:
            length = len(ep["rewards"])
            episodes.append(
                {**{key: ep[key] for key in ("states", "actions", "rewards")}, "qvals": data["q_vals"][start : start + length]}
            )
            start += length
        return [{"gamma": data["gamma"], "episodes": episodes}]
    rng = np.random.default_rng(808)
    cases = []
    for gamma, n_obs, lengths in ((0.8, 6, (5, 1, 12)), (0.95, 8, (20, 7))):
        episodes = []
        for length in lengths:
            rewards = np.round(rng.normal(0, 2, length), 3).tolist()
            states = np.round(rng.normal(0, 1, (length, n_obs)), 4).tolist()
            episodes.append(
                {
                    "states": states,
                    "actions": rng.integers(0, 4, length).tolist(),
                    "rewards": rewards,
                    "qvals": np.round(discounted_returns(rewards, gamma=gamma), 6).tolist(),
                }
            )
        cases.append({"gamma": gamma, "episodes": episodes})
    return cases


def _stored_episodes(case: dict) -> list[StoredEpisode]:
    return [stored_episode(ep, case["gamma"], ep["qvals"]) for ep in case["episodes"]]


_FIELDS = ("states", "actions", "q_vals", "total_rewards")


def _drive_from_episodes(cases, TrainBatch) -> list[dict]:
    out = []
    for case in cases:
        gamma = case["gamma"]
        batch = method(f"TrainBatch.from_episodes(episodes, {gamma})", TrainBatch, "from_episodes", _stored_episodes(case), gamma)
        if is_error(batch):
            out.append({"batch": batch})
        else:
            out.append({"batch": None, **{name: attribute(f"batch.{name}", batch, name) for name in _FIELDS}})
    return out


def _judge_from_episodes(got, expected, cases) -> None:
    if len(got) != len(cases):
        raise Problem(f"the record holds {len(got)} cases instead of {len(cases)}.")
    for case, mine, reference in zip(cases, got, expected, strict=True):
        raise_if_error(mine["batch"])
        episodes = case["episodes"]
        n, n_obs = sum(len(ep["rewards"]) for ep in episodes), len(episodes[0]["states"][0])
        states = tensor_of("batch.states", mine["states"], (n, n_obs))
        actions = tensor_of("batch.actions", mine["actions"], (n,))
        q_vals = tensor_of("batch.q_vals", mine["q_vals"], (n,)).float()
        totals = tensor_of("batch.total_rewards", mine["total_rewards"], (len(episodes),)).float()
        want = {name: reference[name] for name in _FIELDS}
        if not torch.allclose(states.float(), want["states"].float()):
            raise Problem("batch.states should stack the states of all experiences, episode after episode, in order.")
        if actions.dtype not in (torch.int64, torch.int32) or not torch.equal(actions.long(), want["actions"].long()):
            raise Problem("batch.actions should hold the actions (integers, dtype torch.long) in order.")
        if not torch.allclose(q_vals, want["q_vals"].float(), atol=1e-4):
            undiscounted = torch.tensor(
                [q for ep in episodes for q in discounted_returns(ep["rewards"], gamma=1.0)], dtype=torch.float32
            )
            hint = " Hint: pass gamma to calc_qvals." if torch.allclose(q_vals, undiscounted, atol=1e-3) else ""
            raise Problem(
                f"batch.q_vals should be each episode's calc_qvals(gamma), concatenated: expected starting "
                f"{fmt(want['q_vals'][:3])}, got {fmt(q_vals[:3])}.{hint}"
            )
        if not torch.allclose(totals, want["total_rewards"].float(), atol=1e-4):
            raise Problem(
                f"batch.total_rewards should be each episode's total_reward: {fmt(want['total_rewards'])}, got {fmt(totals)}."
            )


FROM_EPISODES = Exercise(
    name="TrainBatch.from_episodes",
    grade_id="test_from_episodes",
    cases=_from_episodes_cases,
    drive=_drive_from_episodes,
    judge=_judge_from_episodes,
    reference=("TrainBatch",),
)


# ---------------------------------------------------------------------------------------------
# 5. The episode-batch generator


def _generator_cases(hidden: bool) -> list[dict]:
    """The scripted agent's episode lengths, seed and state size; the dataset's batch size and gamma; batches to take."""
    if not hidden:
        return [{"lengths": list(_ScriptedAgent.LENGTHS), "seed": 11, "n_obs": 8, "batch_size": 3, "gamma": 0.9, "batches": 2}]
    return [
        {"lengths": [2, 8, 1, 4, 11, 3, 1, 6], "seed": 29, "n_obs": 5, "batch_size": 4, "gamma": 0.95, "batches": 3},
        {"lengths": [3, 1, 2], "seed": 5, "n_obs": 8, "batch_size": 2, "gamma": 0.99, "batches": 4},
    ]


def _episode_record(episode) -> dict:
    experiences = safely("episode.experiences", lambda: list(getattr(episode, "experiences", None) or ()))
    if is_error(experiences) or not experiences:
        return {"experiences": None}
    looks = safely(
        "the episode's experiences",
        lambda: {"rewards": [e.reward for e in experiences], "done": [e.is_done for e in experiences]},
    )
    if is_error(looks):
        return {"experiences": looks}
    return {"experiences": len(experiences), **looks, "total": attribute("episode.total_reward", episode, "total_reward")}


def _drive_generator(cases, TrainBatchDataset) -> list[dict]:
    out = []
    for case in cases:
        size, gamma = case["batch_size"], case["gamma"]
        agent_fn = functools.partial(_ScriptedAgent, tuple(case["lengths"]), case["seed"], case["n_obs"])
        seed_torch(0)
        dataset = attempt(f"TrainBatchDataset(agent_fn, {size}, {gamma})", TrainBatchDataset, agent_fn, size, gamma)
        generator = method("episode_batch_generator()", dataset, "episode_batch_generator")
        batches = []
        for _ in range(case["batches"] if not is_error(generator) else 0):
            episodes = attempt("next(generator)", next, generator)
            # The episodes a list or tuple really holds: a subclass's __len__ could report the
            # batch size the check wants.
            held = None if is_error(episodes) else facts.items(episodes)
            if held is None:
                batches.append(episodes if is_error(episodes) else {"kind": safely("repr", lambda e=episodes: f"{e!r:.200}")})
                break
            episodes = held
            batches.append({"count": len(episodes), "episodes": [_episode_record(e) for e in episodes[: size + 1]]})
        out.append({"generator": generator if is_error(generator) else None, "batches": batches})
    return out


def _judge_generator(got, expected, cases) -> None:
    if len(got) != len(cases):
        raise Problem(f"the record holds {len(got)} cases instead of {len(cases)}.")
    for case, mine in zip(cases, got, strict=True):
        raise_if_error(mine["generator"])
        size = case["batch_size"]
        script = [
            [e.reward for e in episode] for episode in _ScriptedAgent(tuple(case["lengths"]), case["seed"], case["n_obs"]).script
        ]
        if len(mine["batches"]) == 0:
            raise Problem("the record of your generator holds no batch.")
        for k, batch in enumerate(mine["batches"]):
            raise_if_error(batch)
            if "kind" in batch or batch["count"] != size:
                shown = f"a list of {batch['count']} episodes" if "kind" not in batch else batch["kind"]
                raise Problem(f"each item should be a list of episode_batch_size={size} episodes, got {shown}.")
            for i, episode in enumerate(batch["episodes"]):
                raise_if_error(episode["experiences"])
                if episode["experiences"] is None:
                    raise Problem(f"episode {i} has no experiences: build Episode(total_reward, experiences).")
                done = [flag(f"batch {k}, episode {i}: an experience's is_done", d) for d in episode["done"]]
                if not done[-1] or any(done[:-1]):
                    raise Problem(
                        f"batch {k}, episode {i} is not one full episode: only its last experience should have "
                        "is_done=True. Keep stepping the agent until is_done, then start the next episode."
                    )
                rewards = [number(r) for r in episode["rewards"]]
                if None in rewards or not any(len(s) == len(rewards) and np.allclose(s, rewards) for s in script):
                    raise Problem(
                        f"batch {k}, episode {i} is not one of the episodes the agent played: keep every experience "
                        "of an episode, in the order step() returned them."
                    )
                total, given = sum(rewards), number(episode["total"])
                if given is None or not close(given, total, 1e-4):
                    raise Problem(
                        f"an episode's total_reward should be the sum of its rewards ({total:.3f}), "
                        f"got {episode['total']!r:.100}."
                    )
        if len(mine["batches"]) < case["batches"]:
            raise Problem(f"the generator stopped after {len(mine['batches'])} batches: it should yield batches forever.")


BATCH_GENERATOR = Exercise(
    name="TrainBatchDataset.episode_batch_generator",
    grade_id="test_batch_generator",
    cases=_generator_cases,
    drive=_drive_generator,
    judge=_judge_generator,
    reference=("TrainBatchDataset",),
)
