"""Tutorial 1's environments: Harlow's experiment with digits, one task at a time
(``HarlowExperimentEnv``, a gymnasium env) and P tasks side by side (``VectorHarlowEnv``, NumPy),
and the win-stay lose-shift baseline that never looks at the digits."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from course_utils.game import check_side

N_ACTIONS = 2
"""Left (0) or right (1)."""

_check_action = check_side


class HarlowExperimentEnv(gym.Env):
    """Harlow's experiment with digits: two digits are shown, one of them always pays.

    ``reset`` starts a new *task* (a new problem): a rewarded and a punished digit, two
    different digits from 0-9. Every trial shows both, each on a random side; the agent has to
    find which digit pays and then follow it from side to side.

    ## Action Space
    ``Discrete(2)``: 0 chooses the left digit, 1 the right one.

    ## Observation Space
    ``Box(0, 9, (2,), float32)``: the digit on the left, the digit on the right.

    ## Rewards
    ``reward`` (+1) for the side with the rewarded digit, ``punishment`` (-1) for the other.

    ## Starting State
    The task's two digits are drawn uniformly (ordered pair of different digits) from the env's
    generator (``reset(seed=...)``); ``reset(options={"digits": (rewarded, punished)})`` fixes
    them instead. Each trial puts the rewarded digit left or right with probability 1/2.

    ## Episode End
    Never: ``terminated`` and ``truncated`` are always False. A task lasts as long as the caller
    plays it (6 trials per gradient step and 20 evaluation trials in the tutorial); the next
    ``reset`` starts the next task.

    ## Info
    ``reset``: ``rewarded_digit``, ``punished_digit``; ``step`` adds ``correct`` (bool) and
    ``rewarded_side`` (where the rewarded digit was for the finished trial).

    ## Example
    >>> env = HarlowExperimentEnv()
    >>> obs, info = env.reset(seed=0, options={"digits": (3, 7)})
    >>> obs, reward, terminated, truncated, info = env.step(0)
    >>> reward == (1.0 if info["rewarded_side"] == 0 else -1.0), terminated, truncated
    (True, False, False)
    """

    metadata = {"render_modes": []}

    def __init__(self, reward: float = 1.0, punishment: float = -1.0):
        self.reward = float(reward)
        self.punishment = float(punishment)
        self.observation_space = gym.spaces.Box(0.0, 9.0, shape=(2,), dtype=np.float32)
        self.action_space = gym.spaces.Discrete(2)
        self.rewarded_digit: int | None = None
        self.punished_digit: int | None = None
        self.rewarded_side = 0

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Start a new task. Returns ``(obs, info)``."""
        super().reset(seed=seed)
        if options and "digits" in options:
            rewarded, punished = (int(d) for d in options["digits"])
            if not (0 <= rewarded <= 9 and 0 <= punished <= 9) or rewarded == punished:
                raise ValueError(f"digits must be two different digits 0-9, got {options['digits']!r}.")
        else:
            rewarded, punished = (int(d) for d in self.np_random.choice(10, size=2, replace=False))
        self.rewarded_digit, self.punished_digit = rewarded, punished
        self._place()
        return self.observation(), self._info()

    def step(self, action):
        """Choose left (0) or right (1). Returns ``(obs, reward, terminated, truncated, info)``."""
        if self.rewarded_digit is None:
            raise RuntimeError("Call env.reset() before env.step(action): it draws the two digits of a task.")
        action = _check_action(action)
        correct = action == self.rewarded_side
        info = {**self._info(), "correct": correct, "rewarded_side": self.rewarded_side}
        self._place()
        return self.observation(), self.reward if correct else self.punishment, False, False, info

    def observation(self) -> np.ndarray:
        """The digits shown as float32 (2,): left, right."""
        pair = (self.rewarded_digit, self.punished_digit)
        return np.asarray(pair if self.rewarded_side == 0 else pair[::-1], dtype=np.float32)

    def _place(self) -> None:
        self.rewarded_side = int(self.np_random.random() < 0.5)

    def _info(self) -> dict:
        return {"rewarded_digit": self.rewarded_digit, "punished_digit": self.punished_digit}


def run_dummy_agent(env: HarlowExperimentEnv, num_trials: int = 100, seed: int | None = None) -> list[float]:
    """Win-stay lose-shift on sides: keep the side that just paid, switch after a -1.

    It never looks at the digits. Starts on the left. Returns the cumulative reward before
    the first trial (0) and after each trial: a list of ``num_trials + 1`` numbers.
    """
    env.reset(seed=seed)
    action, total, totals = 0, 0.0, [0.0]
    for _ in range(num_trials):
        _, reward, _, _, _ = env.step(action)
        total += reward
        totals.append(total)
        if reward < 0:
            action = 1 - action
    return totals


class VectorHarlowEnv:
    """P Harlow tasks side by side, in NumPy (the batched evolution's environment).

    Not a gymnasium env (no spaces, no ``info``): a bare array version of
    ``HarlowExperimentEnv`` for the P (individual, task) pairs of a generation.

    Action: int array (P,), 0 left and 1 right. Observation (``observation()``): float32
    (P, 2), left and right digits. Reward (``step(actions)``): float32 (P,) of +1 (rewarded
    digit chosen) or -1, with a bool array (P,) ``correct``; then every task redraws its sides.
    Start: ``reset()`` draws a new pair of different digits for every task (uniform over the 90
    ordered pairs) from ``rng``, or takes the given (rewarded, punished) arrays. End: never; the
    caller decides how many trials a task lasts.
    """

    def __init__(self, num_envs: int, rng: np.random.Generator, digits: tuple[np.ndarray, np.ndarray] | None = None):
        self.num_envs, self.rng = num_envs, rng
        self.reset(digits)

    def reset(self, digits: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
        """New tasks: random pairs of different digits, or the given (rewarded, punished) arrays (P,)."""
        if digits is None:
            self.rewarded = self.rng.integers(0, 10, self.num_envs)
            self.punished = (self.rewarded + self.rng.integers(1, 10, self.num_envs)) % 10  # uniform over the other 9
        else:
            self.rewarded, self.punished = (np.asarray(d, dtype=np.int64).reshape(self.num_envs) for d in digits)
            if np.any(self.rewarded == self.punished):
                raise ValueError("each task needs two different digits.")
        self._place()
        return self.observation()

    def _place(self) -> None:
        self.rewarded_side = (self.rng.random(self.num_envs) < 0.5).astype(np.int64)

    def observation(self) -> np.ndarray:
        left = np.where(self.rewarded_side == 0, self.rewarded, self.punished)
        right = np.where(self.rewarded_side == 0, self.punished, self.rewarded)
        return np.stack([left, right], axis=1).astype(np.float32)

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        correct = np.asarray(actions) == self.rewarded_side
        self._place()
        return np.where(correct, 1.0, -1.0).astype(np.float32), correct
