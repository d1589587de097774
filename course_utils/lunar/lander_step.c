/* One step of many LeanLunarLanders in one call: the arithmetic of ``LeanLunarLander.step``
 * (lander.py) in C, box2d's own world step called as Python calls it; and the actions a shard
 * draws from its policy's scores (``draw``). Built and checked by lander_step.py, which explains
 * why and when they are used.
 *
 * The order of every floating-point operation is the Python step's, in doubles where Python
 * has floats and in floats where box2d has them, so every observation and reward is the same
 * to the last bit (built with -ffp-contract=off: no fused multiply-adds). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>

/* The data members of box2d 2.3's b2Body, in order (Box2D/Dynamics/b2Body.h; b2Body has no
 * virtual methods). lander_step.py compares what this reads with box2d's own accessors on a
 * real lander before the module is used. */
typedef struct { float x, y; } Vec2;
typedef struct {
    int32_t type;
    uint16_t flags;
    int32_t island_index;
    Vec2 p;                /* m_xf.p: the position */
    float q_s, q_c;        /* m_xf.q */
    Vec2 local_center, c0, c;  /* m_sweep */
    float a0, a, alpha0;
    Vec2 v;                /* m_linearVelocity */
    float w;               /* m_angularVelocity */
    Vec2 force;
    float torque;
    void *world, *prev, *next, *fixtures;
    int32_t fixture_count;
    void *joints, *contacts;
    float mass, inv_mass, inertia, inv_inertia;
    float linear_damping, angular_damping, gravity_scale, sleep_time;
    void *user_data;
} Body;

enum { DYNAMIC_BODY = 2, AWAKE_FLAG = 0x0002 };

/* set by configure(): box2d's world step and the lander's constants */
static PyObject *world_step, *step_args_tail;  /* b2World.Step, (1/FPS, 180, 60) */
static double SCALE, FPS, MAIN_POWER, SIDE_POWER, MAIN_Y, SIDE_HEIGHT, SIDE_AWAY, LEG_DOWN, HALF_W, HALF_H;
static PyObject *s_lander, *s_this, *s_world, *s_dispersion, *s_legs, *s_ground_contact, *s_helipad_y,
    *s_prev_shaping, *s_game_over, *s_np_random, *s_rng, *s_drawn, *s_next;

static Body *body_of(PyObject *lander) {
    PyObject *this = PyObject_GetAttr(lander, s_this);  /* SWIG's handle: int() of it is the address */
    if (this == NULL) return NULL;
    PyObject *address = PyNumber_Long(this);
    Py_DECREF(this);
    if (address == NULL) return NULL;
    Body *body = (Body *)PyLong_AsVoidPtr(address);
    Py_DECREF(address);
    return body;
}

/* The attribute ``name`` of ``obj`` as a truth value: 0, 1, or -1 with an exception set. */
static int attr_true(PyObject *obj, PyObject *name) {
    PyObject *value = PyObject_GetAttr(obj, name);
    if (value == NULL) return -1;
    int truth = PyObject_IsTrue(value);
    Py_DECREF(value);
    return truth;
}

static int leg_contact(PyObject *legs, Py_ssize_t k) {
    PyObject *leg = PySequence_GetItem(legs, k);
    if (leg == NULL) return -1;
    int truth = attr_true(leg, s_ground_contact);
    Py_DECREF(leg);
    return truth;
}

static double float_attr(PyObject *obj, PyObject *name) {
    PyObject *value = PyObject_GetAttr(obj, name);
    if (value == NULL) return -1.0;
    double x = PyFloat_AsDouble(value);
    Py_DECREF(value);
    return x;
}

/* LeanLunarLander._dispersion(): where the block of dispersions drawn from the env's generator
 * (gymnasium keeps it in ``_np_random``) has two numbers left, they are read here and ``_next``
 * moves on, as the method does; else the method itself (it draws the next block). 0, or -1. */
