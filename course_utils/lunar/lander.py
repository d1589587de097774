"""``LeanLunarLander``: gymnasium's LunarLander with a leaner ``step`` for the course's case
(discrete actions given as Python ints, no wind, nothing drawn), which is every training and
evaluation step of tutorial 3.

Why: the physics (box2d's world step) is under half of gymnasium's ``step`` there; the rest
is Python around it: the action-space check (``Discrete.contains``, about a fifth of the
step), two separate draws of the engine dispersion, NumPy square roots of Python floats.
Tutorial 3's experiments play about 600,000 steps per run, so that overhead was a third of
their time. ``step`` here does the same arithmetic in the same order with the same random
draws, so every observation, reward and flag is bit for bit gymnasium's (a test plays both
through crashes, landings and time limits); any other case (continuous actions, wind, a
render mode, an action that is not a Python int) goes to gymnasium's own ``step``.
"""

from __future__ import annotations

import math

import Box2D
import numpy as np
from gymnasium import Env
from gymnasium.envs.box2d import lunar_lander as _ll
from gymnasium.envs.box2d.lunar_lander import LunarLander

_W, _H = _ll.VIEWPORT_W / _ll.SCALE, _ll.VIEWPORT_H / _ll.SCALE
_HALF_W, _HALF_H = _W / 2, _H / 2
_CHUNKS = 11
_CHUNK_X = [_W / (_CHUNKS - 1) * i for i in range(_CHUNKS)]


class _Definitions:
    """The box2d definitions of ``LunarLander.reset`` that are the same at every reset, with the
    values gymnasium gives them: the moon's body (with its flat bottom edge), the lander's body,
    the legs' bodies and their joints (bodies set at each reset), and one edge shape and fixture
    definition for the terrain's edges (vertices set at each reset)."""

    def __init__(self):
        scale = _ll.SCALE
        # a definition points to its shape without keeping it alive: every shape is kept here
        self.bottom = Box2D.b2EdgeShape(vertices=[(0, 0), (_W, 0)])
        self.moon = Box2D.b2BodyDef(type=Box2D.b2_staticBody, shapes=self.bottom)
        self.edge = Box2D.b2EdgeShape(vertices=[(0, 0), (1, 0)])
        self.edge_fixture = Box2D.b2FixtureDef(shape=self.edge, density=0, friction=0.1)
        self.hull = Box2D.b2PolygonShape(vertices=[(x / scale, y / scale) for x, y in _ll.LANDER_POLY])
        self.leg_box = Box2D.b2PolygonShape(box=(_ll.LEG_W / scale, _ll.LEG_H / scale))
        initial_x, initial_y = _W / 2, _H
        self.lander = Box2D.b2BodyDef(
            type=Box2D.b2_dynamicBody, position=(initial_x, initial_y), angle=0.0,
            fixtures=Box2D.b2FixtureDef(
                shape=self.hull, density=5.0, friction=0.1, categoryBits=0x0010, maskBits=0x001, restitution=0.0,
            ),
        )
        self.legs, self.joints = [], []
        for i in [-1, +1]:
            self.legs.append(Box2D.b2BodyDef(
                type=Box2D.b2_dynamicBody, position=(initial_x - i * _ll.LEG_AWAY / scale, initial_y), angle=(i * 0.05),
                fixtures=Box2D.b2FixtureDef(
                    shape=self.leg_box, density=1.0, restitution=0.0, categoryBits=0x0020, maskBits=0x001,
                ),
            ))
            joint = Box2D.b2RevoluteJointDef(
                localAnchorA=(0, 0), localAnchorB=(i * _ll.LEG_AWAY / scale, _ll.LEG_DOWN / scale),
                enableMotor=True, enableLimit=True, maxMotorTorque=_ll.LEG_SPRING_TORQUE, motorSpeed=+0.3 * i,
            )
            if i == -1:
                joint.lowerAngle = +0.9 - 0.5
                joint.upperAngle = +0.9
            else:
                joint.lowerAngle = -0.9
                joint.upperAngle = -0.9 + 0.5
            self.joints.append(joint)


DISPERSION_BLOCK = 600
"""Engine dispersions drawn at a time (``LeanLunarLander._dispersion``): two per step, so one
300-step episode's."""


