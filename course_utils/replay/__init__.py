"""Tutorial 4: replay memories, sum/min segment trees and prioritized-replay DQN on CartPole.

Modules, lowest layer first:

- ``trees``: the vectorised segment trees (sum, min) and ``validate_priorities``, the one check
  of priorities
- ``per``: the uniform replay buffer, the prioritized one on the vectorised trees (built from a
  DQN config) and the beta schedule
- ``dqn``: the DQN agent on CartPole, uniform vs prioritized, with the saved comparison
- ``memory``: the circular batch replay memory the students complete (``CircularReplayMemory``:
  its ``add`` is Exercise 1) and CartPole batches
- ``checks``: the ``check_*`` functions behind the tutorial's exercise feedback and hidden tests
- ``timing``: the vectorised trees and buffer timed against plain ones (the notebook times the
  student's trees with it; ``course bench per`` times the reference solutions, in
  ``course_admin.replay``)
"""
