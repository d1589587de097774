"""Exercise checks of tutorial 3, exercise 8: the advantage actor-critic's network, agent and
loss.

As in ``losses`` (exercises 6-7), each exercise is an ``Exercise``: ``drive`` runs the student's class on the
cases (stand-in environments and networks of its own, the batches of ``loss_records``) and
records what came back; ``judge`` compares the record with the course's own answer's record on
the same cases. Nothing here uses the reference solutions (``course_admin.lunar.solutions``).
"""

from __future__ import annotations

import torch
from torch import nn

from course_utils import facts
from course_utils.check_helpers import close, is_error, tensor_of
from course_utils.checking import Exercise, Problem, attempt, raise_if_error
from course_utils.lunar.checks import loss_records
from course_utils.lunar.checks.agents import probabilities_checked
from course_utils.lunar.checks.standins import (
    AFFINE_HINT,
    _FakeEnv,
    _linear_net,
    _PairNet,
    affine_probe,
    affine_residual,
    build_hp,
    hidden_of,
    layers_problem,
    mlp_weight_shapes,
    weight_shapes,
)
from course_utils.lunar.env import make_env
from course_utils.records import encode
from course_utils.runtime import seed_torch

# ---------------------------------------------------------------------------------------------
# 8. AAC: the network


def _aac_net_cases() -> list[dict]:
    """The environment ("lunar", or [observations, actions] of a stand-in), the seed, the rows of the
    input and the ``hidden_layers`` handed to ``build_for_env`` (absent: its default)."""
    return [{"env": "lunar", "seed": 0, "rows": 5}, {"env": [3, 2], "seed": 1, "rows": 7, "hidden": [6]},
            {"env": "lunar", "seed": 2, "rows": 3, "hidden": [16, 12, 10]}]


def aac_layer_shapes(n_obs: int, hidden, n_actions: int) -> list[list[tuple[int, int]]]:
    """The weight shapes an actor-critic of these sizes holds, one list per way of building it: two
    MLPs (actor and critic), one body with two heads, or one body with one head of both outputs."""
    body = mlp_weight_shapes(n_obs, hidden, n_actions)[:-1]
    last = hidden[-1] if hidden else n_obs
    return [mlp_weight_shapes(n_obs, hidden, n_actions) + mlp_weight_shapes(n_obs, hidden, 1),
            [*body, (n_actions, last), (1, last)], [*body, (n_actions + 1, last)]]


def _drive_aac_net(cases, AACPolicyNet) -> list[dict]:  # noqa: N803 (the exercise's class name)
    out = []
    for case in cases:
        if case["env"] == "lunar":
            env, n_obs, what = make_env(), 8, "AACPolicyNet.build_for_env(env)"
        else:
            n_obs, n_actions = case["env"]
            env = _FakeEnv(n_obs, n_actions)
            what = f"AACPolicyNet.build_for_env(env with {n_obs} observations, {n_actions} actions)"
        hp = build_hp(case)
        if hp:
            what = f"{what[:-1]}, hidden_layers={hp['hidden_layers']})"
        seed_torch(case["seed"])
        net = attempt(what, AACPolicyNet.build_for_env, env, **hp)
        if case["env"] == "lunar":
            env.close()
        if is_error(net):
            out.append({"error": net})
            continue
        x = torch.randn(case["rows"], n_obs, generator=torch.Generator().manual_seed(case["seed"]))
        result = attempt("net(x)", net, x)
        if is_error(result):
            out.append({"error": result})
            continue
        pair = isinstance(result, tuple) and len(result) == 2
        record = {"pair": pair, "returned": type(result).__name__}
        if facts.is_instance(net, nn.Module):
            record["shapes"] = attempt("the shapes of the network's weights", weight_shapes, net)
        probe = attempt("net(x)", net, affine_probe(x))
        if isinstance(probe, tuple) and len(probe) == 2 and all(type(part) is torch.Tensor for part in probe):
            record["probe"] = [encode(part.detach()) for part in probe]
        if pair:
            scores, values = result
            record["scores"], record["values"] = encode(scores), encode(values)
            if type(scores) is torch.Tensor and type(values) is torch.Tensor:
                record["backward"] = attempt("(scores.sum() + values.sum()).backward()", facts.sum_backward, scores, values)
                record["grads"] = attempt("the gradients of net.parameters()", _grad_sizes, net)
        out.append(record)
    return out