static int dispersion(PyObject *env, double *d0, double *d1) {
    PyObject *rng = PyObject_GetAttr(env, s_np_random), *mine = NULL, *drawn = NULL, *next = NULL;
    int status = -1, done = 0;
    if (rng == NULL) goto end;
    if ((mine = PyObject_GetAttr(env, s_rng)) == NULL) goto end;
    if (rng == mine && rng != Py_None) {
        if ((drawn = PyObject_GetAttr(env, s_drawn)) == NULL || (next = PyObject_GetAttr(env, s_next)) == NULL) goto end;
        Py_ssize_t i = PyLong_Check(next) ? PyLong_AsSsize_t(next) : -1;
        if (i == -1 && PyErr_Occurred()) goto end;
        if (PyList_Check(drawn) && i >= 0 && i + 1 < PyList_GET_SIZE(drawn)) {
            *d0 = PyFloat_AsDouble(PyList_GET_ITEM(drawn, i));
            *d1 = PyFloat_AsDouble(PyList_GET_ITEM(drawn, i + 1));
            if (PyErr_Occurred()) goto end;
            PyObject *moved = PyLong_FromSsize_t(i + 2);
            if (moved == NULL) goto end;
            int set = PyObject_SetAttr(env, s_next, moved);
            Py_DECREF(moved);
            if (set < 0) goto end;
            done = 1;
        }
    }
    if (!done) {
        PyObject *d = PyObject_CallMethodNoArgs(env, s_dispersion);
        if (d == NULL) goto end;
        if (!PyTuple_Check(d) || PyTuple_GET_SIZE(d) != 2) {
            Py_DECREF(d);
            PyErr_SetString(PyExc_TypeError, "_dispersion() did not return two numbers");
            goto end;
        }
        *d0 = PyFloat_AsDouble(PyTuple_GET_ITEM(d, 0));
        *d1 = PyFloat_AsDouble(PyTuple_GET_ITEM(d, 1));
        Py_DECREF(d);
        if (PyErr_Occurred()) goto end;
    }
    status = 0;
end:
    Py_XDECREF(rng);
    Py_XDECREF(mine);
    Py_XDECREF(drawn);
    Py_XDECREF(next);
    return status;
}

/* LeanLunarLander.step(action) for a lander that is awake and dynamic: 1 done (obs, reward,
 * terminated set), 0 not this case (the caller runs the Python step), -1 error. */
