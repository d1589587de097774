"""Exercise checks of tutorial 3 (policy gradients on LunarLander), exercises 1-2: the policy
network and the agent (its action distribution and its step).

Each exercise is an ``Exercise`` (see ``course_utils.checking``): ``drive`` runs the student's
answer on a list of cases (public ones in the check cell, hidden ones when graded) and records
what came back as plain data; ``judge`` compares that record with the course's own answer's
record on the same cases, or with what it computes from the cases, and raises ``Problem`` with
a hint.

Every check tests one piece in isolation: where a piece needs others (an agent needs a
network), the check supplies its own stand-ins (``standins``: fixed-score networks, a toy
environment of any size), so a student who skipped an early exercise still gets credit for the
later ones. Nothing here uses the reference solutions (``course_admin.lunar.solutions``), which
students do not get.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from course_utils import facts, records
from course_utils.check_helpers import (
    as_number,
    attribute,
    close,
    flag,
    is_error,
    method,
    numbers,
    safely,
    shown,
    tensor_of,
    truth,
)
from course_utils.checking import Exercise, Problem, attempt, check_length, fmt, raise_if_error
from course_utils.lunar.checks.standins import (
    AFFINE_HINT,
    _FixedScores,
    _linear_net,
    _preferring,
    affine_probe,
    affine_residual,
    build_hp,
    hidden_of,
    layers_problem,
    make_case_env,
    mlp_weight_shapes,
    weight_shapes,
)
from course_utils.records import encode
from course_utils.runtime import seed_torch


def _env_name(case: dict) -> str:
    return "env" if case["env"] == "lunar" else f"env with {case['n_obs']} observations, {case['n_actions']} actions"


def _floats(what: str, value) -> np.ndarray:
    """A decoded value as a flat float32 array, or a ``Problem``."""
    return numbers(value, what, np.float32).reshape(-1)


def experience_record(exp, fields=("state", "action", "reward", "is_done")):
    """An ``Experience``'s fields as they came back, or an error saying it is no ``Experience``."""
    if is_error(exp):
        return exp
    if not (isinstance(exp, tuple) and all(hasattr(exp, field) for field in fields)):
        return records.error(f"step() should return an Experience(state, action, reward, is_done), got {_short(exp)}.")
    return {field: getattr(exp, field) for field in fields}


def _short(value) -> str:
    """A value straight from student code, quoted (its type when its repr fails)."""
    try:
        return f"{value!r:.200}"
    except Exception:
        return f"a {type(value).__name__}"


# ---------------------------------------------------------------------------------------------
# 1. PolicyNet


def _net_cases() -> list[dict]:
    """The environment to build for (LunarLander or a toy one of other sizes), the seed, the batch of
    observations and the ``hidden_layers`` handed to ``build_for_env`` (absent: its default)."""
    return [
        {"env": "lunar", "n_obs": 8, "n_actions": 4, "seed": 0, "batch": 5},
        {"env": "toy", "n_obs": 3, "n_actions": 2, "seed": 1, "batch": 7, "hidden": [6]},
        {"env": "lunar", "n_obs": 8, "n_actions": 4, "seed": 2, "batch": 3, "hidden": [16, 12, 10]},
    ]


def _drive_net(cases, PolicyNet) -> list[dict]:
    out = []
    for case in cases:
        env = make_case_env(case)
        seed_torch(case["seed"])
        hp = build_hp(case)
        given = f", hidden_layers={hp['hidden_layers']}" if hp else ""
        net = method(f"PolicyNet.build_for_env({_env_name(case)}{given})", PolicyNet, "build_for_env", env, **hp)
        env.close()
        seen = {"net": net if is_error(net) else None, "module": facts.is_instance(net, nn.Module), "kind": type(net).__name__}
        if seen["net"] is None and seen["module"]:
            # The parameters the module really holds (``facts``): a parameters() the answer
            # overrides could hand out a tensor with a gradient of its own making.
            params = facts.parameters(net)
            seen["n_params"] = len(params)
            seen["shapes"] = attempt("the shapes of the network's weights", weight_shapes, net)
            x = torch.randn(case["batch"], case["n_obs"])
            probe = attempt("net(x)", net, affine_probe(x))
            seen["probe"] = encode(probe.detach()) if type(probe) is torch.Tensor else probe if is_error(probe) else None
            scores = attempt("net(x)", net, x)
            seen["scores"], seen["grad"] = scores, False
            if type(scores) is torch.Tensor and seen["n_params"]:
                backward = attempt("the backward pass", facts.sum_backward, scores)
                seen["grad"] = not is_error(backward) and any(size for size in map(facts.grad_size, params))
        out.append(seen)
    return out


