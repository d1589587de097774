"""Exercise checks of tutorial 3 (policy gradients on LunarLander): the ``check_*`` functions
behind the notebook's feedback cells and hidden tests.

- ``common``: helpers shared by the checks
- ``agents``: exercises 1-5 (policy network, agent, ``monitor_episode``, ``calc_qvals``,
  ``from_episodes``, the episode-batch generator)
- ``losses``: exercises 6-8 (the losses, ``PolicyTrainer.train_batch``, the actor-critic's
  network, agent and loss)
"""

from course_utils.lunar.checks.agents import (
    AGENT_DISTRIBUTION,
    AGENT_EXERCISES,
    AGENT_STEP,
    BATCH_GENERATOR,
    CALC_QVALS,
    FROM_EPISODES,
    MONITOR_EPISODE,
    POLICY_NET,
    check_agent_distribution,
    check_agent_step,
    check_batch_generator,
    check_calc_qvals,
    check_from_episodes,
    check_monitor_episode,
    check_policy_net,
)
from course_utils.lunar.checks.losses import (
    check_aac_agent,
    check_aac_loss,
    check_aac_net,
    check_bpg_loss,
    check_entropy_loss,
    check_policy_trainer,
    check_vpg_loss,
)

# TEMPORARY (branch t3-agents-records): the integrator replaces this with
# EXERCISES = {**AGENT_EXERCISES, **LOSS_EXERCISES}.
EXERCISES = AGENT_EXERCISES
"""This tutorial's exercises judged from records, by the grade id of their hidden-test cell."""

__all__ = [
    "AGENT_DISTRIBUTION",
    "AGENT_STEP",
    "BATCH_GENERATOR",
    "CALC_QVALS",
    "EXERCISES",
    "FROM_EPISODES",
    "MONITOR_EPISODE",
    "POLICY_NET",
    "check_aac_agent",
    "check_aac_loss",
    "check_aac_net",
    "check_agent_distribution",
    "check_agent_step",
    "check_batch_generator",
    "check_bpg_loss",
    "check_calc_qvals",
    "check_entropy_loss",
    "check_from_episodes",
    "check_monitor_episode",
    "check_policy_net",
    "check_policy_trainer",
    "check_vpg_loss",
]
