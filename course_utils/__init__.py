"""Shared code for the rl-course tutorials (reinforcement learning, memory and replay).

Modules are named after what they hold:

- ``runtime``: seeding, threads, fast and headless modes
- ``plotting``: the course's matplotlib style and common plots
- ``checkpoints``: the checkpoint registry and verified loading
- ``checks``: the ``check_*`` functions behind exercise feedback and hidden tests
- ``colour``: the colour-replay environment, A2C agent, training and replay memory
- ``colour_game``: the colour-choice widget game
- ``per``: sum/min segment trees, uniform and prioritized replay buffers (tutorial 4, in progress)
- ``grading``: release of student notebooks and autograding with nbgrader
- ``bench``: benchmarks printed as JSON lines (``course bench NAME``)
- ``cli``: the ``course`` command
"""

from course_utils.runtime import (
    _default_threads,
    fast_mode,
    headless,
    scaled,
    set_seed,
    set_threads,
)

__version__ = "0.1.0"

set_threads(_default_threads())

__all__ = ["fast_mode", "headless", "scaled", "set_seed", "set_threads", "__version__"]
