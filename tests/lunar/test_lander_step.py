"""``lander_step``: the shard's landers stepped in one C call, with gymnasium's numbers."""

import shutil
import types

import numpy as np
import pytest
from gymnasium.envs.box2d.lunar_lander import LunarLander, heuristic

from course_utils.lunar import lander_step
from course_utils.lunar.lander import LeanLunarLander


@pytest.fixture
def module():
    loaded = lander_step.load()
    if loaded is None and shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip(f"no C compiler here: {lander_step.why_not}")
    assert loaded is not None, lander_step.why_not  # a machine with a compiler builds it and it agrees
    return loaded


@pytest.mark.parametrize("time_feature", [False, True])
def test_play_step_in_c_gives_gymnasiums_numbers_through_crashes_landings_and_time_limits(module, time_feature):
    """Twelve landers at a time: gymnasium's heuristic pilot (landings that come to rest, +100),
    random pilots from crashing to hovering (crashes, -100, and the step limit), each lander's
    episodes one after the other (from a seed, then going on with its generator); the C step, the Python step and gymnasium's
    own ``LunarLander`` give the same observations, rewards and ends to the last bit."""
    n, limit, d = 12, 300, 9 if time_feature else 8
    fast, slow = [LeanLunarLander() for _ in range(n)], [LeanLunarLander() for _ in range(n)]
    reference = [LunarLander() for _ in range(n)]
    rng = np.random.default_rng(0)
    ends, steps = set(), 0
    for round_ in range(4):
        # the later rounds start without a seed: each lander's generator goes on from where the
        # dispersions the C step used leave it (LeanLunarLander._settle), as gymnasium's does
        seeds = [100 * round_ + i if round_ < 2 else None for i in range(n)]
        probs = [rng.dirichlet(np.ones(4) * 0.5) for _ in range(n)]
        obs_c, obs_py = np.zeros((n, d), np.float32), np.zeros((n, d), np.float32)
        rewards_c, rewards_py = np.zeros((n, limit)), np.zeros((n, limit))
        last = []
        for i, seed in enumerate(seeds):
            obs_c[i, :8] = fast[i].reset(seed=seed)[0]
            obs_py[i, :8] = slow[i].reset(seed=seed)[0]
            last.append(reference[i].reset(seed=seed)[0])
        active, t = list(range(n)), 0
        while active:
            actions = [int(heuristic(reference[i], last[i])) if i % 3 == 0 else int(rng.choice(4, p=probs[i])) for i in active]
            t += 1
            still_c = module.play_step(fast, active, actions, t, obs_c, rewards_c, limit, time_feature)
            still_py = lander_step.python_play_step(slow, active, actions, t, obs_py, rewards_py, limit, time_feature)
            assert still_c == still_py
            for i, action in zip(active, actions, strict=True):
                last[i], reward, terminated, _, _ = reference[i].step(action)
                assert rewards_c[i, t - 1] == rewards_py[i, t - 1] == reward
                assert (i not in still_c) == (terminated or t == limit)
                if terminated:
                    ends.add(reward)
                elif t == limit:
                    ends.add("limit")
                else:
                    assert obs_c[i].tobytes() == obs_py[i].tobytes()
                    assert np.array_equal(obs_c[i, :8], last[i])
            steps += len(active)
            active = still_c
    assert steps > 5000 and {-100, 100, "limit"} <= ends


def test_a_lander_the_c_step_does_not_take_goes_to_the_python_step(module):
    """An invalid action reaches ``LeanLunarLander.step`` (gymnasium's error); a lander with no
    body (its world destroyed) is stepped by Python, whose error comes through unchanged."""
    env = LeanLunarLander()
    env.reset(seed=1)
    obs, rewards = np.zeros((1, 8), np.float32), np.zeros((1, 300))
    with pytest.raises(AssertionError, match="invalid"):
        module.play_step([env], [0], [7], 1, obs, rewards, 300, False)
    env._destroy()
    with pytest.raises(AssertionError):  # gymnasium's: assert self.lander is not None
        module.play_step([env], [0], [0], 1, obs, rewards, 300, False)


def test_play_step_refuses_arrays_of_the_wrong_kind(module):
    env = LeanLunarLander()
    env.reset(seed=1)
    with pytest.raises(ValueError, match="float32"):
        module.play_step([env], [0], [0], 1, np.zeros((1, 8)), np.zeros((1, 300)), 300, False)
    with pytest.raises(ValueError, match="one action per active environment"):
        module.play_step([env], [0], [0, 1], 1, np.zeros((1, 8), np.float32), np.zeros((1, 300)), 300, False)
    with pytest.raises(IndexError):
        module.play_step([env], [3], [0], 1, np.zeros((1, 8), np.float32), np.zeros((1, 300)), 300, False)


