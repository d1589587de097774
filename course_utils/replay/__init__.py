"""Tutorial 4: replay memories, sum/min segment trees and prioritized-replay DQN on CartPole.

Modules, lowest layer first:

- ``trees``: the vectorised segment trees (sum, min) and ``validate_priorities``, the one check
  of priorities
- ``per``: the uniform replay buffer, the prioritized one on the vectorised trees (built from a
  DQN config) and the beta schedule
- ``dqn``: the DQN agent on CartPole, uniform vs prioritized, with the saved comparison
- ``memory``: the circular batch replay memory the students complete (``CircularReplayMemory``:
  its ``add`` is Exercise 1) and CartPole batches
- ``solutions``: the graded exercises' reference solutions (instructor side), harvested from
  ``solutions/04_prioritized_replay.ipynb``: the memory's ``add``, the plain sum/min segment
  trees and the plain prioritized buffer; the student package holds none of them
- ``checks``: the ``check_*`` functions behind the tutorial's exercise feedback and hidden tests
- ``bench``: the ``course bench per`` benchmark (vectorised against the plain reference, and
  cpprb)
"""
