"""Exercise checks of tutorial 3 (policy gradients on LunarLander): one module per exercise or
group of exercises, each defining its ``Exercise``s, their ``check_*`` functions (the check
cells import them from there) and ``EXERCISES`` (its exercises by the grade id of their
hidden-test cells):

- ``agents``: exercises 1-2 (``PolicyNet``, ``PolicyAgent``'s distribution and step)
- ``qvals``: exercise 3 (``Episode.calc_qvals``); ``episodes``: exercise 4 (``TrainBatch.from_episodes``)
- ``score_function``: exercise 5 (the score-function estimator on a softmax bandit: ``bandit``),
  judged by ``bandit_judge`` (its oracle, which the grader's drive of the answer cannot read)
- ``losses``: exercises 6-7 (the three losses, ``PolicyTrainer.train_batch``)
- ``aac_checks``: exercise 8 (the actor-critic's network, agent and loss; its agent is judged
  by ``agents.probabilities_checked``, as exercise 2's)

and what they share: ``standins`` (the environments and networks the checks hand the student's
code), ``loss_records`` (the batches a loss is driven on, one loss call as a record) and
``stored_batch`` (the stored test batch). The vocabulary every tutorial's judges use is
``course_utils.check_helpers``.
"""
