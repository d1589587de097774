"""Tutorial 4: replay memories, sum/min segment trees and prioritized-replay DQN on CartPole.

Modules, from the bottom up:

- ``memory``: the circular batch replay memory (``CircularReplayMemory``) and CartPole batches
- ``trees``: segment trees (sum, min), plain and vectorised, and ``validate_priorities``,
  the one check of priorities
- ``per``: uniform and proportional prioritized replay buffers (on the plain or the vectorised
  trees) and the beta schedule
- ``bench``: the ``course bench per`` benchmark (vectorised against plain, and cpprb)
- ``dqn``: the DQN agent on CartPole, uniform vs prioritized, with the saved comparison
- ``checks``: the ``check_*`` functions behind the tutorial's exercise feedback and hidden tests
"""
