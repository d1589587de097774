"""One step of all of a shard's landers in one C call (``lander_step.c``), with the numbers of
``LeanLunarLander.step`` to the last bit.

Why: in a tutorial-3 run (about 650,000 lander steps) box2d's world step is about 17 us a step,
and the Python around it (the lean step's arithmetic and its calls to box2d's accessors, the
shard's loop over its landers) was about 15 us more. ``play_step`` does that arithmetic in C,
reading the lander's body from box2d's memory, and calls box2d's world step as Python does
(its contact listener, gymnasium's Python class, runs as before).

The actions: ``draw`` picks each lander's action from its policy's scores as ``Shard._draw``
does, without torch's per-call work (about 20 us a step of a shard, a tenth of a run). torch draws
``argmax_j p_j / q_j``, with ``p = exp(log_softmax(scores))`` computed in floats and ``q`` the
shard's exponential draws. Where every log-probability is above -80, each of torch's few float
operations (the difference to the largest score, the log of a sum of exponentials, the
exponential) is correctly rounded or within an ulp or two, so its ``p_j`` is within about
``(|log p_j| + 4) * 1.2e-7 <= 1e-5`` of the exact value (relative), and the division adds 6e-8.
``draw`` computes the exact ``p`` in doubles and decides a row only where its best ratio beats
every other by more than 1e-3, a hundred times those errors: torch's floats keep that order and
draw the same action. Any other row (a near tie, one in several hundred; a very peaked policy; a
score that is not finite) makes it return None, and the shard draws that step with torch.

How: ``load()`` compiles ``lander_step.c`` the first time with the machine's C compiler (``cc``,
or ``$CC``) into ``_build`` beside it, or the user's cache where this folder is read-only (``make
install`` builds it), and checks it before anyone uses it: the body fields it reads against
box2d's own accessors, then a few hundred steps through crashes against ``LeanLunarLander.step``,
bit for bit, and its draws against torch's. Where anything of that fails (no compiler, another box2d, another platform) it
returns None and the shards step in Python: the same numbers, slower. ``COURSE_PURE_PYTHON=1``
asks for that.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import numpy as np

SOURCE = Path(__file__).with_name("lander_step.c")
SUFFIX = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
"""The file ending of this Python's extension modules (``.cpython-311-x86_64-linux-gnu.so``)."""
_NOT_LOADED = object()
_module = _NOT_LOADED
why_not = ""
"""Why ``load()`` returned None (empty while it has not, or when it loaded)."""


BUILD = SOURCE.with_name("_build")
"""The folder beside this module that the compiled module goes in: not a package (no
``__init__.py``), so ``pkgutil.walk_packages`` over ``course_utils`` does not list the build as a
module (it cannot be imported by its file's name, whose suffix its init function does not carry)."""


def _library_path() -> Path:
    """Where the compiled module goes: named after the source and this Python, so an edit or
    another interpreter builds its own."""
    key = hashlib.sha256(SOURCE.read_bytes() + sys.version.encode() + sys.platform.encode()).hexdigest()[:12]
    name = f"_lander_step_{key}{SUFFIX}"
    here = BUILD / name
    if here.exists() or os.access(BUILD if BUILD.exists() else SOURCE.parent, os.W_OK):
        return here
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rl-course"
    return cache / name