static int fast_step(PyObject *env, long action, double obs[8], double *reward, int *terminated) {
    PyObject *lander = PyObject_GetAttr(env, s_lander);
    if (lander == NULL) return -1;
    if (lander == Py_None) { Py_DECREF(lander); return 0; }
    Body *b = body_of(lander);
    Py_DECREF(lander);
    if (b == NULL) return PyErr_Occurred() ? -1 : 0;
    if (b->type != DYNAMIC_BODY || !(b->flags & AWAKE_FLAG)) return 0;

    double angle = b->a;
    double tip0 = sin(angle), tip1 = cos(angle);
    double side0 = -tip1, side1 = tip0;
    double d0, d1;
    if (dispersion(env, &d0, &d1) < 0) return -1;
    double m_power = 0.0, s_power = 0.0;
    double ix = 0.0, iy = 0.0, px = 0.0, py = 0.0;
    int fire = 0;
    if (action == 2) {
        m_power = 1.0;
        double ox = tip0 * (MAIN_Y / SCALE + 2 * d0) + side0 * d1;
        double oy = -tip1 * (MAIN_Y / SCALE + 2 * d0) - side1 * d1;
        ix = -ox * MAIN_POWER * m_power;
        iy = -oy * MAIN_POWER * m_power;
        px = (double)b->p.x + ox;
        py = (double)b->p.y + oy;
        fire = 1;
    } else if (action == 1 || action == 3) {
        double direction = (double)(action - 2);
        s_power = 1.0;
        double ox = tip0 * d0 + side0 * (3 * d1 + direction * SIDE_AWAY / SCALE);
        double oy = -tip1 * d0 - side1 * (3 * d1 + direction * SIDE_AWAY / SCALE);
        ix = -ox * SIDE_POWER * s_power;
        iy = -oy * SIDE_POWER * s_power;
        px = (double)b->p.x + ox - tip0 * 17 / SCALE;
        py = (double)b->p.y + oy + tip1 * SIDE_HEIGHT / SCALE;
        fire = 1;
    }
    if (fire) {  /* b2Body::ApplyLinearImpulse on an awake body, in box2d's floats */
        float fx = (float)ix, fy = (float)iy, qx = (float)px, qy = (float)py;
        b->v.x += b->inv_mass * fx;
        b->v.y += b->inv_mass * fy;
        b->w += b->inv_inertia * ((qx - b->c.x) * fy - (qy - b->c.y) * fx);
    }
    PyObject *world = PyObject_GetAttr(env, s_world);
    if (world == NULL) return -1;
    PyObject *args = PyTuple_Pack(4, world, PyTuple_GET_ITEM(step_args_tail, 0), PyTuple_GET_ITEM(step_args_tail, 1),
                                  PyTuple_GET_ITEM(step_args_tail, 2));
    Py_DECREF(world);
    if (args == NULL) return -1;
    PyObject *done = PyObject_Call(world_step, args, NULL);
    Py_DECREF(args);
    if (done == NULL) return -1;
    Py_DECREF(done);

    double helipad_y = float_attr(env, s_helipad_y);
    if (helipad_y == -1.0 && PyErr_Occurred()) return -1;
    PyObject *legs = PyObject_GetAttr(env, s_legs);
    if (legs == NULL) return -1;
    int c0 = leg_contact(legs, 0), c1 = c0 < 0 ? -1 : leg_contact(legs, 1);
    Py_DECREF(legs);
    if (c1 < 0) return -1;
    double s0 = ((double)b->p.x - HALF_W) / HALF_W;
    double s1 = ((double)b->p.y - (helipad_y + LEG_DOWN / SCALE)) / HALF_H;
    double s2 = (double)b->v.x * HALF_W / FPS;
    double s3 = (double)b->v.y * HALF_H / FPS;
    double s4 = b->a;
    double s5 = 20.0 * (double)b->w / FPS;
    double s6 = c0 ? 1.0 : 0.0, s7 = c1 ? 1.0 : 0.0;
    double shaping = -100 * sqrt(s0 * s0 + s1 * s1) - 100 * sqrt(s2 * s2 + s3 * s3) - 100 * fabs(s4) + 10 * s6 + 10 * s7;
    double r = 0.0;
    PyObject *prev = PyObject_GetAttr(env, s_prev_shaping);
    if (prev == NULL) return -1;
    if (prev != Py_None) {
        double before = PyFloat_AsDouble(prev);
        if (before == -1.0 && PyErr_Occurred()) { Py_DECREF(prev); return -1; }
        r = shaping - before;
    }
    Py_DECREF(prev);
    PyObject *now = PyFloat_FromDouble(shaping);
    if (now == NULL || PyObject_SetAttr(env, s_prev_shaping, now) < 0) { Py_XDECREF(now); return -1; }
    Py_DECREF(now);
    r -= m_power * 0.30;
    r -= s_power * 0.03;
    int game_over = attr_true(env, s_game_over);
    if (game_over < 0) return -1;
    *terminated = 0;
    if (game_over || fabs(s0) >= 1.0) { *terminated = 1; r = -100; }
    if (!(b->flags & AWAKE_FLAG)) { *terminated = 1; r = +100; }
    *reward = r;
    obs[0] = s0; obs[1] = s1; obs[2] = s2; obs[3] = s3; obs[4] = s4; obs[5] = s5; obs[6] = s6; obs[7] = s7;
    return 1;
}

/* env.step(action) in Python (any case fast_step does not take): its observation's 8 numbers,
 * reward and terminated flag. 0 done, -1 error. */
