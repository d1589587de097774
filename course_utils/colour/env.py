"""Tutorial 2's environment: pick the colour worth more of two, in two modes whose colour sets
differ (``ColourEnv``), and the same game on a given list of pairs (``FixedPairsEnv``)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from course_utils.game import check_side

COLOUR_REWARDS = {"red": 1, "yellow": 2, "green": 3, "blue": 4}
"""Fixed reward of each colour (its place in the rainbow)."""

COLOUR_RGB = {
    "red": (255, 0, 0),
    "yellow": (255, 255, 0),
    "green": (0, 128, 0),
    "blue": (0, 0, 255),
}
"""RGB values (0-255) of each colour, as the agent sees them."""

MODE_COLOURS = {1: ("red", "yellow", "green"), 2: ("red", "green", "blue")}
"""The three colours each mode draws its pairs from: mode 2 swaps yellow for blue."""

COLOURS = tuple(COLOUR_REWARDS)
MAX_REWARD = max(COLOUR_REWARDS.values())


def _check_mode(mode) -> int:
    if isinstance(mode, bool) or mode not in MODE_COLOURS:
        raise ValueError(
            f"mode must be 1 (colours {', '.join(MODE_COLOURS[1])}) or 2 (colours {', '.join(MODE_COLOURS[2])}), got {mode!r}."
        )
    return int(mode)


_check_action = check_side


class ColourEnv(gym.Env):
    """Pick the colour worth more of two shown side by side.

    Each trial shows two different colours drawn from the current mode's three; each colour has
    a fixed worth the player has to discover. Mode 1 uses red, yellow and green; mode 2 swaps
    yellow for blue, which is how the tutorial makes an agent forget.

    ## Action Space
    ``Discrete(2)``: 0 chooses the left colour, 1 the right one.

    ## Observation Space
    ``Box(0, 1, (6,), float32)``: the left colour's RGB then the right colour's RGB, scaled
    from 0-255 to [0, 1].

    ## Rewards
    The chosen colour's fixed reward: red 1, yellow 2, green 3, blue 4 (``COLOUR_REWARDS``).
    Choosing the better colour earns ``info["max_reward"]``.

    ## Starting State
    ``reset(seed=...)`` seeds the generator and draws the first pair (an ordered pair of two of
    the mode's three colours, uniformly); ``reset(options={"mode": 2})`` switches mode first.

    ## Episode End
    Never: ``terminated`` and ``truncated`` are always False; every ``step`` draws the next pair.
    The training loop decides how many trials make one gradient step (100 in the tutorial).

    ## Info
    ``reset``: ``colours`` (the first pair) and ``mode``. ``step`` describes the finished trial:
    ``colours`` (left, right), ``chosen``, ``best`` and ``max_reward``.

    ## Example
    >>> env = ColourEnv(mode=1)
    >>> obs, info = env.reset(seed=0)
    >>> obs, reward, terminated, truncated, info = env.step(1)
    >>> reward == COLOUR_REWARDS[info["chosen"]] and reward <= info["max_reward"]
    True
    """

    metadata = {"render_modes": []}

    def __init__(self, mode: int = 1):
        self.mode = _check_mode(mode)
        self.observation_space = gym.spaces.Box(0.0, 1.0, shape=(6,), dtype=np.float32)
        self.action_space = gym.spaces.Discrete(2)
        self.colours: tuple[str, str] | None = None

    def set_mode(self, mode: int) -> None:
        """Switch the colour set; takes effect from the next pair drawn."""
        self.mode = _check_mode(mode)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Start afresh. ``options={"mode": 2}`` switches mode. Returns ``(obs, info)``."""
        super().reset(seed=seed)
        if options and "mode" in options:
            self.set_mode(options["mode"])
        self._draw()
        return self.observation(), {"colours": self.colours, "mode": self.mode}

    def step(self, action):
        """Choose left (0) or right (1). Returns ``(obs, reward, terminated, truncated, info)``."""
        if self.colours is None:
            raise RuntimeError("Call env.reset() before env.step(action).")
        action = _check_action(action)
        shown = self.colours
        chosen = shown[action]
        best = max(shown, key=COLOUR_REWARDS.get)
        info = {"colours": shown, "chosen": chosen, "best": best, "max_reward": COLOUR_REWARDS[best]}
        self._draw()
        return self.observation(), float(COLOUR_REWARDS[chosen]), False, False, info

    def observation(self) -> np.ndarray:
        """The current pair as float32 (6,): left RGB, right RGB, in [0, 1]."""
        left, right = self.colours
        return np.asarray(COLOUR_RGB[left] + COLOUR_RGB[right], dtype=np.float32) / 255.0

    def _draw(self) -> None:
        palette = MODE_COLOURS[self.mode]
        i, j = self.np_random.choice(3, size=2, replace=False)
        self.colours = (palette[i], palette[j])


class FixedPairsEnv(ColourEnv):
    """A colour env that shows a given list of (left, right) pairs in order, e.g. the ones a
    player saw, so an agent can be compared with the player on the very same trials."""

    def __init__(self, pairs: list[tuple[str, str]]):
        super().__init__()
        unknown = {c for pair in pairs for c in pair} - set(COLOUR_REWARDS)
        if unknown:
            raise ValueError(f"Unknown colours {sorted(unknown)}; use {', '.join(COLOURS)}.")
        self._pairs = [tuple(pair) for pair in pairs]
        self._next = 0

    def _draw(self) -> None:
        self.colours = self._pairs[min(self._next, len(self._pairs) - 1)]
        self._next += 1
