"""The course's LunarLander: ``CourseLunarLander-v0``, registered with gymnasium when this
module is imported, and ``LanderVectorEnv``, many of them stepped together.

``CourseLunarLander-v0`` is gymnasium's ``LunarLander-v3`` (discrete actions, no wind) with
the settings of the assignment tutorial 3 follows: episodes cut off after 300 steps, solved
at an average total reward of 200.

## Action Space

``Discrete(4)`` (names in ``ACTIONS``):

| action | meaning |
|---|---|
| 0 | do nothing |
| 1 | fire the left orientation engine |
| 2 | fire the main engine (pushes the lander up along its axis) |
| 3 | fire the right orientation engine |

## Observation Space

``Box(8,)`` float32 (names in ``OBSERVATIONS``): x and y position (0, 0 at the landing pad;
bounds +-2.5), x and y velocity (+-10), angle (+-2 pi) and angular velocity (+-10), and one
0/1 flag per leg touching the ground. ``make_env(time_feature=True)`` appends a ninth
number, the elapsed fraction of the time limit (step / 300, from 0 to 1).

## Rewards

Each step: moving towards the pad, slowing down and staying level earn reward (the change
of a shaping potential), drifting away, speeding up and tilting lose it; +10 for each leg
that touches the ground (lost again if it lifts off); -0.3 per step the main engine fires,
-0.03 per step a side engine fires. The last step of a terminated episode is +100 for coming
to rest, -100 for a crash or leaving the screen. The task counts as solved at an average
total reward of 200 (``REWARD_THRESHOLD``).

## Starting State

The lander starts at the top centre of the screen with a random push on its centre of
mass; the terrain around the pad is random too. Both come from the seed given to ``reset``.

## Episode End

* **Termination** (``terminated=True``): the lander crashes (its body touches the ground),
  leaves the screen (``|x| >= 1``) or comes to rest (box2d puts it to sleep).
* **Truncation** (``truncated=True``): ``MAX_EPISODE_STEPS`` = 300 steps passed without
  either (gymnasium's own LunarLander allows 1000). The lander has to land, not hover; a
  truncated episode has a future the agent did not see, a terminated one has none.

## Example

>>> env = make_env()
>>> obs, info = env.reset(seed=0)
>>> obs.shape, int(env.action_space.n)
((8,), 4)
>>> obs, reward, terminated, truncated, info = env.step(2)  # fire the main engine
>>> env.close()

Shapes: ``E`` environments stepped together, 8 observation features (9 with the time
feature), 4 actions.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from course_utils.lunar.lander import LeanLunarLander
from course_utils.runtime import positive_int

ENV_ID = "CourseLunarLander-v0"
MAX_EPISODE_STEPS = 300
REWARD_THRESHOLD = 200.0
EVAL_SEEDS = tuple(range(100_000, 100_100))
"""Seeds of the 100 evaluation episodes (never used in training, which starts from seed 0..E-1)."""

OBSERVATIONS = (
    "x position",
    "y position",
    "x velocity",
    "y velocity",
    "angle",
    "angular velocity",
    "left leg contact",
    "right leg contact",
)
ACTIONS = ("do nothing", "fire left engine", "fire main engine", "fire right engine")


def register_env() -> None:
    """Register ``CourseLunarLander-v0`` (gymnasium's LunarLander-v3, 300 steps, solved at 200; its
    class is ``lander.LeanLunarLander``, which steps the same as gymnasium's, faster)."""
    if ENV_ID not in gym.registry:
        gym.register(
            id=ENV_ID,
            # gymnasium's LunarLander with a leaner step, bit for bit the same (lunar.lander)
            entry_point="course_utils.lunar.lander:LeanLunarLander",
            max_episode_steps=MAX_EPISODE_STEPS,
            reward_threshold=REWARD_THRESHOLD,
        )


register_env()


def make_env(render_mode: str | None = None, time_feature: bool = False, **kwargs) -> gym.Env:
    """A fresh ``CourseLunarLander-v0`` (see the module docstring; ``render_mode="rgb_array"``
    to record frames of shape (400, 600, 3)).

    ``time_feature=True`` appends the elapsed fraction of the time limit (step / 300, from 0
    to 1) to the observation, which then has 9 numbers: the course's final agent sees how
    much time it has left to land.
    """
    env = gym.make(ENV_ID, render_mode=render_mode, **kwargs)
    if time_feature:
        env = gym.wrappers.TimeAwareObservation(env, flatten=True, normalize_time=True)
    return env


def make_env_for(net, render_mode: str | None = None) -> gym.Env:
    """An environment giving ``net`` the observations it was trained on (with or without time)."""
    return make_env(render_mode, time_feature=getattr(net, "time_feature", False))


VECTOR_LANDER = LeanLunarLander
"""The class ``LanderVectorEnv`` builds its environments from: gymnasium's ``LunarLander`` with
a leaner step (the same values); ``course bench lunar-experiments`` sets gymnasium's own here
to time the way before."""


class LanderVectorEnv(gym.vector.VectorEnv):
    """``num_envs`` course LunarLanders stepped together in one loop; a finished one restarts
    in the same step (gymnasium's ``AutoresetMode.SAME_STEP``).

    Same dynamics, seeding and 300-step limit as ``num_envs`` copies of ``make_env()`` in a
    ``gym.vector.SyncVectorEnv``, without the per-environment wrapper stack (API checker,
    call-order check, ``TimeLimit``) and the per-step info merging: at a fifth of the cost of a
    physics step, that overhead is what stops batching from paying off (``course bench lunar``).

    ## Action Space

    ``MultiDiscrete([4] * E)``: one action per environment, as in ``make_env()`` (0 do
    nothing, 1 left engine, 2 main engine, 3 right engine).

    ## Observation Space

    ``Box((E, 8))`` float32, one row per environment as in ``make_env()``; ``(E, 9)`` with
    ``time_feature=True``, the last column being step / 300.

    ## Rewards

    Those of ``make_env()``, as a float64 array (E,).

    ## Starting State

    ``reset(seed=...)`` starts every environment: ``seed`` is None, an int (environment i
    gets ``seed + i``) or a list of E ints. An environment that finishes restarts at once,
    continuing its own random stream (no new seed).

    ## Episode End

    Per environment, as in ``make_env()``: ``terminated[i]`` for a crash, leaving the screen
    or coming to rest; ``truncated[i]`` at step 300 (never both). On that step ``obs[i]`` is
    already the first observation of the next episode, ``info["final_obs"][i]`` the last one
    of the finished episode and ``info["_final_obs"]`` the mask of finished environments;
    ``info`` is empty on steps where none finished. The returned observation array is the
    vector env's own buffer, overwritten by the next ``step``: copy it before stepping again.

    ## Example

    >>> envs = LanderVectorEnv(4)
    >>> obs, info = envs.reset(seed=[1, 2, 3, 4])
    >>> obs.shape
    (4, 8)
    >>> obs, rewards, terminated, truncated, info = envs.step([2, 0, 0, 1])
    >>> rewards.shape, terminated.dtype
    ((4,), dtype('bool'))
    >>> envs.close()
    """

    metadata = {"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP}

    def __init__(self, num_envs: int, time_feature: bool = False):
        from gymnasium.vector.utils import batch_space

        positive_int("num_envs", num_envs)
        self.envs = [VECTOR_LANDER() for _ in range(num_envs)]
        self.num_envs = num_envs
        self.time_feature = time_feature
        space = self.envs[0].observation_space
        if time_feature:  # the layout of TimeAwareObservation(flatten=True, normalize_time=True)
            space = gym.spaces.Box(np.append(space.low, 0.0).astype(np.float32), np.append(space.high, 1.0).astype(np.float32))
        self.single_observation_space = space
        self.single_action_space = self.envs[0].action_space
        self.observation_space = batch_space(space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._obs = np.zeros((num_envs, space.shape[0]), dtype=np.float32)
        self._elapsed = [0] * num_envs

    def reset(self, *, seed=None, options=None):
        """Start a new episode everywhere; ``seed`` is None, an int (env i gets seed + i) or E ints."""
        if seed is None or isinstance(seed, int):
            seeds = [None if seed is None else seed + i for i in range(self.num_envs)]
        else:
            seeds = list(seed)
            if len(seeds) != self.num_envs:
                raise ValueError(f"Got {len(seeds)} seeds for {self.num_envs} environments: give one per environment.")
        for i, (env, s) in enumerate(zip(self.envs, seeds, strict=True)):
            self._obs[i, :8], _ = env.reset(seed=s, options=options)
            self._elapsed[i] = 0
        if self.time_feature:
            self._obs[:, 8] = 0.0
        return self._obs, {}

    def step(self, actions):
        """One step of every environment with ``actions`` (E,) ints in 0..3."""
        actions = np.asarray(actions).tolist()
        n = self.num_envs
        rewards = np.zeros(n)
        terminated = np.zeros(n, dtype=bool)
        truncated = np.zeros(n, dtype=bool)
        obs, elapsed, info = self._obs, self._elapsed, {}
        for i, env in enumerate(self.envs):
            o, rewards[i], te, _, _ = env.step(actions[i])
            t = elapsed[i] = elapsed[i] + 1
            tr = t >= MAX_EPISODE_STEPS
            if te or tr:
                if not info:
                    info = {"final_obs": np.full(n, None, dtype=object), "_final_obs": np.zeros(n, dtype=bool)}
                final = np.append(o, np.float32(t / MAX_EPISODE_STEPS)) if self.time_feature else o
                info["final_obs"][i], info["_final_obs"][i] = final, True
                terminated[i], truncated[i] = te, tr
                o, _ = env.reset()
                t = elapsed[i] = 0
            obs[i, :8] = o
            if self.time_feature:
                obs[i, 8] = t / MAX_EPISODE_STEPS
        return obs, rewards, terminated, truncated, info

    def close_extras(self, **kwargs) -> None:
        for env in self.envs:
            env.close()


def make_vector_env(num_envs: int, time_feature: bool = False) -> LanderVectorEnv:
    """``num_envs`` course LunarLanders stepped together (see ``LanderVectorEnv``)."""
    return LanderVectorEnv(num_envs, time_feature)
