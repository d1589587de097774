"""Reference solutions of tutorial 2's graded exercises, harvested by `course release`
from the solution cells of solutions/02_colour_replay.ipynb: edit the notebook, not this file.

The instructor package uses them to train checkpoints, compute expected values and run
benchmarks; the student package does not hold them."""

from __future__ import annotations

import numpy as np
import torch


# Solution cell 'optional_discounted_returns'
def discounted_returns(rewards, gamma):
    '''Discounted returns of a run of trials.

    rewards: 1-D sequence of T floats (list, NumPy array or tensor).
    gamma: discount factor in [0, 1].
    Returns a NumPy array of shape (T,) with Q_t = r_t + gamma * Q_{t+1} and Q_T = 0.
    '''
    returns = np.zeros(len(rewards))
    running = 0.0
    for t in reversed(range(len(rewards))):
        running = float(rewards[t]) + gamma * running
        returns[t] = running
    return returns


# Solution cell 'replay_memory'
class ReplayMemory:
    '''A fixed-size memory of experiences; when full, new ones overwrite the oldest.'''

    def __init__(self, capacity=250):
        self.capacity = capacity
        self.slots = [None] * capacity
        self.write_pointer = 0   # the slot the next write goes to
        self.read_pointer = 0    # the slot the next read comes from
        self.n_written = 0       # experiences written so far (can exceed capacity)

    def __len__(self):
        '''Number of experiences held.'''
        return min(self.n_written, self.capacity)

    def write(self, experience):
        '''Store one experience, overwriting the oldest when full.'''
        self.slots[self.write_pointer] = experience
        self.write_pointer = (self.write_pointer + 1) % self.capacity
        self.n_written += 1

    def read(self):
        '''Return the next stored experience, going round the filled slots in order.'''
        if len(self) == 0:
            raise IndexError("The replay memory is empty: write experiences before reading.")
        experience = self.slots[self.read_pointer]
        self.read_pointer = (self.read_pointer + 1) % len(self)
        return experience


# Solution cell 'replay_actor_loss'
def replay_actor_loss(log_pi, mu, advantage, rho_max):
    '''The actor's loss on T trials, each weighed by its capped importance ratio.

    log_pi: tensor (T,), log pi(a_t | s_t) of the stored actions under the current policy (with gradient).
    mu: tensor (T,), the probability the acting policy gave each action (stored with the experience).
    advantage: tensor (T,), Q_t - V(s_t) (attached to the critic).
    rho_max: the cap on the ratio.
    Returns a scalar tensor: -mean(min(pi / mu, rho_max) * log_pi * advantage), rho and advantage detached.
    '''
    rho = torch.clamp(log_pi.detach().exp() / mu, max=rho_max)
    return -(rho * log_pi * advantage.detach()).mean()
