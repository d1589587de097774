"""Whole episodes of many LunarLanders on every core: the batches of the notebook's experiments
and long run (``RolloutCollector.play_episodes``: one whole episode per seed, the batches of
``harness.VectorBatchDataset``), played with the student's own network.

The course's trainer collects fixed-length rollouts with values and log-probabilities on the
same shards and workers (``course_admin.lunar.rollouts``, which extends ``Shard`` and
``RolloutCollector``): that is actor-critic machinery, so it is instructor code.

The ``E`` environments are split into ``shards`` (a fixed number, part of the training
configuration). Each shard owns a ``LanderVectorEnv`` of its environments, its own copy of
the network and its own action generator, and plays ``T`` steps with one batched forward
pass per step. ``workers`` processes run the shards: with ``workers=1`` they run one after
the other in this process, with ``workers=2`` side by side on two cores. The results are the
same bit for bit whatever ``workers`` is (a test checks it), so ``workers`` only sets speed.

Why processes and whole rollouts: box2d holds Python's global lock, so threads do not help,
and one message per environment step (gymnasium's ``AsyncVectorEnv``) cost more than the
step itself here (4.7k-6.8k steps/s against 29k in one process). A shard's process gets
the weights once per batch and sends back its episodes at the end.

Shapes: ``T`` steps, ``E`` environments, ``d`` observation features (8, or 9 with the time
feature).
"""

from __future__ import annotations

import copy
import multiprocessing as mp
import os
import sys

import numpy as np
import torch

from course_utils.lunar import lander_step
from course_utils.lunar.env import MAX_EPISODE_STEPS, LanderVectorEnv
from course_utils.lunar.numpy_policy import numpy_scores, one_blas_thread
from course_utils.runtime import positive_int, start_forked_child, usable_cores

DRAW_BLOCK = 4096
"""Exponential draws a shard takes from its generator at a time (``Shard._draw``): about 200 steps
of 5 landers; the block's size changes no action."""


def default_workers(shards: int = 2) -> int:
    """Worker processes for ``shards`` shards: one per shard where this process may use that
    many cores and can ``fork`` (Linux; the copy of a notebook's network reaches the workers
    that way), else 1 (the shards take turns in this process)."""
    if shards > 1 and usable_cores() >= shards and sys.platform.startswith("linux"):
        return shards
    return 1


