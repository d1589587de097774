"""Tutorial 3's environment: the registered course LunarLander, the time feature and the lean vector env."""

import gymnasium as gym
import numpy as np
import pytest

from course_admin.lunar.aac import ActorCriticNet
from course_utils.lunar.env import ACTIONS, ENV_ID, OBSERVATIONS, make_env, make_env_for, make_vector_env


def test_env_registered_with_course_limits():
    spec = gym.spec(ENV_ID)
    assert ENV_ID == "CourseLunarLander-v0"
    assert spec.max_episode_steps == 300 and spec.reward_threshold == 200
    env = make_env()
    obs, _ = env.reset(seed=0)
    assert obs.shape == (8,) and env.action_space.n == 4 == len(ACTIONS) and len(OBSERVATIONS) == 8
    steps = 0
    while True:  # hovering with the main engine lasts until the time limit or a crash
        _, _, terminated, truncated, _ = env.step(2 if steps % 2 else 0)
        steps += 1
        if terminated or truncated:
            break
    assert steps <= 300
    env.close()


def test_time_feature_appends_the_elapsed_fraction_of_the_limit():
    env = make_env(time_feature=True)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (9,) and obs[8] == 0
    for _ in range(3):
        obs, *_ = env.step(0)
    assert obs[8] == pytest.approx(3 / 300)
    net = ActorCriticNet(time_feature=True)
    assert make_env_for(net).observation_space.shape == (9,)
    assert make_env_for(ActorCriticNet()).observation_space.shape == (8,)


def test_make_vector_env_rejects_bad_sizes():
    with pytest.raises(ValueError, match="positive integer"):
        make_vector_env(0)


@pytest.mark.parametrize("time_feature", [False, True])
def test_vector_env_matches_gymnasium_sync_vector_env_through_resets_and_time_limits(time_feature):
    """The lean vector env gives exactly what gymnasium's SyncVectorEnv over ``make_env()``
    gives (same-step autoreset): observations, rewards, flags and final observations, across
    crashes, landings and 300-step truncations."""
    n = 4
    lean = make_vector_env(n, time_feature)
    sync = gym.vector.SyncVectorEnv(
        [lambda: make_env(time_feature=time_feature) for _ in range(n)], autoreset_mode=gym.vector.AutoresetMode.SAME_STEP
    )
    assert lean.single_observation_space.shape == sync.single_observation_space.shape == (8 + time_feature,)
    obs_a, _ = lean.reset(seed=[20, 10, 12, 13])
    obs_b, _ = sync.reset(seed=[20, 10, 12, 13])
    assert np.array_equal(obs_a, obs_b)
    rng = np.random.default_rng(0)
    seen = {"terminated": 0, "truncated": 0}
    for _ in range(700):
        actions = rng.integers(0, 4, n)
        actions[:2] = 2  # main engine only: from seeds 20 and 10 the lander climbs until the time limit
        a = lean.step(actions)
        b = sync.step(actions)
        for x, y in zip(a[:4], b[:4], strict=True):
            assert np.array_equal(x, y)
        done = a[2] | a[3]
        assert np.array_equal(a[4].get("_final_obs", np.zeros(n, bool)), done)
        for i in np.flatnonzero(done):
            assert np.array_equal(a[4]["final_obs"][i], b[4]["final_obs"][i])
        seen["terminated"] += int(a[2].sum())
        seen["truncated"] += int(a[3].sum())
    assert seen["terminated"] > 5 and seen["truncated"] >= 2  # seed 10 is both at step 300
    lean.close()
    sync.close()


def test_vector_env_rejects_a_wrong_number_of_seeds():
    envs = make_vector_env(2)
    with pytest.raises(ValueError, match="one per environment"):
        envs.reset(seed=[1, 2, 3])


def test_the_lean_step_is_gymnasiums_to_the_last_bit():
    """``LeanLunarLander.step`` (every step of the course's training and evaluation) gives exactly
    gymnasium's observations, rewards and flags, on each action, through crashes, landings and
    long episodes; actions it does not take itself (a NumPy int, an invalid one) go to gymnasium."""
    from gymnasium.envs.box2d.lunar_lander import LunarLander, heuristic

    from course_utils.lunar.lander import LeanLunarLander

    ours, theirs = LeanLunarLander(), LunarLander()
    rng = np.random.default_rng(0)
    ends, steps = set(), 0
    for episode in range(30):
        obs_a, _ = ours.reset(seed=episode)
        obs_b, _ = theirs.reset(seed=episode)
        assert np.array_equal(obs_a, obs_b)
        probs = rng.dirichlet(np.ones(4) * 0.5)  # from crashing to hovering policies, and gymnasium's lander
        for _ in range(400):
            action = int(heuristic(theirs, obs_b)) if episode % 3 == 0 else int(rng.choice(4, p=probs))
            a, b = ours.step(action), theirs.step(action)
            obs_b, steps = b[0], steps + 1
            assert np.array_equal(a[0], b[0]) and a[0].dtype == b[0].dtype == np.float32
            assert a[1] == b[1] and a[2] == b[2] and a[3] is b[3] is False
            if a[2]:
                ends.add(a[1])
                break
    assert steps > 3000 and {-100, 100} <= ends  # crashes and landings both played
    ours.reset(seed=0)
    theirs.reset(seed=0)
    assert np.array_equal(ours.step(np.int64(2))[0], theirs.step(np.int64(2))[0])
    with pytest.raises(AssertionError, match="invalid"):
        ours.step(7)