def _compile(target: Path) -> None:
    """Compile ``SOURCE`` into ``target`` (written whole or not at all: several processes may build it at once)."""
    compiler = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if compiler is None:
        raise RuntimeError("no C compiler (cc or $CC) on this machine")
    target.parent.mkdir(parents=True, exist_ok=True)
    # -ffp-contract=off: no fused multiply-adds, so each product is rounded as in Python and box2d
    flags = ["-O2", "-fPIC", "-shared", "-ffp-contract=off", "-fno-fast-math", f"-I{sysconfig.get_paths()['include']}"]
    if sys.platform == "darwin":
        flags += ["-undefined", "dynamic_lookup"]
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        built = Path(tmp) / target.name
        result = subprocess.run([compiler, *flags, str(SOURCE), "-o", str(built), "-lm"], capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(f"{Path(compiler).name} failed: {result.stderr.strip()[-500:]}")
        os.replace(built, target)
    # builds of an earlier lander_step.c (a process still using one keeps its copy), and those an
    # earlier version of the course put beside the source
    for old in [*target.parent.glob(f"_lander_step_*{SUFFIX}"), *SOURCE.parent.glob(f"_lander_step_*{SUFFIX}")]:
        if old != target:
            try:
                old.unlink(missing_ok=True)
            except OSError:  # a read-only install: leave it
                pass


def _import(path: Path):
    loader = importlib.machinery.ExtensionFileLoader("course_utils.lunar._lander_step", str(path))
    spec = importlib.util.spec_from_file_location("course_utils.lunar._lander_step", path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def _configure(module) -> None:
    import Box2D
    from gymnasium.envs.box2d import lunar_lander as ll

    from course_utils.lunar.lander import _HALF_H, _HALF_W

    module.configure(Box2D.b2World.Step, (1.0 / ll.FPS, 6 * 30, 2 * 30),
                     (ll.SCALE, ll.FPS, ll.MAIN_ENGINE_POWER, ll.SIDE_ENGINE_POWER, ll.MAIN_ENGINE_Y_LOCATION,
                      ll.SIDE_ENGINE_HEIGHT, ll.SIDE_ENGINE_AWAY, ll.LEG_DOWN, _HALF_W, _HALF_H))


def check(module, steps: int = 400) -> str:
    """Why ``module`` does not step as ``LeanLunarLander.step`` does, or draw as torch does, or ""
    when it does both: its body fields against box2d's accessors, then ``steps`` steps of random
    actions (seeded; crashes and new episodes included) through ``play_step`` and through
    ``step``, compared bit for bit; then ``check_draw``."""
    from course_utils.lunar.lander import LeanLunarLander

    fast, slow = LeanLunarLander(), LeanLunarLander()
    try:
        fast.reset(seed=7)
        slow.reset(seed=7)
        body = slow.lander
        kind, awake, position, angle, velocity, spin, centre, inv_mass, _ = module.body_fields(body)
        seen = (kind, awake, position, angle, velocity, spin, centre, inv_mass)
        expected = (int(body.type), bool(body.awake), tuple(body.position), body.angle, tuple(body.linearVelocity),
                    body.angularVelocity, tuple(body.worldCenter), float(np.float32(1) / np.float32(body.mass)))
        if seen != expected:
            return f"the b2Body fields read {seen}, box2d says {expected}"
        rng = np.random.default_rng(0)
        obs = np.zeros((1, 8), dtype=np.float32)
        rewards = np.zeros((1, steps + 1), dtype=np.float64)
        episode, t = 7, 0
        for step in range(steps):
            action = int(rng.choice(4, p=[0.2, 0.2, 0.4, 0.2]))
            t += 1
            still = module.play_step([fast], [0], [action], step + 1, obs, rewards, steps + 1, False)
            o, reward, terminated, _, _ = slow.step(action)
            if rewards[0, step] != reward or bool(still) == terminated or (still and obs[0].tobytes() != o.tobytes()):
                return f"step {t} of an episode: ({obs[0]}, {rewards[0, step]}) in C, ({o}, {reward}) in Python"
            if terminated or t == 200:
                episode, t = episode + 1, 0
                fast.reset(seed=episode)
                slow.reset(seed=episode)
        return check_draw(module)
    finally:
        fast.close()
        slow.close()


def torch_draw(scores: np.ndarray, q: np.ndarray) -> list[int]:
    """The actions ``Shard._draw`` draws for ``scores`` (n, A) float32 with the exponential draws
    ``q`` (n, A): ``argmax(exp(log_softmax(scores)) / q)`` in torch's floats."""
    import torch

    probs = torch.log_softmax(torch.from_numpy(scores), -1).exp().numpy()
    return (probs / q).argmax(-1).tolist()


def check_draw(module, rows: int = 4000) -> str:
    """Why ``module.draw`` does not draw as torch does, or "" when it does: ``rows`` rows of random
    scores (seeded; from flat to very peaked policies, and ties), each drawn alone by ``draw`` and
    compared with ``torch_draw``'s action for it; the rows ``draw`` leaves to torch (None) are not
    compared, and it must decide at least half of them."""
    rng = np.random.default_rng(1)
    scales = rng.choice([0.01, 1.0, 5.0, 30.0], size=(rows, 1))
    scores = (rng.normal(0.0, 1.0, (rows, 4)) * scales).astype(np.float32)
    scores[::50, 1] = scores[::50, 0]  # ties
    q = rng.exponential(1.0, (rows, 4)).astype(np.float32)
    expected, decided = torch_draw(scores, q), 0
    for r in range(rows):
        actions = module.draw(scores[r:r + 1], q[r], 0)
        if actions is not None:
            decided += 1
            if actions != expected[r:r + 1]:
                return f"draw gives {actions} for scores {scores[r]} and draws {q[r]}, torch {expected[r]}"
    if decided < rows // 2:
        return f"draw decided {decided} of {rows} rows"
    return ""


def usable(envs) -> bool:
    """Whether ``play_step`` steps ``envs`` as their own ``step`` would: every one a
    ``LeanLunarLander`` with its lean step (discrete actions, no wind, nothing drawn)."""
    from course_utils.lunar.lander import LeanLunarLander

    return all(isinstance(env, LeanLunarLander) and type(env).step is LeanLunarLander.step and not env.continuous
               and not env.enable_wind and env.render_mode is None for env in envs)


def python_play_step(envs, active, actions, t, obs, rewards, max_steps, time_feature) -> list[int]:
    """``play_step`` in Python: step ``envs[i]`` with ``actions[k]`` for each ``i = active[k]``
    (lists), the reward in ``rewards[i, t - 1]`` (float64 (n, max_steps)), and for an episode that
    goes on (not terminated, ``t < max_steps``) its observation in ``obs[i, :8]`` (float32 (n, d))
    and, with ``time_feature``, ``t / max_steps`` in ``obs[i, 8]``. Returns the indices that go on."""
    still = []
    for i, action in zip(active, actions, strict=True):
        o, rewards[i, t - 1], terminated, _, _ = envs[i].step(action)
        if not terminated and t < max_steps:
            obs[i, :8] = o
            if time_feature:
                obs[i, 8] = t / max_steps
            still.append(i)
    return still


def stepper(envs):
    """The ``play_step`` for ``envs``: the C one where it is built, checked and ``usable``, else
    ``python_play_step``. Both give the same numbers."""
    module = load()
    return module.play_step if module is not None and usable(envs) else python_play_step


def drawer():
    """The C ``draw`` (see the module's docstring) where the module is built and checked, else None."""
    module = load()
    return None if module is None else module.draw


def load():
    """The checked C module, or None where it cannot be built or does not agree (``why_not``
    says why). Built and checked once per process."""
    global _module, why_not
    if _module is not _NOT_LOADED:
        return _module
    _module, why_not = None, ""
    if os.environ.get("COURSE_PURE_PYTHON") == "1":
        why_not = "COURSE_PURE_PYTHON=1"
        return None
    try:
        path = _library_path()
        if not path.exists():
            _compile(path)
        module = _import(path)
        _configure(module)
        why_not = check(module)
    except Exception as error:  # noqa: BLE001 - any failure means the Python step, which gives the same numbers
        why_not = f"{type(error).__name__}: {error}"
        return None
    if not why_not:
        _module = module
    return _module