def _grad_sizes(net) -> list:
    """Per parameter the module really holds (``facts``: not what an overridden parameters()
    hands out), the sum of the gradient's magnitudes (None for a parameter no gradient reached)."""
    return [facts.grad_size(p) for p in facts.parameters(net)]


def _judge_aac_net(got: list, expected: list, cases) -> None:
    for case, mine in zip(cases, got, strict=True):
        raise_if_error(mine.get("error"))
        rows = case["rows"]
        n_actions = 4 if case["env"] == "lunar" else case["env"][1]
        where = ""
        if case["env"] != "lunar":
            where = f"for an environment with {case['env'][0]} observations and {n_actions} actions, "
        if mine.get("pair") is not True:
            raise Problem(f"forward should return a pair (action_scores, state_values), got {str(mine.get('returned'))[:80]}.")
        scores = tensor_of(f"{where}the action scores for {rows} observations", mine.get("scores"), (rows, n_actions))
        values = tensor_of(f"{where}the state values for {rows} observations", mine.get("values"))
        if tuple(values.shape) not in ((rows, 1), (rows,)):
            raise Problem(
                f"{where}the state values should have shape ({rows}, 1): one number per state, got {tuple(values.shape)}."
            )
        flat = values.reshape(-1).float()
        if torch.allclose(flat[0], flat[1]) or torch.allclose(scores[0].float(), scores[1].float()):
            raise Problem("different observations gave the same outputs: do both heads use the input?")
        raise_if_error(mine.get("backward"))
        grads = mine.get("grads")
        raise_if_error(grads)
        if type(grads) is not list or all(g is None or g == 0 for g in grads):
            raise Problem("no gradient reaches the parameters.")
        n_obs = 8 if case["env"] == "lunar" else case["env"][0]
        wants = aac_layer_shapes(n_obs, hidden_of(case), n_actions)
        problem = layers_problem(case, mine.get("shapes"), n_obs, n_actions, wants)
        if problem:
            raise Problem(problem.replace("the network should be an MLP", "each head should be an MLP")
                          + " (The critic may share the actor's hidden layers or have its own.)")
        probe = mine.get("probe")
        if type(probe) is not list or len(probe) != 2:
            raise Problem(f"{where}the network did not return (action_scores, state_values) for a batch of "
                          f"{2 * rows + 1} observations.")
        probe_scores = tensor_of("the action scores", probe[0], (2 * rows + 1, n_actions))
        probe_values = tensor_of("the state values", probe[1]).reshape(2 * rows + 1, -1)
        if affine_residual(probe_scores) < 1e-4 or affine_residual(probe_values) < 1e-4:
            raise Problem(AFFINE_HINT)


AAC_NET = Exercise(
    name="AACPolicyNet",
    grade_id="test_aac_net",
    cases=_aac_net_cases,
    drive=_drive_aac_net,
    judge=_judge_aac_net,
    reference=("AACPolicyNet",),
    one_per_case="cases",
)


def check_aac_net(AACPolicyNet) -> bool:  # noqa: N803
    """``AACPolicyNet.build_for_env(env)`` -> module returning (action scores (N, 4), state values (N, 1))."""
    return AAC_NET.check(AACPolicyNet)


# ---------------------------------------------------------------------------------------------
# 8. AAC: the agent


def _aac_agent_cases() -> list[dict]:
    """The environment's seed, the stand-in network's seed and its constant state value."""
    return [{"seed": seed, "net": seed, "value": 0.0 if seed < 4 else 1.0} for seed in range(5)]


