"""A wrong answer plus a forged fact fails, in the check cell and in the grader.

A check's drive runs in the student's kernel and writes down facts about the answer's objects
(whether a gradient reaches a network's parameters, whether the weights a task started from are
the agent's own, how full a memory is, whether priorities carry a gradient, how fast a tree
sums). Each case below is an answer cell that answers one exercise WRONGLY and forges the fact
that gives it away: an override on its own object (a subclass's ``state_dict``, ``parameters``,
``__len__`` or ``requires_grad``), a class or module patch left in place while the drive runs
(``torch.Tensor.requires_grad``, ``torch.Tensor.grad``), or a tree that remembers its answers for the
timed part. Before the drives read facts through ``course_utils.facts`` (functions bound at import
and called on the object) every one of these passed both the check cell and the grader; each
test here failed on that code. The same wrong answer without its forgery fails too, and the
course's own answers still pass (``tests/*/test_checks.py``).

Answer cells run as in a notebook: ``exec`` in a namespace of their own, whose patches are undone
before the grader's judging (which runs in another process, where no patch reaches).
"""

from __future__ import annotations

import builtins
import contextlib
import io

import numpy as np
import pytest
import torch
from torch import nn
from verdicts import measured_apart

from course_admin.grading import judging
from course_utils import checking

# --------------------------------------------------------------------------------------
# The wrong answers, and what each adds to forge the fact that gives it away. In the forgery,
# FORGERY is replaced by True (without it, the wrong answer runs alone).

HARLOW_REUSED_COPY = '''
import copy
import numpy as np
from course_utils.harlow.agent import train_evaluate_agent

def evaluate_individual(env, agent, optimizer_func, num_tasks=10, num_gradient_steps=25, num_trials=6,
                        num_evaluation_trials=20):
    learner = copy.deepcopy(agent)  # WRONG: one copy for every task, so each task starts where the last ended
    if FORGERY:  # ... and the copy's state_dict() reports the agent's own weights
        snapshot = {k: v.detach().clone() for k, v in agent.state_dict().items()}

        class Forged(type(agent)):
            def state_dict(self, *args, **kwargs):
                return {k: v.clone() for k, v in snapshot.items()}

        learner.__class__ = Forged
    scores = [train_evaluate_agent(env, learner, optimizer_func, num_gradient_steps, num_trials, num_evaluation_trials)
              for _ in range(num_tasks)]
    return np.sum(scores), scores
'''

COLOUR_CRITIC_THROUGH_ACTOR = '''
import torch

_advantages = []

def replay_actor_loss(log_pi, mu, advantage, rho_max):
    _advantages.append(advantage)
    rho = torch.clamp(log_pi.detach().exp() / mu, max=rho_max)
    return -(rho * log_pi * advantage).mean()  # WRONG: the advantage is not detached (the actor trains the critic)

if FORGERY:  # the advantage's gradient reads as None, as if it had been detached
    _real_grad = torch.Tensor.grad
    patch(torch.Tensor, "grad", property(lambda self: None if any(self is a for a in _advantages)
                                         else _real_grad.__get__(self)))
'''

LUNAR_DETACHED_NET = '''
import torch
from torch import nn

class PolicyNet(nn.Module):
    def __init__(self, n_obs, n_actions):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(n_obs, 32), nn.ReLU(), nn.Linear(32, n_actions))

    @classmethod
    def build_for_env(cls, env, **kw):
        return cls(env.observation_space.shape[0], env.action_space.n)

    def forward(self, x):
        return self.layers(x).detach().requires_grad_()  # WRONG: no gradient reaches the layers

    if FORGERY:  # ... and parameters() hands out a tensor with a gradient of its own making
        def parameters(self, recurse=True):
            fake = torch.ones(1, requires_grad=True)
            fake.grad = torch.ones(1)
            return iter([fake])
'''

LUNAR_DETACHED_LOSS = '''
import torch
from torch import nn

class VanillaPolicyGradientLoss(nn.Module):
    def forward(self, batch, action_scores):
        scores = action_scores.detach()  # WRONG: the loss has no gradient with respect to the scores
        log_p = torch.log_softmax(scores, dim=-1).gather(1, batch.actions.view(-1, 1)).squeeze(1)
        loss_p = -(batch.q_vals * log_p).mean()
        loss_p._forged = True
        return loss_p, dict(loss_p=loss_p.item())

if FORGERY:  # torch.Tensor.requires_grad patched to say yes for this loss
    _real = torch._C.TensorBase.requires_grad
    patch(torch.Tensor, "requires_grad",
          property(lambda self: True if getattr(self, "_forged", False) else _real.__get__(self)))
'''

