"""Tutorial 2, colour replay: forgetting, and a replay memory that stops it. Modules, lowest
layer first:

- ``env``: the colour environment (two modes with different colour sets) and ``FixedPairsEnv``
- ``agent``: the A2C agent, ``Experience`` (one gradient step's trials as plain tensors) and the
  A2C loss with its capped importance ratio
- ``training``: trials, the training loop (with a replay memory that is written or read),
  evaluation, accuracies and the pretrained agents
- ``solutions``: the graded exercises' reference solutions (instructor side), generated from
  ``solutions/02_colour_replay.ipynb``
- ``game``: the colour widget game; ``checks``: the exercise checks
- ``train``: ``course train colour``; ``bench``: ``course bench colour``

This front door holds the names the notebook uses as ``colour.X``.
"""

from course_utils.colour.agent import ActorCritic, Experience
from course_utils.colour.env import COLOUR_REWARDS, COLOURS, MODE_COLOURS, ColourEnv
from course_utils.colour.training import Trials, accuracy, evaluate_agent, load_agent, pair_accuracy, play_pairs, train_agent

__all__ = [
    "COLOURS",
    "COLOUR_REWARDS",
    "MODE_COLOURS",
    "ActorCritic",
    "ColourEnv",
    "Experience",
    "Trials",
    "accuracy",
    "evaluate_agent",
    "load_agent",
    "pair_accuracy",
    "play_pairs",
    "train_agent",
]
