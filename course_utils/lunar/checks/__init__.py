"""Exercise checks of tutorial 3 (policy gradients on LunarLander): the ``check_*`` functions
behind the notebook's feedback cells and hidden tests.

- ``common``: helpers shared by the checks
- ``agents``: exercises 1-2 (policy network, agent), with the check-private stand-ins in
  ``agent_standins``; ``qvals`` and ``episodes``: exercises 3-4 (``calc_qvals``, ``from_episodes``)
- ``score_function``: exercise 5 (the score-function estimator on a softmax bandit), judged by
  ``bandit_judge`` (its oracle, which the grader's drive of the answer cannot read)
- ``losses``: exercises 6-7 (the losses, ``PolicyTrainer.train_batch``), with the shared batch and
  record helpers in ``loss_records``; ``aac_checks``: exercise 8 (the actor-critic's network,
  agent and loss)

Each exercise is an ``Exercise`` (``course_utils.checking``): ``EXERCISES`` maps the grade id of
its hidden-test cell to it.
"""

from course_utils.lunar.checks.agents import (
    AGENT_DISTRIBUTION,
    AGENT_EXERCISES,
    AGENT_STEP,
    CALC_QVALS,
    FROM_EPISODES,
    POLICY_NET,
    check_agent_distribution,
    check_agent_step,
    check_calc_qvals,
    check_from_episodes,
    check_policy_net,
)
from course_utils.lunar.checks.losses import (
    AAC_AGENT,
    AAC_LOSS,
    AAC_NET,
    BPG_LOSS,
    ENTROPY_LOSS,
    LOSS_EXERCISES,
    POLICY_TRAINER,
    VPG_LOSS,
    check_aac_agent,
    check_aac_loss,
    check_aac_net,
    check_bpg_loss,
    check_entropy_loss,
    check_policy_trainer,
    check_vpg_loss,
)
from course_utils.lunar.checks.score_function import SCORE_FUNCTION, check_score_function

__all__ = [
    "AAC_AGENT",
    "AAC_LOSS",
    "AAC_NET",
    "AGENT_DISTRIBUTION",
    "AGENT_STEP",
    "BPG_LOSS",
    "CALC_QVALS",
    "ENTROPY_LOSS",
    "EXERCISES",
    "FROM_EPISODES",
    "POLICY_NET",
    "POLICY_TRAINER",
    "SCORE_FUNCTION",
    "VPG_LOSS",
    "check_aac_agent",
    "check_aac_loss",
    "check_aac_net",
    "check_agent_distribution",
    "check_agent_step",
    "check_bpg_loss",
    "check_calc_qvals",
    "check_entropy_loss",
    "check_from_episodes",
    "check_policy_net",
    "check_policy_trainer",
    "check_score_function",
    "check_vpg_loss",
]

EXERCISES = {**AGENT_EXERCISES, SCORE_FUNCTION.grade_id: SCORE_FUNCTION, **LOSS_EXERCISES}
"""This tutorial's exercises judged from records, by the grade id of their hidden-test cell."""