static int python_step(PyObject *env, long action, double obs[8], double *reward, int *terminated) {
    PyObject *result = PyObject_CallMethod(env, "step", "l", action);
    if (result == NULL) return -1;
    int status = -1;
    PyObject *o = NULL;
    if (!PyTuple_Check(result) || PyTuple_GET_SIZE(result) < 3) {
        PyErr_SetString(PyExc_TypeError, "env.step did not return (obs, reward, terminated, truncated, info)");
        goto done;
    }
    o = PySequence_Fast(PyTuple_GET_ITEM(result, 0), "the observation is not a sequence");
    if (o == NULL) goto done;
    if (PySequence_Fast_GET_SIZE(o) < 8) { PyErr_SetString(PyExc_ValueError, "an observation has fewer than 8 numbers"); goto done; }
    for (int k = 0; k < 8; k++) {
        obs[k] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(o, k));
        if (obs[k] == -1.0 && PyErr_Occurred()) goto done;
    }
    *reward = PyFloat_AsDouble(PyTuple_GET_ITEM(result, 1));
    if (*reward == -1.0 && PyErr_Occurred()) goto done;
    *terminated = PyObject_IsTrue(PyTuple_GET_ITEM(result, 2));
    if (*terminated < 0) goto done;
    status = 0;
done:
    Py_XDECREF(o);
    Py_DECREF(result);
    return status;
}

static PyObject *configure(PyObject *self, PyObject *args) {
    PyObject *step, *tail;
    if (!PyArg_ParseTuple(args, "OO(dddddddddd)", &step, &tail, &SCALE, &FPS, &MAIN_POWER, &SIDE_POWER, &MAIN_Y,
                          &SIDE_HEIGHT, &SIDE_AWAY, &LEG_DOWN, &HALF_W, &HALF_H))
        return NULL;
    if (!PyTuple_Check(tail) || PyTuple_GET_SIZE(tail) != 3) {
        PyErr_SetString(PyExc_TypeError, "the step's arguments after the world: (time step, velocity iterations, position iterations)");
        return NULL;
    }
    Py_XSETREF(world_step, Py_NewRef(step));
    Py_XSETREF(step_args_tail, Py_NewRef(tail));
    Py_RETURN_NONE;
}

/* body_fields(body) -> the fields this module reads, for lander_step.py to compare with box2d's
 * accessors: (type, awake, position, angle, velocity, angular velocity, world centre, inverse
 * mass, inverse inertia). */
static PyObject *body_fields(PyObject *self, PyObject *lander) {
    Body *b = body_of(lander);
    if (b == NULL) return NULL;
    return Py_BuildValue("(ii(dd)d(dd)d(dd)dd)", b->type, (b->flags & AWAKE_FLAG) != 0, (double)b->p.x, (double)b->p.y,
                         (double)b->a, (double)b->v.x, (double)b->v.y, (double)b->w, (double)b->c.x, (double)b->c.y,
                         (double)b->inv_mass, (double)b->inv_inertia);
}

/* play_step(envs, active, actions, t, obs, rewards, max_steps, time_feature) -> still
 *
 * Step ``envs[i]`` with ``actions[k]`` for each ``i = active[k]``, as Shard.play_episodes does:
 * the reward goes to ``rewards[i, t - 1]`` (float64 (n, max_steps)); an episode that goes on
 * (not terminated, ``t < max_steps``) gets its observation in ``obs[i, :8]`` (float32 (n, d)),
 * and ``t / max_steps`` in ``obs[i, 8]`` with the time feature. Returns the indices that go on. */