def _judge_net(got, expected, cases) -> None:
    for case, mine in zip(cases, got, strict=True):
        raise_if_error(mine["net"])
        if mine["module"] is not True:
            raise Problem(f"build_for_env should return a PolicyNet (an nn.Module), got {mine['kind']}.")
        if not mine["n_params"]:
            raise Problem("your network has no parameters to learn. Build layers (nn.Linear, ...) in __init__.")
        shape = (case["batch"], case["n_actions"])
        if case["env"] == "lunar":
            what = f"the output for a batch of {case['batch']} observations"
        else:
            what = f"for an environment with {case['n_obs']} observations and {case['n_actions']} actions, the output"
        scores = tensor_of(what, mine["scores"], shape).float()
        if torch.allclose(scores[0], scores[1]):
            raise Problem("different observations gave the same action scores: does forward use its input?")
        if torch.all(scores >= 0) and torch.allclose(scores.sum(-1), torch.ones(shape[0]), atol=1e-4):
            raise Problem(
                "the output looks like probabilities. Return raw scores (logits): no softmax at the end; "
                "the losses and the agent apply the softmax themselves."
            )
        if mine["grad"] is not True:
            raise Problem("no gradient reaches the parameters: do not detach the output or wrap forward in torch.no_grad().")
        wants = [mlp_weight_shapes(case["n_obs"], hidden_of(case), case["n_actions"])]
        problem = layers_problem(case, mine.get("shapes"), case["n_obs"], case["n_actions"], wants)
        if problem:
            raise Problem(problem)
        probe = mine.get("probe")
        raise_if_error(probe)
        probe = tensor_of(f"the output for a batch of {2 * case['batch'] + 1} observations", probe,
                          (2 * case["batch"] + 1, case["n_actions"]))
        if affine_residual(probe) < 1e-4:
            raise Problem(AFFINE_HINT)


POLICY_NET = Exercise(
    name="PolicyNet",
    grade_id="test_policy_net",
    cases=_net_cases,
    drive=_drive_net,
    judge=_judge_net,
    reference=("PolicyNet",),
    one_per_case="cases",
)


def check_policy_net(PolicyNet) -> bool:
    """``PolicyNet.build_for_env(env, **hp)`` -> module mapping (N, obs) to action scores (N, actions)."""
    return POLICY_NET.check(PolicyNet)


# ---------------------------------------------------------------------------------------------
# 2. PolicyAgent: the action distribution


def _distribution_cases() -> list[dict]:
    return distribution_cases([("lunar", 8, 4, seed) for seed in range(5)] + [("toy", 3, 2, 5)], seed=3)


def distribution_cases(sizes: list[tuple], seed: int) -> list[dict]:
    """Per (environment, observations, actions, network seed) of ``sizes``: the environment to build the
    agent on, the seed of its linear network, and a state to look at (drawn from ``seed``)."""
    rng = np.random.default_rng(seed)
    return [
        {"env": env, "n_obs": n_obs, "n_actions": n_actions, "seed": net, "state": np.round(rng.normal(0, 1, n_obs), 4).tolist()}
        for env, n_obs, n_actions, net in sizes
    ]


def _drive_distribution(cases, PolicyAgent) -> list:
    out = []
    for case in cases:
        env = make_case_env(case)
        net = _linear_net(case["seed"], case["n_obs"], case["n_actions"])
        agent = attempt(f"PolicyAgent(env, p_net, seed={case['seed']})", PolicyAgent, env, net, case["seed"])
        state = torch.tensor(case["state"], dtype=torch.float32)
        placed = agent if is_error(agent) else safely("setting agent.curr_state", setattr, agent, "curr_state", state)
        probs = placed if is_error(placed) else method("current_action_distribution()", agent, "current_action_distribution")
        out.append({"seed": case["seed"], "probs": probs})  # the seed: which network the probabilities are of
        env.close()
    return out