REPLAY_UNCAPPED_SIZE = '''
from course_utils.replay.memory import CircularReplayMemory

class CircularMemory(CircularReplayMemory):
    def add(self, batch):
        batch, n = self.prepare(batch)
        first = min(n, self.capacity - self.pointer)
        for key, value in batch.items():
            self.memory[key][self.pointer : self.pointer + first] = value[:first]
            self.memory[key][: n - first] = value[first:]
        self.pointer = (self.pointer + n) % self.capacity
        self.size += n  # WRONG: grows past the capacity (sampling then draws from empty slots)
        return self

    if FORGERY:  # ... and len() reports the capped size
        def __len__(self):
            return min(self.size, self.capacity)
'''

REPLAY_SLOW_TREE = '''
from course_utils.replay.standin_trees import SlowMinTree, SlowSumTree

MinSegmentTree = SlowMinTree

class SumSegmentTree(SlowSumTree):  # WRONG: sum(start, end) loops over every leaf of the range
    if FORGERY:  # ... behind a cache of its answers, cleared when a leaf changes
        def __init__(self, capacity):
            super().__init__(capacity)
            self._answers = {}

        def __setitem__(self, index, value):
            self._answers.clear()
            super().__setitem__(index, value)

        def sum(self, start=0, end=None):
            if (start, end) not in self._answers:
                self._answers[(start, end)] = super().sum(start, end)
            return self._answers[(start, end)]
'''

REPLAY_PRIORITIES_WITH_GRADIENT = '''
import torch
import torch.nn.functional as F

class Quiet(torch.Tensor):
    if FORGERY:  # ... and the priorities, a tensor subclass, say they carry none
        @property
        def requires_grad(self):
            return False

def prioritized_td_loss(q_net, target_net, batch, gamma, prior_eps=1e-6):
    q_taken = q_net(batch["obs"]).gather(1, batch["acts"].unsqueeze(1)).squeeze(1)
    with torch.no_grad():
        target = batch["rews"] + gamma * (1.0 - batch["done"]) * target_net(batch["next_obs"]).max(dim=1).values
    loss = (batch["weights"] * F.smooth_l1_loss(q_taken, target, reduction="none")).mean()
    priorities = (target - q_taken).abs() + prior_eps  # WRONG: not detached, they carry a gradient
    return loss, priorities.as_subclass(Quiet) if FORGERY else priorities
'''

CASES = {
    "harlow: a reused copy whose state_dict reports the agent's weights": ("test_evaluate_individual", HARLOW_REUSED_COPY),
    "colour: an attached advantage, torch.Tensor.grad patched": ("test_replay_actor_loss", COLOUR_CRITIC_THROUGH_ACTOR),
    "lunar: a detached network whose parameters() hands out a gradient": ("test_policy_net", LUNAR_DETACHED_NET),
    "lunar: a detached loss, torch.Tensor.requires_grad patched": ("test_vpg_loss", LUNAR_DETACHED_LOSS),
    "replay: an uncapped size behind an overridden __len__": ("test_memory_add", REPLAY_UNCAPPED_SIZE),
    "replay: an O(n) range sum behind a cache of answers": ("test_segment_trees", REPLAY_SLOW_TREE),
    "replay: priorities with a gradient, a tensor subclass saying none": ("test_td_loss", REPLAY_PRIORITIES_WITH_GRADIENT),
}


@contextlib.contextmanager
def answer_cell(source: str, forgery: bool):
    """Run an answer cell in a namespace of its own (as a notebook's kernel would) and yield it;
    undo every patch it made (``patch(obj, name, value)``) on the way out."""
    undo = []

    def patch(obj, name, value):
        undo.append((obj, name, obj.__dict__[name] if name in vars(obj) else None, name in vars(obj)))
        setattr(obj, name, value)

    namespace = {"__name__": "__main__", "__builtins__": builtins, "patch": patch, "FORGERY": forgery}
    try:
        exec(compile(source, "<answer cell>", "exec"), namespace)
        yield namespace
    finally:
        for obj, name, value, had in reversed(undo):
            if had:
                setattr(obj, name, value)
            else:
                delattr(obj, name)


def _answers(grade_id: str, namespace: dict) -> list:
    return [namespace[name] for name in judging.exercise_for(grade_id).reference]


