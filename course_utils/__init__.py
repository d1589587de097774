"""The student package of rl-course (reinforcement learning, memory and replay): what students
install and the notebooks import. The instructor's side (grading, the harvested solutions,
trainers and benchmarks) is the package ``course_admin`` beside it, which this one never imports.

One subpackage per tutorial and a few shared modules below them all (``make lint`` checks these
layers with import-linter):

- shared: ``runtime`` (seeding, threads, fast and headless modes), ``paths`` (where the
  package, assets, solutions and notebooks are), ``plotting`` (the course style, common plots),
  ``animation`` (episodes as inline players), ``checkpoints`` (the registry and verified
  loading), ``checking`` (the exercise-check framework), ``check_helpers`` (the words every
  tutorial's checks are written in), ``records`` and ``facts`` (what a check reads of the
  student's code), ``claims``
  (the notebooks' claims as data), ``game`` (the Left/Right widget game base), ``twins``
  (the course code that computes what each exercise asks, which the grader hides from its answer)
- ``harlow/``: tutorial 1, Harlow meta-RL and the Baldwin effect
- ``colour/``: tutorial 2, colour replay
- ``lunar/``: tutorial 3, policy gradients and actor-critic on LunarLander
- ``replay/``: tutorial 4, replay memories, sum/min trees and prioritized-replay DQN
- ``cli``: the ``course`` command (``lab``, ``check``; the instructor's commands join them where
  ``course_admin`` is installed)

Each tutorial subpackage lists its modules, lowest layer first, in its docstring; its front door
(``from course_utils import harlow``) holds the names its notebook uses.
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
