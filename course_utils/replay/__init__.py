"""Tutorial 4: replay memories, sum/min segment trees and prioritized-replay DQN on CartPole.

The student's side only: the course's own buffers, trees and trainer (what produced the stored
comparison and the trained agent) are instructor code, in ``course_admin.replay``. Modules, lowest
layer first:

- ``buffer``: the DQN's uniform ``ReplayBuffer``, which keeps its transitions in the student's
  memory (it has no ring of its own), and the beta schedule
- ``dqn``: the DQN agent on CartPole, trained on the buffer and the TD loss it is given, the plots
  and the stored comparison
- ``memory``: the circular batch replay memory the students complete (``CircularReplayMemory``:
  its ``add`` is Exercise 1) and CartPole batches
- ``standin_trees``, ``standin_memory``: the slow trees and the memory (one transition per add
  into an append-only log, read back in another order than a ring's) the prioritized buffer's
  hidden test builds the buffer on; the slow trees are also the notebook's timing baseline
  (``timing``)
- ``check_log``: the record the checks' drives write (observations named by the call that gave
  them), read back by the judges
- the exercise checks, each module with its ``Exercise``s, ``check_*`` functions and
  ``EXERCISES``: ``checks`` (Exercises 1-2: the memory's ``add``, the segment trees),
  ``checks_buffer`` (Exercise 3: the prioritized buffer), ``checks_td`` (Exercise 4: the TD loss);
  their judges compare with the course's record of its own answer, and read what that record
  does not hold from ``expected`` (stored values), or from the oracles the grader hands them
  (``checking.grader_oracle``): ``td_judge``, ``tree_judge``
- ``timing``: the student's sum tree timed against a plain list
"""