def split(num_envs: int, shards: int) -> list[range]:
    """Environment indices of each shard: ``shards`` contiguous ranges, sizes differing by <= 1."""
    if not isinstance(shards, int) or not 1 <= shards <= num_envs:
        raise ValueError(f"shards must be an integer from 1 to num_envs ({num_envs}), got {shards!r}.")
    bounds = [num_envs * k // shards for k in range(shards + 1)]
    return [range(lo, hi) for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]


class Shard:
    """Some environments with their own network copy and action generator.

    Given code that resembles an exercise (README, "Given code in the student package"):
    ``_actions`` samples actions from a policy's scores, as Exercise 2's agent samples one; it is
    a method of a shard stepping its own environments, not a function an answer can call. The
    scores are computed in NumPy where ``numpy_policy.numpy_scores`` shows the network is a chain
    of operations the course knows and the two agree on the batch's weights, else by the network.

    ``net_spec`` is ``(cls, kwargs)``: ``cls(**kwargs)`` builds the network, whose output is
    action scores (N, 4) or a tuple ``(scores, values)``; or a network, copied (a notebook's
    class need not say how it is built: ``fork`` hands the worker processes the copy). ``seeds``
    start the environments' first episodes; later episodes continue each environment's own
    random stream.
    """

    COMMANDS = ("play_episodes", "rewind")
    """What a worker process runs for its parent: these methods."""

    def __init__(self, seeds, net_spec, generator_seed: int, time_feature: bool = False):
        if isinstance(net_spec, torch.nn.Module):
            self.net = copy.deepcopy(net_spec)
        else:
            cls, kwargs = net_spec
            self.net = cls(**kwargs)
        self.envs = LanderVectorEnv(len(seeds), time_feature)
        self.obs = torch.as_tensor(self.envs.reset(seed=[int(s) for s in seeds])[0]).clone()
        self.generator = torch.Generator().manual_seed(generator_seed)
        self.generator_seed = generator_seed
        # the generator's exponential draws, taken a block at a time and used in order (``_draw``)
        self._noise = np.zeros(0, dtype=np.float32)
        self._used = 0
        self._draws_before = None  # where the draws stood when the last play_episodes began (``rewind``)
        # the scores of play_episodes computed in NumPy where numpy_scores can show the network is the
        # same function (the torch forward's per-operation overhead cost more than box2d's step on a
        # shard's few landers)
        self.numpy_net = numpy_scores(self.net)
        self.fast = None
        # all of the shard's landers stepped in one C call where it is built and checked (the same
        # numbers), else one Python step each
        self.play_step = lander_step.stepper(self.envs.envs)
        # the actions drawn in C where it is built and checked (the same actions: lander_step's docstring)
        self.c_draw = lander_step.drawer()

    @torch.no_grad()  # once for the whole loop: entering it cost a third of a step's action draw
    def play_episodes(self, state_dict, seeds, deterministic: bool = False) -> list[tuple]:
        """One whole episode per seed (at most one per environment of the shard), all stepped
        together with the weights ``state_dict`` (tensors, or NumPy arrays as the worker processes
        get them: ``_arrays``): one batched forward per step on the
        environments still playing, each stepped until it ends (termination, or the
        ``MAX_EPISODE_STEPS`` limit), none stepped after. Actions are sampled with the shard's
        generator, or the most probable if ``deterministic``.

        Returns, in seed order, ``(states (L, d) float32, actions (L,) int64, rewards (L,)
        float64)`` per episode of ``L`` steps: ``states[t]`` is the observation ``actions[t]``
        was chosen in.
        """
        envs = self.envs.envs
        if len(seeds) > len(envs):
            raise ValueError(f"{len(seeds)} seeds for a shard of {len(envs)} environments: give at most one per environment.")
        # every episode starts from its seed, so the draws are the one thing a replay must restore
        self._draws_before = (self.generator.get_state(), self._noise, self._used)
        self.net.load_state_dict({k: torch.from_numpy(v) if isinstance(v, np.ndarray) else v for k, v in state_dict.items()})
        time_feature = self.envs.time_feature
        n, d = len(seeds), self.envs.single_observation_space.shape[0]
        # checked on these weights: where the NumPy scores differ from the torch forward, torch it is
        self.fast = self.numpy_net if self.numpy_net is not None and self.numpy_net.agrees(d) else None
        obs = np.zeros((n, d), dtype=np.float32)
        for i, seed in enumerate(seeds):
            obs[i, :8] = envs[i].reset(seed=int(seed))[0]
        # each step's states and actions go into one array for all the environments at once (a
        # per-environment append of every row cost about as much as the network's forward)
        states = np.zeros((n, MAX_EPISODE_STEPS, d), dtype=np.float32)
        actions = np.zeros((n, MAX_EPISODE_STEPS), dtype=np.int64)
        rewards = np.zeros((n, MAX_EPISODE_STEPS), dtype=np.float64)
        lengths = np.zeros(n, dtype=int)
        envs = list(envs[:n])
        active = np.arange(n)
        t = 0
        while active.size:
            rows = obs[active]  # a copy: the network may not change obs, nor states
            states[active, t] = rows
            chosen = self._actions(rows, deterministic)
            actions[active, t] = chosen
            t += 1
            lengths[active] = t
            still = self.play_step(envs, active.tolist(), chosen, t, obs, rewards, MAX_EPISODE_STEPS, time_feature)
            active = np.asarray(still, dtype=int)
        return [(states[i, :L].copy(), actions[i, :L].copy(), rewards[i, :L].copy()) for i, L in enumerate(lengths.tolist())]

    def _actions(self, obs: np.ndarray, deterministic: bool = False) -> list[int]:
        """Actions (n,) as ints for observations (n, d): drawn from the network's policy with the
        shard's generator, or the most probable if ``deterministic``; called under
        ``torch.no_grad`` (``play_episodes``). The scores are the
        NumPy twin's where ``play_episodes`` found it agrees, else the torch forward's; the draw is
        the same either way, so the two give the same actions unless float rounding of the scores
        tips one (the twin's products are NumPy's). The draw is ``lander_step.draw``'s (C) where it
        decides every row, else ``_draw``'s (torch's probabilities): the same actions from the same
        exponential draws (see ``lander_step``)."""
        if self.fast is not None:
            values, scores = self.fast(obs), None  # a tensor only where torch draws
        else:
            output = self.net(torch.from_numpy(obs))
            scores = output[0] if isinstance(output, tuple) else output
            values = scores.numpy() if scores.dtype == torch.float32 and not scores.requires_grad else None
        if (not deterministic and self.c_draw is not None and values is not None and values.dtype == np.float32
                and values.ndim == 2 and values.flags.c_contiguous):
            self._reserve(values.size)
            actions = self.c_draw(values, self._noise, self._used)
            if actions is not None:  # else a row too close to call: torch draws this step, from the same draws
                self._used += values.size
                return actions
        if scores is None:
            scores = torch.from_numpy(values)
        log_probs = torch.log_softmax(scores, -1)
        if deterministic:
            return log_probs.argmax(-1).tolist()
        return self._draw(log_probs.exp().numpy()).tolist()

    def _reserve(self, count: int) -> None:
        """Make sure ``count`` exponential draws are ready after the ones used (``_draw``)."""
        if self._used + count > self._noise.size:
            fresh = torch.empty(max(DRAW_BLOCK, count), dtype=torch.float32).exponential_(1.0, generator=self.generator)
            self._noise = np.concatenate([self._noise[self._used:], fresh.numpy()])
            self._used = 0

    def _draw(self, probs: np.ndarray) -> np.ndarray:
        """One action (n,) int64 per row of ``probs`` (n, A) float32: what
        ``torch.multinomial(probs, 1, generator=self.generator)`` draws, to the last bit.

        torch draws one sample as ``argmax(probs / q)`` with ``q`` (n, A) exponential draws from
        the generator (the Gumbel-max trick, exponentiated), and its exponential draws are one
        sequence whatever their tensor's size (both checked by tests). So the draws are taken
        ``DRAW_BLOCK`` at a time and used in order, each step's in the order torch would have
        drawn them: the same actions, without torch's per-call work (its checks of the
        probabilities and four small kernels cost about twice the NumPy here). The generator
        itself is then ahead of the draws used: every draw of this shard takes its numbers through
        ``_reserve``, here or in ``_actions``' C draw, in order."""
        count = probs.size
        self._reserve(count)
        q = self._noise[self._used:self._used + count].reshape(probs.shape)
        self._used += count
        # torch.multinomial's check, in one sum: probabilities exp(log_softmax) are in [0, 1] or NaN
        # (a network whose scores overflowed), and NaN or inf anywhere makes the sum so (a negative
        # one, which exp cannot give, this does not look for)
        if not 0.0 < probs.sum() < np.inf:
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        # (a draw of exactly 0, one in 2**53, gives p / 0 = inf, as in torch, and NumPy's warning)
        return (probs / q).argmax(-1)

    def rewind(self) -> None:
        """Undo the last ``play_episodes``' draws: the next one draws what it drew (its episodes
        are then played again with other weights: ``RolloutCollector.rewind``)."""
        if self._draws_before is not None:
            state, self._noise, self._used = self._draws_before
            self.generator.set_state(state)
            self._draws_before = None

    def close(self) -> None:
        self.envs.close()


def _serve(pipe, shard_type, args) -> None:
    """A worker process: build a ``shard_type`` shard, then run the methods its ``COMMANDS`` name
    for the parent until ``close``. A stop by hand (Ctrl-C, Jupyter's stop button) is the parent's to handle:
    the worker ignores it, and the parent closes it."""
    start_forked_child()
    one_blas_thread()  # the shard's NumPy forwards: see numpy_policy.one_blas_thread
    try:
        shard = shard_type(*args)
        pipe.send(("ready", None))
    except Exception as error:  # noqa: BLE001 - the parent re-raises it with context
        pipe.send(("error", repr(error)))
        return
    while True:
        command, data = pipe.recv()
        if command == "close":
            shard.close()
            pipe.send(("closed", None))
            return
        try:
            if command not in shard.COMMANDS:
                raise ValueError(f"unknown command {command!r}")
            pipe.send(("rollout", getattr(shard, command)(*data)))
        except Exception as error:  # noqa: BLE001
            pipe.send(("error", repr(error)))


def _arrays(state: dict) -> dict:
    """The tensors of ``state`` as NumPy arrays sharing their memory (those NumPy cannot hold, such
    as bfloat16, stay tensors). Why: a pipe carried the weights of two 128-unit networks as arrays
    in 0.09 ms, as tensors in 4.9 ms (torch's pickling of storages), once per batch and worker."""
    arrays = {}
    for key, value in state.items():
        try:
            arrays[key] = value.numpy()
        except (TypeError, RuntimeError):
            arrays[key] = value
    return arrays


class RolloutCollector:
    """``num_envs`` LunarLanders in ``shards`` shards, run by ``workers`` processes.

    ``seeds`` (one per environment) start the first episodes; shard ``k`` samples actions
    with a generator seeded ``generator_seed * 1000 + k``. ``workers=1`` runs every shard in
    this process. Use as a context manager, or call ``close()``: worker processes stop there
    (and, being daemons, with this process).
    """

    shard_type = Shard
    """The class of the shards (a subclass adds what its workers can run)."""

    def __init__(self, seeds, net_spec, generator_seed: int = 0, shards: int = 2, workers: int = 2, time_feature=False):
        seeds = [int(s) for s in seeds]
        positive_int("workers", workers)
        self.ranges = split(len(seeds), shards)
        self.num_envs = len(seeds)
        args = [([seeds[i] for i in r], net_spec, generator_seed * 1000 + k, time_feature) for k, r in enumerate(self.ranges)]
        self.local: list[Shard] = []
        self.pipes = []
        self.processes = []
        self.pending = None  # episodes sent and not received yet (send_episodes)
        if workers == 1:
            self.local = [self.shard_type(*a) for a in args]
            return
        if workers != shards:
            raise ValueError(f"Run the {shards} shards with workers=1 (in this process) or workers={shards}.")
        # fork: fast, and no re-import of the caller's __main__ (a notebook, a script, stdin);
        # the child only steps box2d and runs torch in one thread.
        context = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
        for a in args:
            parent, child = context.Pipe()
            process = context.Process(target=_serve, args=(child, self.shard_type, a), daemon=True, name="lunar-rollout-shard")
            process.start()
            child.close()
            self.pipes.append(parent)
            self.processes.append(process)
        for pipe in self.pipes:
            self._receive(pipe, "ready")

    def _receive(self, pipe, expected: str):
        try:
            kind, payload = pipe.recv()
        except EOFError:
            self.close()
            raise RuntimeError("A rollout worker process died (out of memory, or killed). Run again with workers=1.") from None
        if kind == "error":
            self.close()
            raise RuntimeError(f"A rollout worker failed: {payload}")
        assert kind == expected, (kind, expected)
        return payload

    def play_episodes(self, net: torch.nn.Module, seeds, deterministic: bool = False) -> list[tuple]:
        """One whole episode per seed with ``net``'s current weights (``Shard.play_episodes``):
        the seeds are split among the shards like the environments (contiguous ranges, at most
        ``num_envs`` seeds). Returns ``(states, actions, rewards)`` arrays per episode, in seed order."""
        self.send_episodes(net, seeds, deterministic)
        return self.receive_episodes()

    def send_episodes(self, net: torch.nn.Module, seeds, deterministic: bool = False) -> dict:
        """``play_episodes`` in two halves: this one starts the worker processes on the episodes
        with ``net``'s current weights and returns at once (with ``workers=1`` the shards play
        them in ``receive_episodes``, with these same weights), so this process can work
        meanwhile. Returns the weights sent (``state_dict``, copied)."""
        seeds = [int(s) for s in seeds]
        if len(seeds) > self.num_envs:
            raise ValueError(f"{len(seeds)} seeds for {self.num_envs} environments: give at most one per environment.")
        if self.pending is not None:
            raise RuntimeError("Episodes were sent and not received yet: receive_episodes() first.")
        state = {k: v.detach().clone() for k, v in net.state_dict().items()}
        bounds = [len(seeds) * k // len(self.ranges) for k in range(len(self.ranges) + 1)]
        parts = [seeds[lo:hi] for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]
        if not self.local:
            arrays = _arrays(state)
            for pipe, part in zip(self.pipes, parts, strict=True):
                pipe.send(("play_episodes", (arrays, part, deterministic)))
        self.pending = (state, parts, deterministic)
        return state

    def receive_episodes(self) -> list[tuple]:
        """The episodes ``send_episodes`` started, in seed order (``play_episodes``' result)."""
        if self.pending is None:
            raise RuntimeError("No episodes were sent: send_episodes() first.")
        state, parts, deterministic = self.pending
        self.pending = None
        if self.local:
            return [e for shard, part in zip(self.local, parts, strict=True)
                    for e in shard.play_episodes(state, part, deterministic)]
        return [e for pipe in self.pipes for e in self._receive(pipe, "rollout")]

    def rewind(self) -> None:
        """Undo the draws of the episodes last received (``Shard.rewind``): the next episodes draw
        what they drew. For episodes played ahead with weights that then changed: played again,
        they are those the new weights would have played."""
        if self.pending is not None:
            raise RuntimeError("Episodes were sent and not received yet: receive_episodes() first.")
        for shard in self.local:
            shard.rewind()
        for pipe in self.pipes:
            pipe.send(("rewind", ()))
        for pipe in self.pipes:
            self._receive(pipe, "rollout")

    def worker_cpu_s(self) -> float:
        """CPU time (user + system, seconds) used so far by the live worker processes (0 when
        the shards run in this process; read from ``/proc``, so Linux only, else 0)."""
        total = 0.0
        for process in self.processes:
            try:
                with open(f"/proc/{process.pid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        return total

    def close(self) -> None:
        for shard in self.local:
            shard.close()
        self.local = []
        sent, self.pending = self.pending, None
        for pipe, process in zip(self.pipes, self.processes, strict=True):
            try:
                if sent is not None:  # the episodes of a send_episodes nobody received: the worker's answer first
                    pipe.recv()
                pipe.send(("close", None))
                pipe.recv()
            except (BrokenPipeError, EOFError, OSError):
                pass
            process.join(timeout=5)
            if process.is_alive():
                process.kill()
        self.pipes, self.processes = [], []

    def __enter__(self) -> RolloutCollector:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
