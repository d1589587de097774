"""Reference solutions of tutorial 4's graded exercises, harvested by `course release`
from the solution cells of solutions/04_prioritized_replay.ipynb: edit the notebook, not this file.

The instructor package uses them to train checkpoints, compute expected values and run
benchmarks; the student package does not hold them."""

from __future__ import annotations

import math
import operator

import numpy as np
import torch
import torch.nn.functional as F

from course_utils.replay.buffer import ReplayBuffer
from course_utils.replay.memory import CircularReplayMemory


def SumTree(capacity):  # noqa: N802 (the notebook's name): the harvested SumSegmentTree below
    return SumSegmentTree(capacity)


def MinTree(capacity):  # noqa: N802 (the notebook's name): the harvested MinSegmentTree below
    return MinSegmentTree(capacity)


def Memory(capacity, batch_size, warmup):  # noqa: N802 (the notebook's name): the harvested CircularMemory below
    return CircularMemory(capacity, batch_size, warmup)


# Solution cell 'memory_add'
class CircularMemory(CircularReplayMemory):
    '''A circular replay memory of dict batches of tensors (see the text above).'''

    def add(self, batch):
        '''Write `batch` after the newest transition, wrapping round the end; return self.'''
        batch, n = self.prepare(batch)
        first = min(n, self.capacity - self.pointer)  # how much fits before the end
        for key, value in batch.items():
            self.memory[key][self.pointer : self.pointer + first] = value[:first]
            self.memory[key][: n - first] = value[first:]  # the rest goes to the start
        self.pointer = (self.pointer + n) % self.capacity
        self.size = min(self.size + n, self.capacity)
        return self


# Solution cell 'segment_trees'
class SegmentTree:
    '''A binary tree over `capacity` leaves (a power of two) in a list of 2 * capacity numbers.'''

    def __init__(self, capacity, operation, neutral):
        if capacity < 1 or capacity & (capacity - 1):
            raise ValueError(f"capacity must be a positive power of two, got {capacity}.")
        self.capacity = capacity
        self.operation = operation  # combines two children, e.g. operator.add or min
        self.neutral = neutral      # the value of an empty range: 0 for sums, inf for minimums
        self.tree = [neutral] * (2 * capacity)

    def __getitem__(self, index):
        return self.tree[self.capacity + index]

    def __setitem__(self, index, value):
        '''Set leaf `index` to `value` and update its ancestors.'''
        if not 0 <= index < self.capacity:
            raise IndexError(f"leaf index {index} is out of range 0..{self.capacity - 1}.")
        node = index + self.capacity
        self.tree[node] = value
        node //= 2
        while node >= 1:
            self.tree[node] = self.operation(self.tree[2 * node], self.tree[2 * node + 1])
            node //= 2

    def reduce(self, start=0, end=None):
        '''`operation` over leaves start, ..., end - 1 (end=None: up to the last leaf).'''
        if end is None:
            end = self.capacity
        if not 0 <= start <= end <= self.capacity:
            raise ValueError(f"need 0 <= start <= end <= {self.capacity}, got [{start}, {end}).")
        result = self.neutral
        low, high = start + self.capacity, end + self.capacity
        while low < high:
            if low % 2 == 1:  # a right child: take it alone, then move past it
                result = self.operation(result, self.tree[low])
                low += 1
            if high % 2 == 1:  # high - 1 is a left child: take it alone
                high -= 1
                result = self.operation(result, self.tree[high])
            low //= 2
            high //= 2
        return result


class SumSegmentTree(SegmentTree):
    def __init__(self, capacity):
        super().__init__(capacity, operator.add, 0.0)

    def sum(self, start=0, end=None):
        return self.reduce(start, end)

    def retrieve(self, prefix_sum):
        '''The smallest leaf i with leaf[0] + ... + leaf[i] > prefix_sum (0 <= prefix_sum <= total).'''
        node = 1
        while node < self.capacity:
            left, right = 2 * node, 2 * node + 1
            if prefix_sum < self.tree[left] or self.tree[right] <= 0:
                node = left
            else:
                prefix_sum -= self.tree[left]
                node = right
        return node - self.capacity


