"""Tutorial 4: replay memories, sum/min segment trees and prioritized-replay DQN on CartPole.

Modules, from the bottom up:

- ``memory``: the circular batch replay memory (``CircularReplayMemory``) and CartPole batches
- ``per``: segment trees (sum, min), uniform and proportional prioritized replay buffers,
  plain and vectorised, and the ``course bench per`` benchmark
- ``dqn``: the DQN agent on CartPole, uniform vs prioritized, with the saved comparison
- ``checks``: the ``check_*`` functions behind the tutorial's exercise feedback and hidden tests
"""
