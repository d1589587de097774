import os
import random
import sys

import numpy as np
import pytest
import torch

import course_utils
from course_utils import runtime
from course_utils.runtime import generator, positive_int, set_seed


@pytest.mark.parametrize(
    "env, fast",
    [
        ({}, False),
        ({"COURSE_FAST": "1"}, True),
        ({"CI": "true"}, True),
        ({"NBGRADER_EXECUTION": "autograde"}, True),
        ({"CI": "true", "COURSE_FAST": "0"}, False),
    ],
)
def test_fast_mode_switch(monkeypatch, env, fast):
    for name in ("COURSE_FAST", "CI", "NBGRADER_EXECUTION"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert runtime.fast_mode() is fast
    assert runtime.scaled(full=1000, fast=10) == (10 if fast else 1000)


def test_headless_follows_ci_unless_overridden(monkeypatch):
    for name in ("COURSE_HEADLESS", "CI", "NBGRADER_EXECUTION"):
        monkeypatch.delenv(name, raising=False)
    assert not runtime.headless()
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert runtime.headless()
    monkeypatch.setenv("COURSE_HEADLESS", "0")  # a browser test under CI wants real clicks
    assert not runtime.headless()


def test_set_seed_covers_random_numpy_and_torch():
    def draw():
        return random.random(), np.random.rand(), torch.rand(1).item()

    course_utils.set_seed(7)
    first = draw()
    course_utils.set_seed(7)
    assert draw() == first
    course_utils.set_seed(8)
    assert draw() != first


def test_seed_torch_leaves_torch_as_torch_manual_seed_does():
    torch.manual_seed(123)
    expected = torch.random.get_rng_state()
    torch.rand(5)
    runtime.seed_torch(123)
    assert torch.equal(torch.random.get_rng_state(), expected)
    assert torch.equal(torch.rand(4), (torch.manual_seed(123), torch.rand(4))[1])


def test_set_seed_rejects_bad_seeds():
    with pytest.raises(ValueError, match="non-negative integer"):
        course_utils.set_seed(-1)


def test_one_thread_by_default():
    assert torch.get_num_threads() == 1


def test_sizes_are_full_for_students_and_fast_for_tests(monkeypatch):
    from course_utils.runtime import Sizes

    sizes = Sizes(episodes=(3000, 48))
    monkeypatch.setenv("COURSE_FAST", "0")
    assert sizes.episodes == 3000
    monkeypatch.setenv("COURSE_FAST", "1")
    assert sizes.episodes == 48 and sizes.full("episodes") == 3000
    with pytest.raises(AttributeError, match="known"):
        _ = sizes.steps
    with pytest.raises(ValueError, match="pair"):
        Sizes(steps=5)


def test_positive_int_is_one_rule_for_every_size():
    assert positive_int("size", 3) == 3 and positive_int("size", np.int64(2)) == 2
    for bad in (0, -1, 2.0, True, "3", None):
        with pytest.raises(ValueError, match="size must be a positive integer"):
            positive_int("size", bad)
    with pytest.raises(TypeError, match="max_episodes must be a positive integer"):
        positive_int("max_episodes", 0, TypeError)


def test_generator_reads_an_rng_argument_and_none_follows_set_seed():
    rng = np.random.default_rng(5)
    assert generator(rng) is rng
    assert generator(7).integers(1000) == np.random.default_rng(7).integers(1000)
    set_seed(3)
    first = generator().integers(10**9)
    set_seed(3)
    assert generator().integers(10**9) == first
    with pytest.raises(ValueError, match="rng must be None, an int seed or a numpy.random.Generator"):
        generator(np.random.RandomState(0))


# --- fork_map ---------------------------------------------------------------------------------


def test_fork_map_runs_closures_in_other_processes_and_keeps_the_order():
    parent = os.getpid()
    offset = 10  # a closure over local state, as a notebook's cell would pass

    def where(x):
        return x + offset, os.getpid()

    results = runtime.fork_map(where, [1, 2, 3], workers=2)
    assert [value for value, _ in results] == [11, 12, 13]
    if sys.platform.startswith("linux"):
        assert all(pid != parent for _, pid in results) and len({pid for _, pid in results}) == 3


def test_fork_map_starts_every_call_from_the_parents_state():
    np.random.seed(0)

    def draw(_):
        return float(np.random.random())  # global state: what a student's buffer might use

    assert len(set(runtime.fork_map(draw, range(4), workers=2))) == (1 if sys.platform.startswith("linux") else 4)


def test_fork_map_raises_a_calls_error_and_names_a_dead_process():
    with pytest.raises(ZeroDivisionError):
        runtime.fork_map(lambda x: 1 / x, [1, 0], workers=2)
    if sys.platform.startswith("linux"):
        with pytest.raises(RuntimeError, match=r"Run 2 of 2 died in its process \(exit code 3"):
            runtime.fork_map(lambda x: os._exit(3) if x else 1, [0, 1], workers=2)


def test_fork_map_with_one_worker_runs_here():
    assert runtime.fork_map(lambda x: os.getpid(), [0, 1], workers=1) == [os.getpid()] * 2


def test_fork_map_runs_a_call_here_when_no_process_can_be_started(monkeypatch):
    import multiprocessing.context

    def refuse(self):
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(multiprocessing.context.ForkProcess, "start", refuse)
    assert runtime.fork_map(lambda x: (x, os.getpid()), [1, 2], workers=2) == [(1, os.getpid()), (2, os.getpid())]


_STEP_FAULTS = """
import resource, sys
import torch
from course_utils.runtime import keep_freed_memory
kept = keep_freed_memory() if sys.argv[1] == "keep" else None
net = torch.nn.Sequential(torch.nn.Linear(8, 128), torch.nn.ReLU(), torch.nn.Linear(128, 128), torch.nn.ReLU(),
                          torch.nn.Linear(128, 1))
x = torch.randn(4000, 8)
def step():
    net.zero_grad()
    net(x).square().mean().backward()
step(), step()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(10):
    step()
print(kept, (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 10)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_keep_freed_memory_stops_a_gradient_step_asking_for_fresh_pages():
    # a critic's step on a batch of 4000 states, each in a fresh process: by default glibc gives
    # the freed blocks back and every step faults in hundreds of new pages
    import subprocess

    def faults(mode):
        out = subprocess.run([sys.executable, "-c", _STEP_FAULTS, mode], capture_output=True, text=True, check=True)
        kept, per_step = out.stdout.split()
        return kept, float(per_step)

    (_, default), (kept, keeping) = faults("default"), faults("keep")
    assert kept == "True"
    assert default > 200
    assert keeping < default / 4


def test_keep_freed_memory_does_nothing_without_glibc(monkeypatch):
    import ctypes

    def no_glibc(name):
        raise OSError("no such library")

    monkeypatch.setattr(runtime, "_kept_freed_memory", False)
    monkeypatch.setattr(ctypes, "CDLL", no_glibc)
    assert runtime.keep_freed_memory() is False
