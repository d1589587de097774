"""Tutorial 1, Harlow meta-RL and the Baldwin effect. Modules, lowest layer first:

- ``env``: Harlow's experiment with digits (``HarlowExperimentEnv``), P tasks side by side
  (``VectorHarlowEnv``) and the win-stay lose-shift baseline
- ``agent``: the LSTM A2C agent, its hyperparameters and their mutation ranges, and its
  train-then-evaluate loop on one task (``train_evaluate_agent``)
- ``scoring``: many (agent, task) pairs trained and scored at once (hand-written batched LSTM, BPTT
  and RMSprop), the given batched form of ``train_evaluate_agent``
- ``plots``: accuracy by trial and the tutorial's plots
- ``game``: the Harlow widget game; ``checks``: the exercise checks (``checks_lamarck``: Lamarckian
  inheritance)
- ``sizes``: the notebook's run sizes; ``questions``: its concept checks
- ``pretrained``: the stored evolution (``course train harlow`` writes it): the evolved agent, its
  history, the course's runs shown until the student's code passes (``load_runs``), and the
  notebook's scored first population
- ``evolution``: the evolutions the notebook runs live with the student's operators (Baldwinian,
  and Lamarckian against it), and ``show_run`` for a stored one
- ``ablation``: what evolution found: weights and hyperparameters swapped between the newbie
  and the evolved agent, all scored on the same tasks

This front door holds the names the notebook uses as ``harlow.X``. The course's own genetic
algorithm (its operators, its trainer and benchmark) is in ``course_admin.harlow``.
"""

from course_utils.harlow import questions
from course_utils.harlow.ablation import ablation_agents, learning_rate_only, plot_ablation, same_tasks
from course_utils.harlow.agent import (
    DEFAULT_HYPERPARAMETERS,
    HYPER_MUTATION,
    PARAMETER_NOISE,
    ActorCritic,
    make_newbie,
    train_evaluate_agent,
)
from course_utils.harlow.env import HarlowExperimentEnv, run_dummy_agent
from course_utils.harlow.evolution import evolve_live, per_task, show_run, summary
from course_utils.harlow.plots import (
    TrialAccuracy,
    accuracy_by_trial,
    plot_cumulative_rewards,
    plot_evolution,
    plot_hyperparameters,
    plot_scores,
    plot_you_vs_agents,
)
from course_utils.harlow.pretrained import (
    load_evolved_agent,
    load_history,
    load_runs,
    scored_population,
)
from course_utils.harlow.sizes import SIZES

__all__ = [
    "DEFAULT_HYPERPARAMETERS",
    "HYPER_MUTATION",
    "PARAMETER_NOISE",
    "SIZES",
    "ActorCritic",
    "HarlowExperimentEnv",
    "TrialAccuracy",
    "ablation_agents",
    "accuracy_by_trial",
    "evolve_live",
    "learning_rate_only",
    "load_evolved_agent",
    "load_history",
    "load_runs",
    "make_newbie",
    "per_task",
    "plot_ablation",
    "plot_cumulative_rewards",
    "plot_evolution",
    "plot_hyperparameters",
    "plot_scores",
    "plot_you_vs_agents",
    "questions",
    "run_dummy_agent",
    "same_tasks",
    "scored_population",
    "show_run",
    "summary",
    "train_evaluate_agent",
]
