"""The check's greedy agent for ``monitor_episode`` (tutorial 3, exercise 3), in a module of its own.

It steps an environment and records its experiences, which is most of what exercise 2's
``PolicyAgent`` does: the grader's child that drives exercise 2 cannot read this module
(``exercises.GradedCell.twins``), and only ``monitor_episode``'s drive imports it, when it runs.
"""

from __future__ import annotations

import torch

from course_utils.lunar.harness import Experience


class _GreedyAgent:
    """The check's agent for ``monitor_episode``: ``_GreedyAgent(env, p_net, seed)`` steps ``env``
    with the network's most probable action. It never samples, so it is no answer to exercise 2."""

    def __init__(self, env, p_net, seed=None):
        self.env, self.p_net = env, p_net
        self.curr_state = torch.as_tensor(env.reset(seed=seed)[0], dtype=torch.float32)

    def step(self) -> Experience:
        with torch.no_grad():
            choice = int(self.p_net(self.curr_state[None]).flatten().argmax())
        observation, reward, *ends, _ = self.env.step(choice)
        record = Experience(self.curr_state, choice, float(reward), any(ends))
        self.curr_state = torch.as_tensor(self.env.reset()[0] if any(ends) else observation, dtype=torch.float32)
        return record
