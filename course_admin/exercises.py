"""The exercise index: every graded cell of the course, as data.

One row per graded cell of ``solutions/*.ipynb``: a hidden-test cell (graded by its check) or a
written answer (graded by hand in formgrader). Each row names the solution cell it grades, the
check function the student's check cell calls (its module's ``EXERCISES`` holds the
``Exercise`` whose record the hidden test submits), the package code the exercise leans on,
and the tests that prove the check's hints (a typical wrong answer gets its specific hint).
``tests/test_exercises.py`` ties this table to the notebooks: every graded cell listed with its
points, nothing stale, every check importable and hinted.

The code of every solution cell is written once, in ``solutions/``; ``course release`` harvests
it into ``course_admin/<tutorial>/solutions.py`` (headed by ``SOLUTION_IMPORTS``) for the
package's instructor-side uses (training checkpoints, expected values, benchmarks), and
``course release --check`` fails when a harvested module is stale.

To find an exercise: look up its row here (``exercise("aac_loss")``), open the solution cell
in ``solutions/<TUTORIALS[tutorial]>.ipynb``, its check in ``check``, its hidden test cell by
``grade_id``, and its hint tests in ``hint_tests``.
"""

from __future__ import annotations

from dataclasses import dataclass

from course_utils.twins import TWINS

TUTORIALS = {
    "harlow": "01_harlow_meta_rl",
    "colour": "02_colour_replay",
    "lunar": "03_policy_gradients",
    "replay": "04_prioritized_replay",
}
"""Tutorial subpackage -> its notebook's name (in ``solutions/`` and ``notebooks/``)."""

SOLUTION_IMPORTS = {
    "harlow": """import copy
import random

import numpy as np
import torch

from course_utils.harlow.agent import HYPER_MUTATION, PARAMETER_NOISE, train_evaluate_agent
""",
    "colour": """import numpy as np
import torch
""",
    "lunar": """import numpy as np
import torch
from torch import nn

from course_utils.lunar.harness import Experience, TrainerLoop
""",
    "replay": """import math
import operator

import numpy as np
import torch
import torch.nn.functional as F

from course_utils.replay.buffer import ReplayBuffer
from course_utils.replay.memory import CircularReplayMemory


def SumTree(capacity):  # noqa: N802 (the notebook's name): the harvested SumSegmentTree below
    return SumSegmentTree(capacity)


def MinTree(capacity):  # noqa: N802 (the notebook's name): the harvested MinSegmentTree below
    return MinSegmentTree(capacity)


def Memory(capacity, batch_size, warmup):  # noqa: N802 (the notebook's name): the harvested CircularMemory below
    return CircularMemory(capacity, batch_size, warmup)
""",
}
"""The header of each harvested ``solutions.py``: the imports the notebook's setup cell gives the
solution cells (solution cells use these names bare). Tutorial 4's buffer cell builds its trees
from ``SumTree``/``MinTree`` and its memory from ``Memory``, which the notebook binds to the
student's trees and memory (and the buffer's hidden test to the check's slow stand-in trees and
filling memory, so the buffer is graded on its own); the harvested buffer uses the harvested
trees and memory. Its base, ``buffer.ReplayBuffer``, has no ring of its own (it keeps its
transitions in that memory), so giving it to every answer gives no exercise its answer."""


@dataclass(frozen=True)
class GradedCell:
    """One graded cell of a solution notebook.

    grade_id: the graded cell's nbgrader ``grade_id`` (a hidden-test cell or a written answer).
    tutorial: the tutorial subpackage (a key of ``TUTORIALS``).
    points: the cell's points in nbgrader.
    solution: ``grade_id`` of the solution cell it grades (a written answer grades itself).
    check: ``"module:function"`` the check cell calls, in the module that defines the exercise (its
        ``EXERCISES`` holds the ``Exercise`` the hidden test submits); ``None`` when graded by hand.
    helpers: ``"module:name"`` of the package code the exercise leans on (given to the student).
    hint_tests: ``"tests/...py::test_name"``: tests where typical wrong answers get their specific hint.
    """

    grade_id: str
    tutorial: str
    points: float
    solution: str
    check: str | None = None
    helpers: tuple[str, ...] = ()
    hint_tests: tuple[str, ...] = ()

    @property
    def twins(self) -> tuple[str, ...]:
        """Course modules that compute what the exercise asks (``course_utils.twins``, which the
        student's check cell reads too): the grader drives the answer where none of them can be read
        (``grading.drive_apart``), so an answer that wraps one scores 0 on this exercise."""
        return TWINS.get(self.grade_id, ())

    @property
    def manual(self) -> bool:
        """Graded by hand in formgrader (a written answer)."""
        return self.check is None


