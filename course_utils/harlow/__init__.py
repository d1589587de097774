"""Tutorial 1, Harlow meta-RL and the Baldwin effect. Modules, lowest layer first:

- ``env``: Harlow's experiment with digits (``HarlowExperimentEnv``), P tasks side by side
  (``VectorHarlowEnv``) and the win-stay lose-shift baseline
- ``agent``: the LSTM A2C agent, its hyperparameters and their mutation ranges, and its
  train-then-evaluate loop on one task (``train_evaluate_agent``)
- ``solutions``: the graded exercises' reference solutions (instructor side: the notebook's
  one-agent-at-a-time genetic algorithm), generated from ``solutions/01_harlow_meta_rl.ipynb``
- ``batch``: the whole generation at once (hand-written batched LSTM, BPTT and RMSprop) and the
  batched evolution ``evolve``
- ``plots``: accuracy by trial and the tutorial's plots
- ``game``: the Harlow widget game; ``checks``: the exercise checks
- ``train``: ``course train harlow``, the evolved agent and the comparisons the notebook shows;
  ``bench``: ``course bench harlow``

This front door holds the names the notebook uses as ``harlow.X``.
"""

from course_utils.harlow.agent import HYPER_MUTATION, PARAMETER_NOISE, ActorCritic, train_evaluate_agent
from course_utils.harlow.env import HarlowExperimentEnv, run_dummy_agent
from course_utils.harlow.plots import (
    TrialAccuracy,
    accuracy_by_trial,
    plot_cumulative_rewards,
    plot_evolution,
    plot_scores,
    plot_you_vs_agents,
)
from course_utils.harlow.train import (
    agent_accuracy_by_trial,
    load_evolved_agent,
    load_history,
    newbie_vs_evolved,
    scored_population,
)

__all__ = [
    "HYPER_MUTATION",
    "PARAMETER_NOISE",
    "ActorCritic",
    "HarlowExperimentEnv",
    "TrialAccuracy",
    "accuracy_by_trial",
    "agent_accuracy_by_trial",
    "load_evolved_agent",
    "load_history",
    "newbie_vs_evolved",
    "plot_cumulative_rewards",
    "plot_evolution",
    "plot_scores",
    "plot_you_vs_agents",
    "run_dummy_agent",
    "scored_population",
    "train_evaluate_agent",
]
