"""Tutorial 2, colour replay: forgetting, and a replay memory that stops it. Modules, lowest
layer first:

- ``env``: the colour environment (two modes with different colour sets) and ``FixedPairsEnv``
- ``agent``: the A2C agent, ``Experience`` (one gradient step's trials as plain tensors) and the
  importance ratios of replayed experience
- ``training``: trials, the training loop (with a replay memory that is written or read; its
  actor term is always the student's ``replay_actor_loss``), one replayed step measured,
  evaluation, accuracies and the pretrained agents
- ``expected``: the values the course stored for the notebook's checks and its replayed step
- ``curves``: training on mode 2 with and without replay (and replay without the importance
  ratio), measured as learning curves
- ``sizes``: the sizes of the notebook's long runs; ``questions``: its concept checks and Think!
- ``game``: the colour widget game; ``checks``: the exercise checks

This front door holds the names the notebook uses as ``colour.X``. The instructor's side of the
tutorial (its harvested solutions, ``course train colour``, ``course bench colour``) is in
``course_admin.colour``.
"""

from course_utils.colour import expected, questions
from course_utils.colour.agent import (
    RHO_MAX,
    ActorCritic,
    Experience,
    graph_nbytes,
    importance_ratios,
)
from course_utils.colour.curves import LearningCurve, compare_on_mode2, logit_gap, plot_learning_curves
from course_utils.colour.env import COLOUR_REWARDS, COLOURS, MODE_COLOURS, ColourEnv
from course_utils.colour.sizes import SIZES
from course_utils.colour.training import (
    Trials,
    accuracy,
    evaluate_agent,
    load_agent,
    pair_accuracy,
    play_pairs,
    replayed_step,
    train_agent,
)

__all__ = [
    "COLOURS",
    "COLOUR_REWARDS",
    "MODE_COLOURS",
    "RHO_MAX",
    "SIZES",
    "ActorCritic",
    "ColourEnv",
    "Experience",
    "LearningCurve",
    "Trials",
    "accuracy",
    "compare_on_mode2",
    "evaluate_agent",
    "expected",
    "graph_nbytes",
    "importance_ratios",
    "load_agent",
    "logit_gap",
    "pair_accuracy",
    "play_pairs",
    "plot_learning_curves",
    "questions",
    "replayed_step",
    "train_agent",
]