def probabilities_checked(found, want: torch.Tensor, state, aac: bool = False) -> None:
    """``current_action_distribution()``'s record ``found`` must be ``want``, the probabilities (actions,)
    the agent's network gives in ``state``: a ``Problem`` naming what is wrong if not. ``aac``: the
    network returns (scores, values), as the actor-critic's (exercise 8) does."""
    d = tensor_of("current_action_distribution()", found).detach().reshape(-1).double()
    if d.numel() != want.numel():
        raise Problem(f"expected {want.numel()} probabilities (one per action), got {d.numel()} values.")
    if (d < 0).any() or not close(float(d.sum()), 1.0, 1e-5):
        raise Problem(
            f"the probabilities {fmt(d)} should be non-negative and sum to 1 (they sum to "
            f"{float(d.sum()):.4f}). Hint: apply a softmax to the action scores."
        )
    if not torch.allclose(d, want.reshape(-1).double(), atol=1e-5):
        raise Problem(
            f"in state {fmt(state)} the network's scores give probabilities {fmt(want)}, "
            f"you returned {fmt(d)}. Use self.p_net on self.curr_state"
            + (" and take the action scores, the first of the network's two outputs." if aac else ".")
        )


def _judge_distribution(got, expected, cases) -> None:
    """Judged against the probabilities of the case's own network (no stored record needed)."""
    for case, mine in zip(cases, got, strict=True):
        if mine["seed"] != case["seed"]:
            raise Problem("the record of your answer does not match the check's cases.")
        state = torch.tensor(case["state"], dtype=torch.float32)
        with torch.no_grad():
            want = torch.softmax(_linear_net(case["seed"], case["n_obs"], case["n_actions"])(state), -1)
        probabilities_checked(mine["probs"], want, state)


AGENT_DISTRIBUTION = Exercise(
    name="PolicyAgent.current_action_distribution",
    grade_id="test_agent_distribution",
    cases=_distribution_cases,
    drive=_drive_distribution,
    judge=_judge_distribution,
    reference=("PolicyAgent",),
    one_per_case="cases",
)


def check_agent_distribution(PolicyAgent) -> bool:
    """``PolicyAgent(env, p_net).current_action_distribution()`` -> probabilities (actions,) summing to 1."""
    return AGENT_DISTRIBUTION.check(PolicyAgent)


# ---------------------------------------------------------------------------------------------
# 2. PolicyAgent: the step

MAX_STEPS = 400
"""Steps the check plays of one episode before it gives up (LunarLander's limit is 300)."""


def _step_cases() -> dict:
    """Episodes with a network that always prefers one action, and a run with equal scores (sampling)."""
    return {
        "episodes": [lunar_step(3, 2), lunar_step(3, 0), toy_step(5, 3, 4, 1)],
        "sampling": {**lunar_step(0, None), "steps": 60},
    }


def lunar_step(seed: int, action: int | None) -> dict:
    """A step case on LunarLander: the environment's seed, the action the network prefers (None: all equal)."""
    return {"env": "lunar", "n_obs": 8, "n_actions": 4, "seed": seed, "action": action}


def toy_step(n_obs: int, n_actions: int, seed: int, action: int | None) -> dict:
    """A step case on a toy environment of the given sizes."""
    return {"env": "toy", "n_obs": n_obs, "n_actions": n_actions, "seed": seed, "action": action}


