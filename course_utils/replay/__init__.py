"""Tutorial 4: replay memories, sum/min segment trees and prioritized-replay DQN on CartPole.

Modules, lowest layer first:

- ``trees``: segment trees (sum, min), plain and vectorised, and ``validate_priorities``,
  the one check of priorities
- ``per``: uniform and proportional prioritized replay buffers (on the plain or the vectorised
  trees) and the beta schedule
- ``dqn``: the DQN agent on CartPole, uniform vs prioritized, with the saved comparison
- ``memory``: the circular batch replay memory (``CircularReplayMemory``) and CartPole batches
- ``solutions``: the graded exercises' reference solutions (instructor side), harvested from
  ``solutions/04_prioritized_replay.ipynb``; ``tests/replay/test_solutions.py`` shows the plain
  trees and buffer of ``trees`` and ``per`` (the notebook's fallbacks) answer the same
- ``checks``: the ``check_*`` functions behind the tutorial's exercise feedback and hidden tests
- ``bench``: the ``course bench per`` benchmark (vectorised against plain, and cpprb)
"""