def _drive_aac_agent(cases, AACPolicyAgent) -> list[dict]:  # noqa: N803 (the exercise's class name)
    out = []
    for case in cases:
        env, seed = make_env(), case["seed"]
        net = _PairNet(_linear_net(case["net"]), case["value"])  # a seeded linear layer's scores, a constant value
        agent = attempt(f"AACPolicyAgent(env, p_net, seed={seed})", AACPolicyAgent, env, net, seed)
        state = torch.as_tensor(env.reset(seed=seed)[0])
        if is_error(agent):
            out.append({"state": state, "error": agent})
        else:
            attempt("setting agent.curr_state", setattr, agent, "curr_state", state.clone())
            found = attempt("current_action_distribution()", getattr(agent, "current_action_distribution", None))
            out.append({"state": state, "distribution": encode(found)})
        env.close()
    return out


def _judge_aac_agent(got: list, expected: list, cases) -> None:
    for mine, reference in zip(got, expected, strict=True):
        raise_if_error(mine.get("error"))
        probabilities_checked(mine.get("distribution"), reference["distribution"], reference["state"], aac=True)


AAC_AGENT = Exercise(
    name="AACPolicyAgent.current_action_distribution",
    grade_id="test_aac_agent",
    cases=_aac_agent_cases,
    drive=_drive_aac_agent,
    judge=_judge_aac_agent,
    reference=("AACPolicyAgent",),
    one_per_case="cases",
)


def check_aac_agent(AACPolicyAgent) -> bool:  # noqa: N803
    """``AACPolicyAgent.current_action_distribution`` uses the policy head of a (scores, values) network."""
    return AAC_AGENT.check(AACPolicyAgent)


# ---------------------------------------------------------------------------------------------
# 8. AAC: the loss


def _aac_loss_cases() -> list[dict]:
    """The batch ("stored", or the seed and episode lengths of a made one) and the Huber loss's delta."""
    return [{"batch": "stored", "delta": 1.0}, {"batch": "stored", "delta": 0.5}]


def _drive_aac_loss(cases, AACPolicyGradientLoss) -> list[dict]:  # noqa: N803 (the exercise's class name)
    out = []
    for case in cases:
        what = f"AACPolicyGradientLoss(delta={case['delta']:g})"
        loss_fn = attempt(what, AACPolicyGradientLoss, case["delta"])
        if is_error(loss_fn):
            out.append({"error": loss_fn})
            continue
        batch, scores, values = loss_records.make_inputs(case["batch"])
        s, v = scores.requires_grad_(True), values.view(-1, 1).clone().requires_grad_(True)
        pair = f"{what}(batch, (action_scores, state_values))"
        record, loss = loss_records.observe_loss(pair, loss_fn, batch, (s, v))
        record["backward"] = loss_records.backward(loss)
        record["values_grad"] = facts.grad(v)  # as autograd left it (None when none reached v)
        record["flat"], _ = loss_records.observe_loss(pair, loss_fn, batch, (s.detach(), v.detach().view(-1)))
        record["row_shifted"], _ = loss_records.observe_loss(pair, loss_fn, batch, (loss_records.row_shifted(s), v.detach()))
        batch, scores, values = loss_records.make_inputs(case["batch"], shift=loss_records.SHIFT)
        raised = (scores, values.view(-1, 1))
        record["shifted"], _ = loss_records.observe_loss(pair, loss_fn, batch, raised)
        out.append(record)
    return out


BROADCAST_HINT = (
    "your loss differs when the same state values come as a column of shape (N, 1), as the network returns them, "
    "instead of shape (N,): q_vals of shape (N,) minus state_values of shape (N, 1) broadcasts to an (N, N) matrix. "
    "Reshape the state values to (N,) first: state_values.reshape(-1)."
)
"""The hint for state values of shape (N, 1) broadcast against q-values of shape (N,) (the ``flat`` probe)."""