static PyObject *play_step(PyObject *self, PyObject *args) {
    PyObject *envs, *active, *actions, *obs_obj, *rewards_obj;
    long t, max_steps;
    int time_feature;
    if (!PyArg_ParseTuple(args, "O!O!O!lOOlp", &PyList_Type, &envs, &PyList_Type, &active, &PyList_Type, &actions, &t,
                          &obs_obj, &rewards_obj, &max_steps, &time_feature))
        return NULL;
    if (world_step == NULL) { PyErr_SetString(PyExc_RuntimeError, "configure() first"); return NULL; }
    Py_ssize_t count = PyList_GET_SIZE(active);
    if (PyList_GET_SIZE(actions) != count) { PyErr_SetString(PyExc_ValueError, "one action per active environment"); return NULL; }
    Py_buffer obs_view, rewards_view;
    if (PyObject_GetBuffer(obs_obj, &obs_view, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE | PyBUF_FORMAT) < 0) return NULL;
    if (PyObject_GetBuffer(rewards_obj, &rewards_view, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE | PyBUF_FORMAT) < 0) {
        PyBuffer_Release(&obs_view);
        return NULL;
    }
    PyObject *still = NULL;
    Py_ssize_t n = PyList_GET_SIZE(envs);
    if (obs_view.ndim != 2 || strcmp(obs_view.format, "f") != 0 || obs_view.shape[0] != n || obs_view.shape[1] < 8 + time_feature ||
        rewards_view.ndim != 2 || strcmp(rewards_view.format, "d") != 0 || rewards_view.shape[0] != n ||
        rewards_view.shape[1] != max_steps || t < 1 || t > max_steps) {
        PyErr_SetString(PyExc_ValueError, "obs must be float32 (n, d >= 8), rewards float64 (n, max_steps), 1 <= t <= max_steps");
        goto done;
    }
    float *obs = (float *)obs_view.buf;
    double *rewards = (double *)rewards_view.buf;
    Py_ssize_t d = obs_view.shape[1];
    still = PyList_New(0);
    if (still == NULL) goto done;
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *index = PyList_GET_ITEM(active, k);
        Py_ssize_t i = PyLong_AsSsize_t(index);
        long action = PyLong_AsLong(PyList_GET_ITEM(actions, k));
        if (PyErr_Occurred()) goto fail;
        if (i < 0 || i >= n) { PyErr_SetString(PyExc_IndexError, "an active index is out of range"); goto fail; }
        PyObject *env = PyList_GET_ITEM(envs, i);
        double o[8], reward;
        int terminated;
        int status = (action >= 0 && action <= 3) ? fast_step(env, action, o, &reward, &terminated) : 0;
        if (status == 0) status = python_step(env, action, o, &reward, &terminated) == 0 ? 1 : -1;
        if (status < 0) goto fail;
        rewards[i * max_steps + (t - 1)] = reward;
        if (!terminated && t < max_steps) {
            float *row = obs + i * d;
            for (int j = 0; j < 8; j++) row[j] = (float)o[j];
            if (time_feature) row[8] = (float)((double)t / (double)max_steps);
            if (PyList_Append(still, index) < 0) goto fail;
        }
    }
    goto done;
fail:
    Py_CLEAR(still);
done:
    PyBuffer_Release(&obs_view);
    PyBuffer_Release(&rewards_view);
    return still;
}

/* draw(scores, noise, offset) -> actions, or None
 *
 * The actions of Shard._draw without torch: for each row r of ``scores`` (float32 (n, A)), the
 * j maximising p[j] / q[j], where p = exp(log_softmax(scores[r])) and q[j] = noise[offset + r * A + j]
 * (float32 (m,)). torch computes p in floats; here p is computed in doubles and a row is decided only
 * where its best ratio beats every other by more than DRAW_MARGIN (relative). Where every
 * log-probability is above LOWEST_LOG_PROB, torch's float p is within about 1e-5 (relative) of the
 * exact one (lander_step.py: ``draw``), so its ratios keep the same order and it draws the same
 * action. A row closer than the margin, a log-probability below the bound, a score that is not
 * finite or a draw that is not positive: None, and the caller draws the step as torch does. */