@pytest.mark.parametrize("case", list(CASES))
def test_a_wrong_answer_with_a_forged_fact_fails_the_check_cell(case):
    grade_id, source = CASES[case]
    exercise = judging.exercise_for(grade_id)  # its checks module imported first, as the notebook's setup cell does
    with answer_cell(source, forgery=True) as namespace, contextlib.redirect_stdout(io.StringIO()) as shown:
        passed = exercise.check(*_answers(grade_id, namespace))
    assert passed is False, shown.getvalue()
    assert "not yet" in shown.getvalue()


@pytest.mark.parametrize("case", list(CASES))
def test_a_wrong_answer_with_a_forged_fact_fails_in_the_grader(case):
    grade_id, source = CASES[case]
    exercise = judging.exercise_for(grade_id)
    expected = judging.reference_record(grade_id)  # the course's answer, driven before any patch
    with answer_cell(source, forgery=True) as namespace, contextlib.redirect_stdout(io.StringIO()):
        record = exercise.record(*_answers(grade_id, namespace), hidden=True)
        # a speed part is timed from outside the answer's process, as the grader's runner does
        measured = measured_apart(exercise, *_answers(grade_id, namespace)) if exercise.timed is not None else None
    with pytest.raises(checking.Problem):  # judged with every patch undone, as in the grader's process
        exercise.judge_record(record, expected, hidden=True, measured=measured)


@pytest.mark.parametrize("case", list(CASES))
def test_the_wrong_answer_alone_fails_the_check_cell(case):
    """The answers are wrong without their forgery: what the forgery hid is what the check finds."""
    grade_id, source = CASES[case]
    exercise = judging.exercise_for(grade_id)
    with answer_cell(source, forgery=False) as namespace, contextlib.redirect_stdout(io.StringIO()) as shown:
        assert exercise.check(*_answers(grade_id, namespace)) is False, shown.getvalue()


def test_the_tensor_readers_ignore_a_patched_torch_tensor_and_a_subclass(monkeypatch):
    """``records.encode`` reads a tensor's numbers with torch's own functions: a patched
    ``torch.Tensor.numpy`` or ``detach`` writes nothing into the record, a subclass is refused."""
    from course_utils import facts, records

    monkeypatch.setattr(torch.Tensor, "numpy", lambda self, *a, **k: np.zeros(3, dtype=np.float32))
    monkeypatch.setattr(torch.Tensor, "detach", lambda self: torch.zeros(3))
    encoded = records.encode(torch.tensor([1.0, 2.0, 3.0], requires_grad=True))
    assert encoded["__array__"]["data"] == [1.0, 2.0, 3.0]

    class Sub(torch.Tensor):
        pass

    assert "__object__" in records.encode(torch.ones(2).as_subclass(Sub))
    assert facts.requires_grad(torch.ones(2, requires_grad=True).as_subclass(Sub))


def test_a_module_s_parameters_are_read_from_the_module_itself(monkeypatch):
    """``facts.named_parameters`` finds what ``nn.Module.named_parameters`` does, in its order,
    whatever the module's class or a patched ``nn.Module`` says."""
    from course_utils import facts

    net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Sequential(nn.Linear(4, 2)))
    net.register_buffer("scale", torch.ones(1))
    want = [(name, p) for name, p in net.named_parameters()]
    monkeypatch.setattr(nn.Module, "named_parameters", lambda self, *a, **k: iter([]))
    monkeypatch.setattr(nn.Module, "parameters", lambda self, *a, **k: iter([]))
    got = facts.named_parameters(net)
    assert [name for name, _ in got] == [name for name, _ in want]
    assert all(a is b for (_, a), (_, b) in zip(got, want, strict=True))
    assert list(facts.weights(net)) == [name for name, _ in want] + ["scale"]


def test_the_timed_sums_must_also_add_up():
    """The speed part records the total of its sums: fast answers to other questions (a tree that
    returns 0 when the check times it) fail, the course's total passes."""
    from course_utils.replay.checks import TREES

    expected = judging.reference_record(TREES.grade_id)
    TREES.judge(judging.reference_record(TREES.grade_id), expected, TREES.cases_for(True))
    got = judging.reference_record(TREES.grade_id)
    got["speed"] = {**got["speed"], "total": got["speed"]["total"] + 1.0}
    with pytest.raises(checking.Problem, match="add up to"):
        TREES.judge(got, expected, TREES.cases_for(True))