def _aac_loss_hints(mine: dict, delta: float, loss_p: float, loss_v: float) -> list:
    """(test of the answer's loss, hint) for each typical mistake, in the order they are tried:
    the probes first (``flat``, ``row_shifted``, ``shifted``), then the losses each mistake gives
    (from the course's parts, ``loss_p`` and ``loss_v``)."""
    name = "AACPolicyGradientLoss"

    def sees_the_shift(got: float) -> bool:  # weighing by q alone: raising q and v changes the loss
        try:
            return not close(loss_records.loss_value(mine.get("shifted", {}), name), got, 1e-4)
        except Problem:
            return False

    return [
        (lambda got: loss_records.changed(mine, "flat", got, name), BROADCAST_HINT),
        (lambda got: loss_records.changed(mine, "row_shifted", got, name), loss_records.AXIS_HINT),
        (sees_the_shift, "the policy part should weigh log pi by the advantage q - v, not by q."),
        (lambda got: close(got, loss_p, 1e-4), "add the value loss: delta * mean((v - q)^2)."),
        (lambda got: close(got, delta * loss_v - loss_p, 1e-4),
         "the sign of the policy part is flipped: minimise -(q - v) * log pi."),
        (lambda got: close(got, loss_p + loss_v, 1e-4), "weigh the value loss by delta."),
    ]


def _judge_aac_loss(got: list, expected: list, cases) -> None:
    name = "AACPolicyGradientLoss"
    for case, mine, reference in zip(cases, got, expected, strict=True):
        raise_if_error(mine.get("error"))
        delta, spec = case["delta"], case["batch"]
        got_loss, want = loss_records.loss_value(mine, name), loss_records.loss_value(reference, name)
        parts = loss_records.info(reference)
        loss_p, loss_v = parts["loss_p"], parts["loss_v"]
        if not close(got_loss, want, 1e-4):
            hints = _aac_loss_hints(mine, delta, loss_p, loss_v)
            hint = next((hint for test, hint in hints if test(got_loss)),
                        "loss = -mean((q - v) * log pi(a|s)) + delta * mean((v - q)^2).")
            raise Problem(
                f"on {loss_records.describe(spec)} with delta={delta:g} the loss should be {want:.4f}, "
                f"got {got_loss:.4f}. Hint: {hint}"
            )
        raise_if_error(mine.get("backward"))
        grad, want_grad = mine.get("values_grad"), reference["values_grad"]
        if not (isinstance(grad, torch.Tensor) and grad.shape == want_grad.shape and torch.allclose(grad, want_grad, atol=1e-5)):
            raise Problem(
                "the gradient with respect to the state values should come from the value loss alone. "
                "Hint: use state_values.detach() in the advantage, so the policy loss does not move v."
            )
        got_raised = loss_records.loss_value(mine.get("shifted", {}), name)
        want_raised = loss_records.loss_value(reference["shifted"], name)
        if not close(got_raised, want_raised, 1e-4):
            raise Problem(
                f"on {loss_records.describe(spec)} with every q-value and state value raised by {loss_records.SHIFT:g}, "
                "the loss should be "
                f"{want_raised:.4f}, got {got_raised:.4f}. Hint: the advantage q - v and the value loss do not change."
            )


AAC_LOSS = Exercise(
    name="AACPolicyGradientLoss",
    grade_id="test_aac_loss",
    cases=_aac_loss_cases,
    drive=_drive_aac_loss,
    judge=_judge_aac_loss,
    reference=("AACPolicyGradientLoss",),
    one_per_case="cases",
)


def check_aac_loss(AACPolicyGradientLoss) -> bool:  # noqa: N803
    """``AACPolicyGradientLoss(delta)(batch, (action_scores, state_values))`` -> (loss, dict)."""
    return AAC_LOSS.check(AACPolicyGradientLoss)


EXERCISES = {exercise.grade_id: exercise for exercise in (AAC_NET, AAC_AGENT, AAC_LOSS)}
"""Exercise 8 by the grade id of its hidden-test cells."""
