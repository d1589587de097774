"""The greedy evaluation of a lander and the course's pretrained agent, for the notebook's Section 8.

- ``evaluate(net, seeds)``: the total reward of one greedy episode (the most probable action every
  step) per seed, all played together: the bar of ``solve`` and the notebook's comparisons.
- ``load_pretrained()``: the course's agent (``course train lunar``) from its checkpoint, loaded
  with ``weights_only=True`` into a ``PretrainedLander``; ``TRAINING_CURVE`` is its stored run.

Why ``PretrainedLander`` is no network class: the checkpoint's weights are read into fixed
tensors (buffers, no parameters, no gradient) and the forward gives action scores only. A network
that could be trained, or that returns ``(scores, values)``, would be an answer to Exercises 1
and 8 (``PolicyNet``, ``AACPolicyNet``); this one can only fly. The course's network and its
trainer are instructor code (``course_admin.lunar.aac``).

Shapes: ``N`` observations of 8 features, 4 actions.
"""

from __future__ import annotations

import numpy as np
import torch

from course_utils.lunar import lander_step
from course_utils.lunar.env import EVAL_SEEDS, MAX_EPISODE_STEPS, VECTOR_LANDER
from course_utils.paths import ASSETS

CHECKPOINT = "lunar_aac"
"""The name of the trained weights in the checkpoint registry (``assets/checkpoints/lunar_aac.pt``)."""
TRAINING_CURVE = ASSETS / "lunar_training.json"
"""The training curve, configuration and evaluation written by ``course train lunar``."""


class PretrainedLander(torch.nn.Module):
    """The course's trained policy, frozen: observations (N, 8) -> action scores (N, 4).

    ``state`` is the checkpoint's ``state_dict``; only its ``policy.*`` layers are kept (tanh
    between them), as buffers: nothing here has a gradient or can be trained."""

    def __init__(self, state: dict):
        super().__init__()
        names = sorted({key.rsplit(".", 1)[0] for key in state if key.startswith("policy.")},
                       key=lambda name: int(name.split(".")[1]))
        self.layers = len(names)
        for i, name in enumerate(names):
            self.register_buffer(f"w{i}", state[f"{name}.weight"].detach().clone())
            self.register_buffer(f"b{i}", state[f"{name}.bias"].detach().clone())

    @torch.no_grad()
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for i in range(self.layers):
            x = torch.nn.functional.linear(x, getattr(self, f"w{i}"), getattr(self, f"b{i}"))
            if i < self.layers - 1:
                x = torch.tanh(x)
        return x


def load_pretrained() -> PretrainedLander:
    """The agent trained by ``course train lunar``, from the checkpoint registry (``weights_only=True``)."""
    from course_utils.checkpoints import load_checkpoint

    return PretrainedLander(load_checkpoint(CHECKPOINT)).eval()


def evaluate(net, seeds=EVAL_SEEDS) -> np.ndarray:
    """Total reward of one greedy episode per seed: float array (len(seeds),).

    ``net(obs)`` maps observations (n, 8) to action scores (n, 4), or to ``(scores, ...)``. The
    episodes are played together, one batched forward per step on the landers still playing, each
    a ``LeanLunarLander`` (the physics and seeding of ``make_env()``, its 300-step limit counted
    here), stepped until it lands, crashes or reaches the limit."""
    if getattr(net, "time_feature", False):
        raise ValueError("evaluate plays landers without the time feature: this network expects 9 numbers.")
    envs = [VECTOR_LANDER() for _ in seeds]
    obs = np.stack([env.reset(seed=int(s))[0] for env, s in zip(envs, seeds, strict=True)]).astype(np.float32)
    rewards = np.zeros((len(envs), MAX_EPISODE_STEPS))
    totals = np.zeros(len(envs))
    play_step = lander_step.stepper(envs)
    active, t = list(range(len(envs))), 0
    while active:
        with torch.no_grad():
            scores = net(torch.from_numpy(obs[active]))
        scores = scores[0] if isinstance(scores, tuple) else scores
        actions = scores.argmax(-1).tolist()
        t += 1
        still = play_step(envs, active, actions, t, obs, rewards, MAX_EPISODE_STEPS, False)
        totals[active] += rewards[active, t - 1]  # step by step, as a running sum per episode
        active = still
    for env in envs:
        env.close()
    return totals