_HARLOW_CHECKS = "course_utils.harlow.checks"
_COLOUR_CHECKS = "course_utils.colour.checks"
_LUNAR_CHECKS = "course_utils.lunar.checks"
_REPLAY_CHECKS = "course_utils.replay.checks"
_LUNAR_HINTS = "tests/lunar/test_checks.py"

GRADED = (
    # Tutorial 1: Harlow meta-RL and the Baldwin effect
    GradedCell(
        "test_evaluate_individual", "harlow", 3, "evaluate_individual", f"{_HARLOW_CHECKS}:check_evaluate_individual",
        helpers=("course_utils.harlow.agent:train_evaluate_agent", "course_utils.harlow.env:HarlowExperimentEnv"),
        hint_tests=("tests/harlow/test_checks.py::test_fitness_mistakes_get_their_hint",),
    ),
    GradedCell(
        "test_genetic_algorithm", "harlow", 4, "genetic_algorithm", f"{_HARLOW_CHECKS}:check_genetic_algorithm",
        helpers=("course_utils.harlow.agent:HYPER_MUTATION", "course_utils.harlow.agent:PARAMETER_NOISE"),
        hint_tests=(
            "tests/harlow/test_checks.py::test_offspring_mistakes_get_their_hint",
            "tests/harlow/test_checks.py::test_update_population_mistakes_get_their_hint",
        ),
    ),
    GradedCell("think_lamarck", "harlow", 2, "think_lamarck"),
    GradedCell(
        "test_lamarckian_individual", "harlow", 2, "lamarckian_individual",
        "course_utils.harlow.checks_lamarck:check_lamarckian_individual",
        helpers=("course_utils.harlow.agent:ActorCritic",),
        hint_tests=("tests/harlow/test_checks.py::test_lamarckian_mistakes_get_their_hint",),
    ),
    # Tutorial 2: colour replay
    # discounted_returns is an optional, ungraded exercise here (colour.optional): tutorial 3's
    # calc_qvals grades the same recursion
    GradedCell(
        "test_replay_memory", "colour", 3, "replay_memory", f"{_COLOUR_CHECKS}:check_replay_memory",
        helpers=("course_utils.colour.agent:Experience", "course_utils.colour.training:train_agent"),
        hint_tests=("tests/colour/test_checks.py::test_replay_memory_mistakes_get_hints",),
    ),
    GradedCell(
        # the idea that makes replay work, so it carries most of the tutorial's points
        "test_replay_actor_loss", "colour", 5, "replay_actor_loss", f"{_COLOUR_CHECKS}:check_replay_actor_loss",
        helpers=("course_utils.colour.agent:RHO_MAX", "course_utils.colour.training:train_agent"),
        hint_tests=("tests/colour/test_checks.py::test_replay_actor_loss_mistakes_get_their_hint",),
    ),
    # Tutorial 3: policy gradients and actor-critic on LunarLander
    GradedCell(
        "test_policy_net", "lunar", 1, "policy_net", f"{_LUNAR_CHECKS}.agents:check_policy_net",
        hint_tests=(f"{_LUNAR_HINTS}::test_agent_and_net_checks_catch_mistakes",),
    ),
    GradedCell(
        "test_agent_distribution", "lunar", 1, "policy_agent", f"{_LUNAR_CHECKS}.agents:check_agent_distribution",
        helpers=("course_utils.lunar.harness:Experience",),
        hint_tests=(f"{_LUNAR_HINTS}::test_agent_and_net_checks_catch_mistakes",),
    ),
    GradedCell(
        "test_agent_step", "lunar", 2, "policy_agent", f"{_LUNAR_CHECKS}.agents:check_agent_step",
        helpers=("course_utils.lunar.harness:Experience", "course_utils.lunar.env:make_env"),
        hint_tests=(f"{_LUNAR_HINTS}::test_agent_and_net_checks_catch_mistakes",),
    ),
    GradedCell(
        "test_calc_qvals", "lunar", 2, "calc_qvals", f"{_LUNAR_CHECKS}.qvals:check_calc_qvals",
        helpers=("course_utils.lunar.harness:Experience",),
        hint_tests=(f"{_LUNAR_HINTS}::test_check_calc_qvals_catches_mistakes",),
    ),
    GradedCell(
        "test_from_episodes", "lunar", 1, "from_episodes", f"{_LUNAR_CHECKS}.episodes:check_from_episodes",
        hint_tests=(f"{_LUNAR_HINTS}::test_from_episodes_check_catches_a_missing_discount_and_wrong_dtypes",),
    ),
    GradedCell(
        "test_score_function", "lunar", 3, "score_function", f"{_LUNAR_CHECKS}.score_function:check_score_function",
        hint_tests=("tests/lunar/test_score_function.py::test_each_typical_mistake_gets_its_hint",),
    ),
    GradedCell(
        "test_vpg_loss", "lunar", 1, "vpg_loss", f"{_LUNAR_CHECKS}.losses:check_vpg_loss",
        hint_tests=(f"{_LUNAR_HINTS}::test_loss_checks_catch_mistakes",),
    ),
    GradedCell(
        "test_bpg_loss", "lunar", 1, "bpg_loss", f"{_LUNAR_CHECKS}.losses:check_bpg_loss",
        hint_tests=(f"{_LUNAR_HINTS}::test_loss_checks_catch_mistakes",),
    ),
    GradedCell(
        "test_entropy_loss", "lunar", 2, "entropy_loss", f"{_LUNAR_CHECKS}.losses:check_entropy_loss",
        hint_tests=(f"{_LUNAR_HINTS}::test_loss_checks_catch_mistakes",),
    ),
    GradedCell(
        "test_policy_trainer", "lunar", 2, "policy_trainer", f"{_LUNAR_CHECKS}.losses:check_policy_trainer",
        helpers=("course_utils.lunar.harness:TrainerLoop",),
        hint_tests=(f"{_LUNAR_HINTS}::test_trainer_check_catches_mistakes",),
    ),
    GradedCell(
        "test_aac_net", "lunar", 1, "aac_net", f"{_LUNAR_CHECKS}.aac_checks:check_aac_net",
        hint_tests=(f"{_LUNAR_HINTS}::test_aac_net_check_catches_a_missing_value_head_and_a_shared_output",),
    ),
    GradedCell(
        "test_aac_agent", "lunar", 1, "aac_agent", f"{_LUNAR_CHECKS}.aac_checks:check_aac_agent",
        hint_tests=(f"{_LUNAR_HINTS}::test_aac_agent_check_catches_a_softmax_over_scores_and_value",),
    ),
    GradedCell(
        "test_aac_loss", "lunar", 2, "aac_loss", f"{_LUNAR_CHECKS}.aac_checks:check_aac_loss",
        helpers=("course_utils.lunar.harness:TrainerLoop", "course_utils.lunar.harness:VectorBatchDataset"),
        hint_tests=(f"{_LUNAR_HINTS}::test_aac_loss_check_catches_mistakes",),
    ),
    GradedCell("q1_baseline", "lunar", 2, "q1_baseline"),
    GradedCell("q2_value_targets", "lunar", 2, "q2_value_targets"),
    GradedCell("q3_plots", "lunar", 2, "q3_plots"),
    # Tutorial 4: replay memories, sum/min trees and prioritized replay
    GradedCell(
        "test_memory_add", "replay", 3, "memory_add", f"{_REPLAY_CHECKS}:check_memory_add",
        helpers=("course_utils.replay.memory:CircularReplayMemory",),
        hint_tests=("tests/replay/test_memory.py::test_check_rejects_common_mistakes_with_a_hint",),
    ),
    GradedCell(
        "test_segment_trees", "replay", 4, "segment_trees", f"{_REPLAY_CHECKS}:check_segment_trees",
        hint_tests=("tests/replay/test_trees.py::test_tree_check_accepts_the_course_trees_and_flags_mistakes",),
    ),
    GradedCell(
        "test_prioritized_buffer", "replay", 4, "prioritized_buffer",
        "course_utils.replay.checks_buffer:check_prioritized_buffer",
        helpers=("course_utils.replay.buffer:ReplayBuffer",),
        hint_tests=("tests/replay/test_per.py::test_buffer_check_flags_the_pitfalls",),
    ),
    GradedCell(
        "test_td_loss", "replay", 3, "td_loss", "course_utils.replay.checks_td:check_td_loss",
        helpers=("course_utils.replay.dqn:batch_tensors",),
        hint_tests=("tests/replay/test_td_loss.py::test_each_typical_mistake_gets_its_hint",),
    ),
)


def exercise(grade_id: str) -> list[GradedCell]:
    """The graded cells of an exercise, by the grade id of its solution cell or of a graded cell."""
    return [cell for cell in GRADED if grade_id in (cell.grade_id, cell.solution)]


def total_points(tutorial: str) -> float:
    """Points available in a tutorial's notebook."""
    return sum(cell.points for cell in GRADED if cell.tutorial == tutorial)