def test_draw_gives_torchs_actions_or_leaves_the_row_to_torch(module):
    """``draw`` decides the rows whose best ratio is clear, each as torch's floats would (flat to
    peaked policies, 1 to 8 rows, an offset into the draws), and leaves the others to torch: ties,
    scores that are not finite, log-probabilities below -80, a draw of 0."""
    rng = np.random.default_rng(3)
    decided = 0
    for n in (1, 3, 8):
        for _ in range(300):
            scores = (rng.normal(0.0, 1.0, (n, 4)) * rng.choice([0.01, 1.0, 4.0])).astype(np.float32)
            q = rng.exponential(1.0, n * 4 + 5).astype(np.float32)
            actions = module.draw(scores, q, 5)
            if actions is not None:
                decided += 1
                assert actions == lander_step.torch_draw(scores, q[5:].reshape(n, 4))
    assert decided > 800
    ones = np.ones(4, np.float32)
    assert module.draw(np.array([[5, 0, 0, 0]], np.float32), ones, 0) == [0]
    assert module.draw(np.zeros((1, 4), np.float32), ones, 0) is None  # a four-way tie
    assert module.draw(np.array([[0, 0, 0, np.nan]], np.float32), ones, 0) is None
    assert module.draw(np.array([[0, 0, 0, np.inf]], np.float32), ones, 0) is None
    assert module.draw(np.array([[0, 100, 0, 0]], np.float32), ones, 0) is None  # log-probabilities of -100
    assert module.draw(np.array([[5, 0, 0, 0]], np.float32), np.array([1, 0, 1, 1], np.float32), 0) is None
    with pytest.raises(ValueError, match="offset"):
        module.draw(np.zeros((2, 4), np.float32), ones, 0)  # 8 draws needed, 4 given
    with pytest.raises(ValueError, match="float32"):
        module.draw(np.zeros((1, 4)), ones, 0)


def test_a_module_that_draws_otherwise_is_not_used(module):
    """``check_draw`` finds a draw that picks the most probable action instead, and one that
    leaves every row to torch."""
    greedy = types.SimpleNamespace(draw=lambda scores, q, offset: scores.argmax(-1).tolist())
    assert "draw gives" in lander_step.check_draw(greedy)
    assert "decided 0 of" in lander_step.check_draw(types.SimpleNamespace(draw=lambda scores, q, offset: None))
    assert lander_step.check_draw(module) == ""


def test_a_module_that_steps_otherwise_is_not_used():
    """``check`` finds a C step that is off by one rounding in an observation, and one that reads
    another body layout; ``load`` then gives None, and every ``stepper`` the Python step."""
    real = lander_step.load()
    if real is None:
        pytest.skip(lander_step.why_not)

    def off_by_a_bit(envs, active, actions, t, obs, rewards, max_steps, time_feature):
        still = real.play_step(envs, active, actions, t, obs, rewards, max_steps, time_feature)
        obs[active[0], 3] = np.nextafter(obs[active[0], 3], np.float32(1))
        return still

    shifted = types.SimpleNamespace(play_step=off_by_a_bit, body_fields=real.body_fields)
    assert "in C" in lander_step.check(shifted)
    moved = types.SimpleNamespace(play_step=real.play_step, body_fields=lambda body: (0, *real.body_fields(body)[1:]))
    assert "b2Body fields" in lander_step.check(moved)


def test_stepper_uses_python_where_c_is_off_or_the_landers_are_not_lean(monkeypatch):
    monkeypatch.setattr(lander_step, "_module", lander_step._NOT_LOADED)
    monkeypatch.setenv("COURSE_PURE_PYTHON", "1")
    assert lander_step.load() is None and lander_step.why_not == "COURSE_PURE_PYTHON=1"
    assert lander_step.stepper([LeanLunarLander()]) is lander_step.python_play_step
    monkeypatch.setattr(lander_step, "_module", lander_step._NOT_LOADED)
    monkeypatch.delenv("COURSE_PURE_PYTHON")
    if lander_step.load() is not None:
        assert lander_step.stepper([LeanLunarLander()]) is lander_step.load().play_step
    assert lander_step.stepper([LunarLander()]) is lander_step.python_play_step
    assert lander_step.stepper([LeanLunarLander(enable_wind=True)]) is lander_step.python_play_step


def test_a_failed_build_says_why_and_leaves_the_python_step(monkeypatch, tmp_path):
    monkeypatch.setattr(lander_step, "_module", lander_step._NOT_LOADED)
    monkeypatch.setattr(lander_step, "_library_path", lambda: tmp_path / "_lander_step_x.so")
    monkeypatch.setenv("CC", "no-such-compiler")
    monkeypatch.setattr(lander_step.shutil, "which", lambda name: None)
    assert lander_step.load() is None and "no C compiler" in lander_step.why_not
    assert lander_step.stepper([LeanLunarLander()]) is lander_step.python_play_step


def test_a_new_build_replaces_the_builds_of_an_earlier_source(monkeypatch, tmp_path):
    """A build is named after its source; building a new one removes the others from the folder."""
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler here")
    suffix = lander_step.SUFFIX
    stale = tmp_path / f"_lander_step_000000000000{suffix}"
    stale.write_bytes(b"an earlier build")
    target = tmp_path / f"_lander_step_111111111111{suffix}"
    lander_step._compile(target)
    assert target.exists() and not stale.exists()
    module = lander_step._import(target)
    lander_step._configure(module)
    assert lander_step.check(module) == ""


def test_the_build_is_no_module_of_the_package_to_walk():
    """The compiled module lives in a folder that is not a package: tools that walk
    ``course_utils`` (pydoc, the student bundle's leak probe) do not meet a module they cannot import."""
    import pkgutil

    import course_utils

    if lander_step.load() is None:
        pytest.skip(f"no C build here: {lander_step.why_not}")
    assert lander_step._library_path().parent.name in ("_build", "rl-course")  # beside the source, or the cache
    names = [module.name for module in pkgutil.walk_packages(course_utils.__path__, "course_utils.")]
    assert "course_utils.lunar.lander_step" in names
    assert not [name for name in names if "_lander_step" in name or "_build" in name]