def _world(env) -> dict:
    """Everything box2d holds of a LunarLander's world after a reset, and what the env keeps about it."""

    def shape(s):
        vertices = [tuple(v) for v in s.vertices] if hasattr(s, "vertices") else []
        return type(s).__name__, s.radius, vertices, getattr(s, "hasVertex0", None), getattr(s, "hasVertex3", None)

    def body(b):
        fixtures = [(shape(f.shape), f.friction, f.density, f.restitution, f.sensor, f.filterData.categoryBits,
                     f.filterData.maskBits, f.filterData.groupIndex) for f in b.fixtures]
        return (b.type, tuple(b.position), b.angle, tuple(b.linearVelocity), b.angularVelocity, b.mass, b.inertia,
                tuple(b.localCenter), b.linearDamping, b.angularDamping, b.awake, b.bullet, b.fixedRotation,
                b.sleepingAllowed, fixtures, getattr(b, "color1", None), getattr(b, "color2", None),
                getattr(b, "ground_contact", None))

    joints = [(type(j).__name__, tuple(j.GetLocalAnchorA()), tuple(j.GetLocalAnchorB()), j.GetReferenceAngle(),
               tuple(j.anchorA), tuple(j.anchorB), j.angle, j.limitEnabled, j.limits, j.motorEnabled, j.motorSpeed,
               j.GetMaxMotorTorque(), j.collideConnected, j.bodyA == env.lander, [j.bodyB == leg for leg in env.legs])
              for j in env.world.joints]
    return {
        "bodies": [body(b) for b in env.world.bodies], "joints": joints, "gravity": tuple(env.world.gravity),
        "sky": env.sky_polys, "helipad": (env.helipad_x1, env.helipad_x2, env.helipad_y),
        "drawlist": [env.drawlist[0] == env.lander] + [a == b for a, b in zip(env.drawlist[1:], env.legs, strict=True)],
        "listener": type(env.world.contactListener).__name__, "game_over": env.game_over,
        "shaping": env.prev_shaping, "generator": env.np_random.bit_generator.state,
    }


def test_the_lean_reset_builds_gymnasiums_world():
    """``LeanLunarLander.reset`` reuses box2d definitions across resets: after each reset (seeded,
    or going on with the generator) the world holds the same bodies, fixtures, shapes and joints
    as gymnasium's, with the same values to the last bit, and so do the env's own records."""
    from gymnasium.envs.box2d.lunar_lander import LunarLander

    from course_utils.lunar.lander import LeanLunarLander

    ours, theirs = LeanLunarLander(), LunarLander()
    for seed in [0, 1, 2, None, None, 12345, None]:
        obs_a, _ = ours.reset(seed=seed)
        obs_b, _ = theirs.reset(seed=seed)
        assert np.array_equal(obs_a, obs_b)
        ours._settle()  # the dispersions drawn ahead: the generator as gymnasium leaves it
        assert _world(ours) == _world(theirs)
        for _ in range(30):  # a few steps, so the next reset starts from a world that moved
            ours.step(2), theirs.step(2)


@pytest.mark.parametrize("kwargs", [{"continuous": True}, {"enable_wind": True}, {"render_mode": "rgb_array"}])
def test_the_lean_reset_leaves_other_cases_to_gymnasium(kwargs, monkeypatch):
    from course_utils.lunar.lander import LeanLunarLander

    env = LeanLunarLander(**kwargs)
    monkeypatch.setattr(env, "_lean_reset", lambda seed: pytest.fail("the lean reset took a case it does not cover"))
    obs, _ = env.reset(seed=0)
    assert obs.shape == (8,)
    env.close()


def test_the_lean_step_draws_gymnasiums_random_numbers_across_unseeded_resets_and_its_own_steps():
    """``LeanLunarLander`` draws the engine dispersions ahead, a block at a time: episodes that
    start without a seed (going on with the generator), steps handed to gymnasium's own ``step``
    (a NumPy int) in the middle of a block, and episodes longer than a block all see gymnasium's
    numbers, to the last bit."""
    from gymnasium.envs.box2d.lunar_lander import LunarLander

    from course_utils.lunar.lander import DISPERSION_BLOCK, LeanLunarLander

    ours, theirs = LeanLunarLander(), LunarLander()
    assert np.array_equal(ours.reset(seed=3)[0], theirs.reset(seed=3)[0])
    rng = np.random.default_rng(1)
    steps, resets = 0, 0
    while resets < 12 or steps < 2 * DISPERSION_BLOCK:
        action = int(rng.choice(4, p=[0.1, 0.1, 0.7, 0.1]))
        given = np.int64(action) if rng.random() < 0.02 else action
        a, b = ours.step(given), theirs.step(given)
        steps += 1
        assert np.array_equal(a[0], b[0]) and a[1] == b[1] and a[2] == b[2]
        if a[2] or steps % 700 == 0:  # ended, or a long hover: a new episode from the same generator
            assert np.array_equal(ours.reset()[0], theirs.reset()[0])
            resets += 1
    ours._settle()  # the generator where the numbers used leave it: gymnasium's
    assert ours.np_random.bit_generator.state == theirs.np_random.bit_generator.state
    assert type(make_env().unwrapped) is LeanLunarLander and type(make_vector_env(1).envs[0]) is LeanLunarLander