def _drive_step(cases, PolicyAgent) -> dict:
    episodes = []
    for case in cases["episodes"]:
        env, seed = make_case_env(case), case["seed"]
        agent = attempt(
            f"PolicyAgent(env, p_net, seed={seed})", PolicyAgent, env, _preferring(case["action"], case["n_actions"]), seed
        )
        if not is_error(agent) and hasattr(agent, "reset"):
            reset = method(f"reset({seed})", agent, "reset", seed)
            agent = reset if is_error(reset) else agent
        steps = []
        while not is_error(agent) and len(steps) < MAX_STEPS:
            steps.append(experience_record(method("step()", agent, "step")))
            if is_error(steps[-1]) or truth(steps[-1]["is_done"]):
                break
        episodes.append(
            {"agent": agent if is_error(agent) else None, "steps": steps, "after": attribute("curr_state", agent, "curr_state")}
        )
        env.close()
    case = cases["sampling"]
    env = make_case_env(case)
    seed_torch(case["seed"])
    np.random.seed(case["seed"])
    agent = attempt(
        f"PolicyAgent(env, p_net, seed={case['seed']})",
        PolicyAgent,
        env,
        _FixedScores(torch.zeros(case["n_actions"])),
        case["seed"],
    )
    actions = agent if is_error(agent) else []
    for _ in range(case["steps"] if not is_error(agent) else 0):
        experience = experience_record(method("step()", agent, "step"), ("action",))
        if is_error(experience):
            actions = experience
            break
        actions.append(experience["action"])
    env.close()
    return {"episodes": episodes, "sampling": actions}


def _judge_step(got, expected, cases) -> None:
    check_length(got["episodes"], cases["episodes"], "cases")
    for case, mine, reference in zip(cases["episodes"], got["episodes"], expected["episodes"], strict=True):
        raise_if_error(mine["agent"])
        action, ended, state = case["action"], False, None
        for t, (exp, want) in enumerate(zip(mine["steps"], reference["steps"], strict=False)):
            raise_if_error(exp)
            state, want_state = _floats("the Experience's state", exp["state"]), _floats("state", want["state"])
            if state.shape != want_state.shape or not np.allclose(state, want_state, atol=1e-5):
                raise Problem(
                    f"at step {t} the Experience's state {fmt(state)} is not the state the action was "
                    f"taken in, {fmt(want_state)}. Record self.curr_state before moving on to the next state."
                )
            if as_number(exp["action"]) != action:
                raise Problem(
                    f"with probability ~1 for action {action} your agent took action {shown(exp['action'])}. "
                    "Sample from current_action_distribution()."
                )
            reward, want_reward = as_number(exp["reward"]), as_number(want["reward"])
            if reward is None or not close(reward, want_reward, 1e-5):
                raise Problem(f"at step {t} the reward should be {want_reward:.4f}, got {shown(exp['reward'], 100)}.")
            ended = flag(f"at step {t} is_done", want["is_done"])
            if flag(f"at step {t} is_done", exp["is_done"]) != ended:
                raise Problem(
                    f"at step {t} is_done should be {ended}: an episode ends when the environment says terminated OR truncated."
                )
            if ended:
                break
        if not ended:
            raise Problem("the episode never ended.")
        raise_if_error(mine["after"])
        after = _floats("the agent's curr_state", mine["after"])
        if after.shape != (case["n_obs"],) or np.allclose(after, state, atol=1e-6):
            raise Problem("after the last step of an episode the agent should start a new one: call self.reset().")
    raise_if_error(got["sampling"])
    case = cases["sampling"]
    actions = {as_number(a) for a in got["sampling"]}
    if None in actions:
        raise Problem("step() should return the action taken as an integer.")
    if len(actions) < case["n_actions"] - 1:
        raise Problem(
            f"with equal scores for all actions, {case['steps']} steps only used actions {sorted(int(a) for a in actions)}. "
            "Sample the action from the distribution instead of taking the most probable one."
        )


AGENT_STEP = Exercise(
    name="PolicyAgent.step",
    grade_id="test_agent_step",
    cases=_step_cases,
    drive=_drive_step,
    judge=_judge_step,
    reference=("PolicyAgent",),
)


def check_agent_step(PolicyAgent) -> bool:
    """``step()`` samples an action, steps the env and returns ``Experience(state, action, reward, is_done)``."""
    return AGENT_STEP.check(PolicyAgent)


EXERCISES = {exercise.grade_id: exercise for exercise in (POLICY_NET, AGENT_DISTRIBUTION, AGENT_STEP)}
"""Exercises 1-2 by the grade id of their hidden-test cell."""
