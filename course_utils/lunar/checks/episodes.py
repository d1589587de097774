"""Exercise check of tutorial 3, exercise 4: ``TrainBatch.from_episodes``, as an ``Exercise``
(drive on cases, judge the record; see ``course_utils.checking``), and its ``check_from_episodes``.

``from_episodes`` gets the check's own episodes (``expected.StoredEpisode``: they know their
q-values for the case's gamma and for 1 only, and cannot be built as ``Episode(total_reward,
experiences)``), which are no answer to exercise 3.
"""

from __future__ import annotations

import torch

from course_utils.check_helpers import attribute, is_error, method, tensor_of
from course_utils.checking import Exercise, Problem, fmt, raise_if_error
from course_utils.lunar.expected import StoredEpisode, load_expected, stored_episode

# ---------------------------------------------------------------------------------------------
# 4. TrainBatch.from_episodes


def _from_episodes_cases() -> list[dict]:
    """Batches of episodes (states, actions, rewards and the q-values their calc_qvals returns for
    gamma and for 1) and gamma."""
    data = load_expected()["batch"]
    episodes, start = [], 0
    for ep in data["episodes"]:
        length = len(ep["rewards"])
        episodes.append(
            {**{key: ep[key] for key in ("states", "actions", "rewards", "q_vals_undiscounted")},
             "qvals": data["q_vals"][start : start + length]}
        )
        start += length
    return [{"gamma": data["gamma"], "episodes": episodes}]


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
            undiscounted = torch.tensor([q for ep in episodes for q in ep["q_vals_undiscounted"]], dtype=torch.float32)
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
    one_per_case="cases",
)


def check_from_episodes(TrainBatch) -> bool:  # noqa: N803 (the exercise's class name)
    """``TrainBatch.from_episodes(episodes, gamma)`` on the check's stored episodes (``expected.StoredEpisode``)."""
    return FROM_EPISODES.check(TrainBatch)


EXERCISES = {FROM_EPISODES.grade_id: FROM_EPISODES}
"""This module's exercise by the grade id of its hidden-test cell."""
