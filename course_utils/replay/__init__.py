"""Tutorial 4: replay memories, sum/min segment trees and prioritized-replay DQN on CartPole.

Modules, lowest layer first:

- ``trees``: the vectorised segment trees (sum, min) and ``validate_priorities``, the one check
  of priorities
- ``per``: the uniform replay buffer, the prioritized one on the vectorised trees (built from a
  DQN config) and the beta schedule
- ``dqn``: the DQN agent on CartPole, uniform vs prioritized, with the saved comparison
- ``memory``: the circular batch replay memory the students complete (``CircularReplayMemory``:
  its ``add`` is Exercise 1) and CartPole batches
- ``check_log``: the record the checks' drives write (observations named by the call that gave
  them), read back by the judges
- the exercise checks, each module with its ``Exercise``s, ``check_*`` functions and
  ``EXERCISES``: ``checks`` (Exercises 1-2: the memory's ``add``, the segment trees),
  ``checks_buffer`` (Exercise 3: the prioritized buffer, with the stand-in trees its hidden test
  uses), ``checks_td`` (Exercise 4: the TD loss; its judge's numpy oracle is ``td_judge``)
- ``timing``: the vectorised trees and buffer timed against plain ones (the notebook times the
  student's trees with it; ``course bench per`` times the reference solutions, in
  ``course_admin.replay``)
"""
