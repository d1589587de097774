"""Shared code for the rl-course tutorials (reinforcement learning, memory and replay).

Modules are named after what they hold:

- ``runtime``: seeding, threads, fast and headless modes
- ``plotting``: the course's matplotlib style and common plots
- ``animation``: episodes recorded as RGB frames and shown as inline JavaScript players
- ``checkpoints``: the checkpoint registry and verified loading
- ``checking``: the exercise-check framework (run student code under a time limit, judge it, report)
- ``checks`` (tutorial 2) and ``checks_harlow``, ``checks_lunar`` (tutorials 1, 3; tutorial 4's are in ``replay``):
  the ``check_*`` functions behind exercise feedback and hidden tests
- ``harlow``, ``harlow_batch``, ``harlow_game``: tutorial 1's environment, LSTM A2C agent and genetic
  algorithm; the batched evaluation of a whole generation; the Harlow widget game
- ``colour``, ``colour_game``: tutorial 2's environment, A2C agent, training and replay memory; the game
- ``lunar``: tutorial 3's LunarLander environment, policy-gradient and AAC pieces, vectorised collection
- ``replay/`` (subpackage): tutorial 4's circular batch memory, segment trees and
  (prioritized) replay buffers, the DQN on CartPole, and its checks
- ``paths``: where the package, assets, solutions and notebooks are
- ``grading/`` (subpackage, the instructor's side): release of student notebooks and parallel,
  sandboxed autograding with nbgrader and Dask (its docstring lists its modules)
- ``bench``: benchmarks printed as JSON lines (``course bench NAME``)
- ``cli``: the ``course`` command
"""

from course_utils.runtime import (
    apply_default_threads,
    fast_mode,
    headless,
    scaled,
    set_seed,
    set_threads,
)

__version__ = "0.1.0"

apply_default_threads()

__all__ = ["fast_mode", "headless", "scaled", "set_seed", "set_threads", "__version__"]