class LeanLunarLander(LunarLander):
    """``LunarLander`` whose ``step`` skips the overhead around the physics (see the module)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # the dispersions drawn ahead (``_dispersion``): their generator, its state before the
        # draw, the numbers, and the next one to use
        self._rng, self._rng_state, self._drawn, self._next = None, None, [], 0
        self._defs = None  # the box2d definitions _lean_reset reuses, built at its first call

    def _dispersion(self) -> tuple[float, float]:
        """The two uniforms in [-1, 1) that gymnasium draws every step, divided by ``SCALE``: the
        same numbers, drawn ``DISPERSION_BLOCK`` at a time (a NumPy call per step cost a tenth of
        the step). The generator is then ahead of the numbers used: ``_settle`` puts it back
        where they leave it before anything else draws from it (a reset, gymnasium's ``step``)."""
        rng = self.np_random
        if rng is not self._rng or self._next >= len(self._drawn):
            self._settle()
            self._rng, self._rng_state = rng, rng.bit_generator.state
            self._drawn = (rng.uniform(-1.0, +1.0, DISPERSION_BLOCK) / _ll.SCALE).tolist()
        i = self._next
        self._next = i + 2
        return self._drawn[i], self._drawn[i + 1]

    def _settle(self) -> None:
        """Leave the generator where the dispersions used so far leave it: back to where the
        block was drawn, then the used ones drawn again."""
        if self._rng is not None and self._next < len(self._drawn):
            self._rng.bit_generator.state = self._rng_state
            self._rng.uniform(-1.0, +1.0, self._next)
        self._rng, self._drawn, self._next = None, [], 0

    def reset(self, *, seed=None, options=None):
        """gymnasium's ``reset``; a seed replaces the generator, else the episode goes on drawing
        from it where the last step left it. Without wind or rendering, ``_lean_reset`` builds the
        same world with less Python around box2d."""
        if seed is None:
            self._settle()
        else:
            self._rng, self._drawn, self._next = None, [], 0
        if self.continuous or self.enable_wind or self.render_mode is not None:
            return super().reset(seed=seed, options=options)
        return self._lean_reset(seed)

    def _lean_reset(self, seed):
        """``LunarLander.reset`` for the course's case: the same bodies, fixtures and joints created
        in the same order with the same values and the same random draws (a test compares every
        body, fixture and joint with gymnasium's, and whole episodes), so the same episode follows.
        Why: pybox2d builds each definition from keyword arguments, one Python ``setattr`` at a
        time; here the definitions that never change are built once per environment and reused
        (box2d copies what it needs from a definition), which halves a reset (231 -> 106 us measured;
        tutorial 3 resets about 50,000 landers)."""
        Env.reset(self, seed=seed)  # the generator, as gymnasium's reset seeds it
        self._destroy()
        defs = self._defs
        if defs is None:
            defs = self._defs = _Definitions()
        world = self.world = Box2D.b2World(gravity=(0, self.gravity))
        world.contactListener_keepref = _ll.ContactDetector(self)
        world.contactListener = world.contactListener_keepref
        self.game_over = False
        self.prev_shaping = None

        # the terrain: gymnasium's draws and arithmetic, line for line
        height = self.np_random.uniform(0, _H / 2, size=(_CHUNKS + 1,))
        chunk_x = _CHUNK_X
        self.helipad_x1 = chunk_x[_CHUNKS // 2 - 1]
        self.helipad_x2 = chunk_x[_CHUNKS // 2 + 1]
        self.helipad_y = _H / 4
        for i in range(_CHUNKS // 2 - 2, _CHUNKS // 2 + 3):
            height[i] = self.helipad_y
        smooth_y = [0.33 * (height[i - 1] + height[i + 0] + height[i + 1]) for i in range(_CHUNKS)]
        moon = self.moon = world.CreateBody(defs.moon)  # its flat bottom edge, friction 0.2 (box2d's default)
        self.sky_polys = []
        edge = defs.edge  # the shape of defs.edge_fixture: box2d copies it into each fixture
        for i in range(_CHUNKS - 1):
            p1 = (chunk_x[i], smooth_y[i])
            p2 = (chunk_x[i + 1], smooth_y[i + 1])
            edge.vertex1, edge.vertex2 = p1, p2
            moon.CreateFixture(defs.edge_fixture)
            self.sky_polys.append([p1, p2, (p2[0], _H), (p1[0], _H)])
        moon.color1 = (0.0, 0.0, 0.0)
        moon.color2 = (0.0, 0.0, 0.0)

        lander = self.lander = world.CreateBody(defs.lander)
        lander.color1 = (128, 102, 230)
        lander.color2 = (77, 77, 128)
        lander.ApplyForceToCenter(
            (self.np_random.uniform(-_ll.INITIAL_RANDOM, _ll.INITIAL_RANDOM),
             self.np_random.uniform(-_ll.INITIAL_RANDOM, _ll.INITIAL_RANDOM)),
            True,
        )
        self.legs = []
        for leg_def, joint in zip(defs.legs, defs.joints, strict=True):
            leg = world.CreateBody(leg_def)
            leg.ground_contact = False
            leg.color1 = (128, 102, 230)
            leg.color2 = (77, 77, 128)
            joint.bodyA, joint.bodyB = lander, leg
            joint.referenceAngle = leg.angle - lander.angle  # as b2RevoluteJointDef(bodyA=, bodyB=) sets it
            leg.joint = world.CreateJoint(joint)
            self.legs.append(leg)
        for joint in defs.joints:  # the definitions hold no body between resets
            joint.bodyA = joint.bodyB = None
        self.drawlist = [lander] + self.legs
        return self.step(0)[0], {}

    def step(self, action):
        """gymnasium's ``LunarLander.step`` for a discrete ``action`` (int 0-3) without wind or
        rendering: ``(obs (8,) float32, reward, terminated, False, {})``, the same values."""
        if type(action) is not int or self.continuous or self.enable_wind or self.render_mode is not None or self.lander is None:
            self._settle()
            return super().step(action)
        if not 0 <= action <= 3:
            raise AssertionError(f"{action!r} ({type(action)}) invalid ")  # gymnasium's own check and message
        scale = _ll.SCALE
        lander = self.lander
        angle = lander.angle
        tip0, tip1 = math.sin(angle), math.cos(angle)
        side0, side1 = -tip1, tip0
        # the same two uniforms gymnasium draws one at a time, divided by SCALE as it does
        d0, d1 = self._dispersion()
        m_power = 0.0
        if action == 2:  # main engine
            m_power = 1.0
            ox = tip0 * (_ll.MAIN_ENGINE_Y_LOCATION / scale + 2 * d0) + side0 * d1
            oy = -tip1 * (_ll.MAIN_ENGINE_Y_LOCATION / scale + 2 * d0) - side1 * d1
            pos = lander.position
            lander.ApplyLinearImpulse(
                (-ox * _ll.MAIN_ENGINE_POWER * m_power, -oy * _ll.MAIN_ENGINE_POWER * m_power), (pos[0] + ox, pos[1] + oy), True
            )
        s_power = 0.0
        if action == 1 or action == 3:  # side engines: 1 left, 3 right
            direction = action - 2
            s_power = 1.0
            ox = tip0 * d0 + side0 * (3 * d1 + direction * _ll.SIDE_ENGINE_AWAY / scale)
            oy = -tip1 * d0 - side1 * (3 * d1 + direction * _ll.SIDE_ENGINE_AWAY / scale)
            pos = lander.position
            # 17 where gymnasium has 17 (not SIDE_ENGINE_HEIGHT, 14): its orientation-dependent torque
            impulse_pos = (pos[0] + ox - tip0 * 17 / scale, pos[1] + oy + tip1 * _ll.SIDE_ENGINE_HEIGHT / scale)
            lander.ApplyLinearImpulse(
                (-ox * _ll.SIDE_ENGINE_POWER * s_power, -oy * _ll.SIDE_ENGINE_POWER * s_power), impulse_pos, True
            )
        self.world.Step(1.0 / _ll.FPS, 6 * 30, 2 * 30)
        pos, vel = lander.position, lander.linearVelocity
        s0 = (pos.x - _HALF_W) / _HALF_W
        s1 = (pos.y - (self.helipad_y + _ll.LEG_DOWN / scale)) / _HALF_H
        s2 = vel.x * _HALF_W / _ll.FPS
        s3 = vel.y * _HALF_H / _ll.FPS
        s4 = lander.angle
        s5 = 20.0 * lander.angularVelocity / _ll.FPS
        s6 = 1.0 if self.legs[0].ground_contact else 0.0
        s7 = 1.0 if self.legs[1].ground_contact else 0.0
        # math.sqrt and np.sqrt are both correctly rounded: the same shaping to the last bit
        shaping = -100 * math.sqrt(s0 * s0 + s1 * s1) - 100 * math.sqrt(s2 * s2 + s3 * s3) - 100 * abs(s4) + 10 * s6 + 10 * s7
        reward = 0
        if self.prev_shaping is not None:
            reward = shaping - self.prev_shaping
        self.prev_shaping = shaping
        reward -= m_power * 0.30
        reward -= s_power * 0.03
        terminated = False
        if self.game_over or abs(s0) >= 1.0:
            terminated, reward = True, -100
        if not lander.awake:
            terminated, reward = True, +100
        return np.array((s0, s1, s2, s3, s4, s5, s6, s7), dtype=np.float32), reward, terminated, False, {}
