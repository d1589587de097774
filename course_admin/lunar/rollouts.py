"""The course's rollouts, ``course train lunar`` and ``course bench lunar``: ``T`` steps of every
environment with the state values, log-probabilities and episode ends that the actor-critic
update needs (``AACRolloutCollector.collect``), on the shards and worker processes of
``course_utils.lunar.rollouts`` (which plays the notebook's whole episodes).

Instructor code: a rollout with values and log-probabilities is actor-critic machinery, and its
NumPy twin of the network (``numpy_ac``) computes the softmax and log-probabilities several
exercises ask for. Shapes: ``T`` steps, ``E`` environments, ``d`` observation features (8, or 9
with the time feature).
"""

from __future__ import annotations

import numpy as np
import torch

from course_admin.lunar.numpy_ac import NumpyActorCritic, log_softmax
from course_utils.lunar.rollouts import RolloutCollector, Shard

KEYS = ("states", "actions", "logps", "rewards", "values", "final_values", "terms", "ends")
"""Per-step arrays of a rollout, each (T, E) except ``states`` (T, E, d)."""


class AACShard(Shard):
    """A ``Shard`` that also collects fixed-length rollouts (``collect``), keeping each environment's
    running episode return and length across rollouts."""

    COMMANDS = ("collect", "play_episodes")

    def __init__(self, seeds, net_spec, generator_seed: int, time_feature: bool = False):
        super().__init__(seeds, net_spec, generator_seed, time_feature)
        self.ep_return = np.zeros(len(seeds))
        self.ep_length = np.zeros(len(seeds), dtype=int)
        # A network with a NumPy twin (``numpy_twin = True``: the course's ActorCriticNet) is run
        # in NumPy, with actions drawn from a NumPy generator: per step, torch's per-call overhead
        # cost about as much as the network itself on 8 environments.
        self.twin = NumpyActorCritic(self.net.state_dict()) if getattr(self.net, "numpy_twin", False) else None
        self.np_rng = np.random.default_rng(generator_seed)

    def collect(self, state_dict, steps: int) -> dict:
        """Play ``steps`` steps with the weights ``state_dict``; returns the rollout.

        The rollout holds the ``KEYS`` arrays (float32, ``actions`` int64), ``last_value``
        (E,) = V of the observation after the last step, and ``finished``: one
        ``(step, env, return, length)`` per episode that ended, in the order they ended.
        ``final_values`` is V(final observation) where an episode was cut off by the time
        limit and 0 elsewhere (a terminated episode has no future). For a network without a
        value head, ``values``, ``final_values`` and ``last_value`` stay 0.
        """
        if self.twin is not None:
            self.twin.load(state_dict)
            act, values_of = self._act_numpy, lambda obs: self.twin.forward(obs)[1]
        else:
            self.net.load_state_dict(state_dict)
            act, values_of = self._act_torch, self._values_torch
        obs = self.obs.numpy().copy()
        n, d = obs.shape
        out = {key: np.zeros((steps, n), dtype=np.float32) for key in KEYS}
        out["states"] = np.zeros((steps, n, d), dtype=np.float32)
        out["actions"] = np.zeros((steps, n), dtype=np.int64)
        finished = []
        for t in range(steps):
            action, logp, value = act(obs)
            out["states"][t] = obs
            out["actions"][t] = action
            out["logps"][t] = logp
            if value is not None:
                out["values"][t] = value
            next_obs, reward, terminated, truncated, info = self.envs.step(action)
            out["rewards"][t] = reward
            out["terms"][t] = terminated
            done = terminated | truncated
            out["ends"][t] = done
            cut = np.flatnonzero(truncated & ~terminated)
            if value is not None and cut.size:
                out["final_values"][t, cut] = values_of(np.stack([info["final_obs"][i] for i in cut]).astype(np.float32))
            self.ep_return += reward
            self.ep_length += 1
            for i in np.flatnonzero(done):
                finished.append((t, int(i), float(self.ep_return[i]), int(self.ep_length[i])))
                self.ep_return[i], self.ep_length[i] = 0.0, 0
            obs = next_obs.copy()
        self.obs = torch.from_numpy(obs)
        last = values_of(obs)
        return {**out, "last_value": np.zeros(n, np.float32) if last is None else last.astype(np.float32),
                "finished": finished}

    def _act_torch(self, obs: np.ndarray, deterministic: bool = False):
        """Actions (n,) sampled with the torch network and generator (or the most probable, if
        ``deterministic``), their log-probabilities (n,) and the state values (n,), or None
        without a value head."""
        with torch.no_grad():
            output = self.net(torch.from_numpy(obs))
            logits, value = output if isinstance(output, tuple) else (output, None)
            log_probs = torch.log_softmax(logits, -1)
            if deterministic:
                action = log_probs.argmax(-1, keepdim=True)
            else:  # torch.multinomial's draw from the shard's generator, as play_episodes draws (Shard._draw)
                action = torch.from_numpy(self._draw(log_probs.exp().numpy())).view(-1, 1)
        logp = log_probs.gather(1, action).squeeze(-1).numpy()
        return action.squeeze(-1).numpy(), logp, None if value is None else value.numpy()

    def _values_torch(self, obs: np.ndarray):
        """State values (n,) of ``obs`` (n, d), or None for a network without a value head."""
        with torch.no_grad():
            output = self.net(torch.from_numpy(obs))
        return output[1].numpy() if isinstance(output, tuple) else None

    def _act_numpy(self, obs: np.ndarray):
        """``_act_torch`` with the network's NumPy twin: actions drawn by inverting the cumulative
        probabilities with uniforms from the shard's NumPy generator (a different random stream)."""
        logits, value = self.twin.forward(obs)
        log_probs = log_softmax(logits)
        cdf = np.cumsum(np.exp(log_probs), axis=1)
        u = self.np_rng.random(len(obs)) * cdf[:, -1]
        action = np.minimum((cdf < u[:, None]).sum(axis=1), logits.shape[1] - 1)
        return action, log_probs[np.arange(len(obs)), action], value



class AACRolloutCollector(RolloutCollector):
    """``RolloutCollector`` whose shards also collect rollouts (``collect``)."""

    shard_type = AACShard

    def collect(self, net: torch.nn.Module, steps: int) -> dict:
        """Every shard plays ``steps`` steps with ``net``'s current weights; returns the
        rollout with arrays (T, E[, d]) as tensors, ``last_value`` (E,), and ``finished``
        sorted by (step, environment)."""
        state = {k: v.detach().clone() for k, v in net.state_dict().items()}
        if self.local:
            parts = [shard.collect(state, steps) for shard in self.local]
        else:
            for pipe in self.pipes:
                pipe.send(("collect", (state, steps)))
            parts = [self._receive(pipe, "rollout") for pipe in self.pipes]
        rollout = {key: torch.as_tensor(np.concatenate([p[key] for p in parts], axis=1)) for key in KEYS}
        rollout["last_value"] = torch.as_tensor(np.concatenate([p["last_value"] for p in parts]))
        rollout["finished"] = sorted(
            (t, r.start + i, ret, length) for p, r in zip(parts, self.ranges, strict=True) for t, i, ret, length in p["finished"]
        )
        return rollout