class MinSegmentTree(SegmentTree):
    def __init__(self, capacity):
        super().__init__(capacity, min, math.inf)

    def min(self, start=0, end=None):
        return self.reduce(start, end)


# Solution cell 'prioritized_buffer'
class PrioritizedReplayBuffer(ReplayBuffer):
    '''Proportional prioritized replay: transition i is drawn with probability p_i^alpha / sum_k p_k^alpha.'''

    def __init__(self, obs_dim, size, batch_size=32, alpha=0.6):
        super().__init__(obs_dim, size, batch_size, memory=Memory)
        self.alpha = alpha
        self.max_priority = 1.0
        capacity = 1
        while capacity < size:  # the trees need a power of two; extra leaves stay empty
            capacity *= 2
        self.sum_tree = SumTree(capacity)
        self.min_tree = MinTree(capacity)

    def store(self, obs, act, rew, next_obs, done):
        '''Store one transition with the max priority so far; return its index.'''
        index = super().store(obs, act, rew, next_obs, done)
        self.sum_tree[index] = self.max_priority ** self.alpha
        self.min_tree[index] = self.max_priority ** self.alpha
        return index

    def sample_batch(self, beta, rng=None):
        '''batch_size transitions drawn in proportion to priority, with importance weights.

        Your code sets `indices` (batch_size leaf indices) and `weights` (batch_size floats);
        the lines after it build the batch.
        '''
        self._check_can_sample()
        rng = np.random.default_rng(rng)
        n = len(self)
        total = self.sum_tree.sum(0, n)
        segment = total / self.batch_size
        indices = []
        for k in range(self.batch_size):
            prefix_sum = min(rng.uniform(k * segment, (k + 1) * segment), total)
            indices.append(self.sum_tree.retrieve(prefix_sum))
        indices = np.array(indices, dtype=np.int64)
        max_weight = (n * self.min_tree.min(0, n) / total) ** -beta
        probabilities = np.array([self.sum_tree[i] for i in indices]) / total
        weights = (n * probabilities) ** -beta / max_weight
        batch = self._batch(indices)
        batch["weights"] = np.asarray(weights, dtype=np.float32)
        batch["indices"] = np.asarray(indices, dtype=np.int64)
        return batch

    def update_priorities(self, indices, priorities):
        '''Set the priorities (e.g. |TD error| + eps) of stored transitions.

        Raise ValueError for a priority that is not > 0, IndexError for an index outside
        0 .. len(self) - 1, before changing anything.
        '''
        indices, priorities = np.asarray(indices), np.asarray(priorities, dtype=float)
        if not np.all(priorities > 0):  # also catches NaN
            raise ValueError(f"priorities must be > 0 (add a small eps to |TD error|), got {priorities}.")
        if np.any((indices < 0) | (indices >= len(self))):
            raise IndexError(f"indices must be between 0 and {len(self) - 1}, got {indices}.")
        for index, priority in zip(indices.tolist(), priorities.tolist(), strict=True):
            self.sum_tree[index] = priority ** self.alpha
            self.min_tree[index] = priority ** self.alpha
            self.max_priority = max(self.max_priority, priority)


# Solution cell 'td_loss'
def prioritized_td_loss(q_net, target_net, batch, gamma, prior_eps=1e-6):
    '''The importance-weighted smooth-L1 TD loss (a scalar tensor) and the new priorities (B,).'''
    q_taken = q_net(batch["obs"]).gather(1, batch["acts"].unsqueeze(1)).squeeze(1)  # Q(s, a): (B,)
    with torch.no_grad():  # the target is a constant
        next_q = target_net(batch["next_obs"]).max(dim=1).values
        target = batch["rews"] + gamma * (1.0 - batch["done"]) * next_q
    elementwise = F.smooth_l1_loss(q_taken, target, reduction="none")
    loss = (batch["weights"] * elementwise).mean()
    priorities = (target - q_taken).detach().abs() + prior_eps
    return loss, priorities
