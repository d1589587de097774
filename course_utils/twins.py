"""The course code that computes what each exercise asks (its "twins"), by the grade id of the
exercise's hidden-test cell: modules the course's own agents, stand-ins and judges need, which an
answer could wrap instead of doing the work.

The grader drives an answer where none of its exercise's twins can be read
(``course_admin.grading.drive_apart``), so an answer that wraps one scores 0 on that exercise; the
check cell warns the student before that happens (``checking.borrowed_course_code``). The
exercise index (``course_admin.exercises``) shows them with the rest of each exercise's parts.
"""

from __future__ import annotations

_LUNAR_ENGINE = ("course_utils.lunar.rollouts",)
"""The rollout workers that play tutorial 3's batches: they sample actions from a policy's scores,
and no exercise's answer needs them (the given ``VectorBatchDataset`` imports them where it plays).
The course's own lander (its network, NumPy actor-critic and trainer) is instructor code
(``course_admin.lunar``), not in the student package."""

TWINS: dict[str, tuple[str, ...]] = {
    # Tutorial 1
    "test_evaluate_individual": ("course_utils.harlow.evolution", "course_utils.harlow.scoring"),
    "test_genetic_algorithm": ("course_utils.harlow.evolution", "course_utils.harlow.scoring"),
    # scoring stacks agents and hands out their trained copies' weights; evolution runs the
    # student's function on them
    "test_lamarckian_individual": ("course_utils.harlow.scoring", "course_utils.harlow.evolution"),
    # Tutorial 2
    "test_replay_memory": ("course_utils.replay.standin_memory", "course_utils.replay.memory"),
    # the course's A2C loss computes this actor term (agent), and training and curves import it
    "test_replay_actor_loss": ("course_utils.colour.agent", "course_utils.colour.training", "course_utils.colour.curves"),
    # Tutorial 3
    "test_policy_net": _LUNAR_ENGINE,
    "test_agent_distribution": _LUNAR_ENGINE,
    "test_agent_step": _LUNAR_ENGINE,
    "test_calc_qvals": _LUNAR_ENGINE,
    "test_from_episodes": ("course_utils.lunar.checks.stored_batch", *_LUNAR_ENGINE),
    # the judge's oracle; the variance module (the stored measurement of the estimator's variance);
    # the actor-critic losses, whose autograd gradient is the estimator
    "test_score_function": ("course_utils.lunar.checks.bandit_judge", "course_utils.lunar.variance",
                            "course_utils.colour.agent", *_LUNAR_ENGINE),
    "test_vpg_loss": ("course_utils.colour.agent", *_LUNAR_ENGINE),
    "test_bpg_loss": ("course_utils.colour.agent", *_LUNAR_ENGINE),
    "test_entropy_loss": ("course_utils.colour.agent", *_LUNAR_ENGINE),
    "test_policy_trainer": _LUNAR_ENGINE,
    "test_aac_net": _LUNAR_ENGINE,
    "test_aac_agent": _LUNAR_ENGINE,
    "test_aac_loss": ("course_utils.colour.agent", "course_utils.lunar.critic", *_LUNAR_ENGINE),
    # Tutorial 4: the prioritized buffer's hidden test's stand-in memory fills slots as the add
    # exercise's does (without the wrap that exercise asks for), and its stand-in trees have the
    # interface the trees exercise asks for
    "test_memory_add": ("course_utils.replay.standin_memory",),
    "test_segment_trees": ("course_utils.replay.standin_trees",),
    "test_prioritized_buffer": ("course_utils.replay.dqn",),
    "test_td_loss": ("course_utils.replay.td_judge", "course_utils.replay.dqn"),
}
"""Grade id -> the modules that compute what that exercise asks (none: the exercise has no twin)."""