#define DRAW_MARGIN 1e-3
#define LOWEST_LOG_PROB (-80.0)
#define MAX_ACTIONS 64
static PyObject *draw(PyObject *self, PyObject *args) {
    PyObject *scores_obj, *noise_obj;
    Py_ssize_t offset;
    if (!PyArg_ParseTuple(args, "OOn", &scores_obj, &noise_obj, &offset)) return NULL;
    Py_buffer sv, nv;
    if (PyObject_GetBuffer(scores_obj, &sv, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return NULL;
    if (PyObject_GetBuffer(noise_obj, &nv, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyBuffer_Release(&sv);
        return NULL;
    }
    PyObject *actions = NULL;
    if (sv.ndim != 2 || strcmp(sv.format, "f") != 0 || nv.ndim != 1 || strcmp(nv.format, "f") != 0 || offset < 0 ||
        offset + sv.shape[0] * sv.shape[1] > nv.shape[0]) {
        PyErr_SetString(PyExc_ValueError, "scores must be float32 (n, A), noise float32 (m,) with offset + n * A <= m");
        goto done;
    }
    Py_ssize_t n = sv.shape[0], a = sv.shape[1];
    if (a < 1 || a > MAX_ACTIONS) {
        actions = Py_NewRef(Py_None);
        goto done;
    }
    actions = PyList_New(n);
    if (actions == NULL) goto done;
    const float *scores = (const float *)sv.buf, *noise = (const float *)nv.buf + offset;
    for (Py_ssize_t r = 0; r < n; r++) {
        const float *s = scores + r * a, *q = noise + r * a;
        double e[MAX_ACTIONS], top = -INFINITY, z = 0.0;
        for (Py_ssize_t j = 0; j < a; j++) {
            if (!isfinite(s[j])) goto undecided;
            if (s[j] > top) top = s[j];
        }
        for (Py_ssize_t j = 0; j < a; j++) {
            e[j] = exp((double)s[j] - top);
            z += e[j];
        }
        double log_z = log(z), best_ratio = -1.0, second = -1.0;
        long best = -1;
        for (Py_ssize_t j = 0; j < a; j++) {
            if ((double)s[j] - top - log_z < LOWEST_LOG_PROB || !(q[j] > 0.0f) || !isfinite(q[j])) goto undecided;
            double ratio = e[j] / z / (double)q[j];
            if (ratio > best_ratio) {
                second = best_ratio;
                best_ratio = ratio;
                best = (long)j;
            } else if (ratio > second) {
                second = ratio;
            }
        }
        if (!(best_ratio > second * (1.0 + DRAW_MARGIN))) goto undecided;
        PyObject *action = PyLong_FromLong(best);
        if (action == NULL) {
            Py_CLEAR(actions);
            goto done;
        }
        PyList_SET_ITEM(actions, r, action);
    }
    goto done;
undecided:
    Py_SETREF(actions, Py_NewRef(Py_None));
done:
    PyBuffer_Release(&sv);
    PyBuffer_Release(&nv);
    return actions;
}

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS, "configure(world_step, (dt, velocity_iterations, position_iterations), constants)"},
    {"body_fields", body_fields, METH_O, "body_fields(body) -> the b2Body fields this module reads"},
    {"play_step", play_step, METH_VARARGS, "play_step(envs, active, actions, t, obs, rewards, max_steps, time_feature) -> still"},
    {"draw", draw, METH_VARARGS, "draw(scores, noise, offset) -> actions, or None where a row is too close to call"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_lander_step", NULL, -1, methods};

PyMODINIT_FUNC PyInit__lander_step(void) {
#define NAME(var, text) if ((var = PyUnicode_InternFromString(text)) == NULL) return NULL;
    NAME(s_lander, "lander") NAME(s_this, "this") NAME(s_world, "world") NAME(s_dispersion, "_dispersion")
    NAME(s_legs, "legs") NAME(s_ground_contact, "ground_contact") NAME(s_helipad_y, "helipad_y")
    NAME(s_prev_shaping, "prev_shaping") NAME(s_game_over, "game_over")
    NAME(s_np_random, "_np_random") NAME(s_rng, "_rng") NAME(s_drawn, "_drawn") NAME(s_next, "_next")
#undef NAME
    return PyModule_Create(&module);
}
