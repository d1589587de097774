"""The notebook's claims about training on mode 2: replay keeps mode 1 without speeding mode 2 up,
and replay without the importance ratio collapses to one side. Each is run exactly as the
notebook runs it (seed, memory, sizes), at the notebook's size and, with --run-slow, at full size."""

import pytest

from course_admin.colour import solutions
from course_utils import colour
from course_utils.claims import claim
from course_utils.colour.curves import RUNS, train_on_mode2
from course_utils.runtime import set_seed


def notebook_runs(size):
    """The notebook's Section 3: a mode-1 agent writing to a 250-slot memory, then the three runs."""
    set_seed(1)
    memory = solutions.ReplayMemory(capacity=250)
    agent = colour.ActorCritic()
    colour.train_agent(colour.ColourEnv(), agent, mode=1, num_gradient_steps=size("gradient_steps"), replay=memory,
                       replay_mode="write", rng=1, progress=False, actor_loss_fn=solutions.replay_actor_loss)
    agents, curves = colour.compare_on_mode2(
        agent, memory, num_gradient_steps=size("gradient_steps"), eval_every=size("curve_every"),
        eval_trials=size("curve_trials"), rng=11, progress=False, actor_loss_fn=solutions.replay_actor_loss)
    return agents, curves, size("curve_every"), memory


@pytest.fixture(scope="module")
def notebook_size():
    return notebook_runs(lambda name: getattr(colour.SIZES, name))


@pytest.fixture(scope="module")
def full_size():
    return notebook_runs(colour.SIZES.full)


def assert_without_ratio_collapses_to_one_side(agents, curves, memory):
    holds, figures = claim("colour.without_ratio_collapses").check(curves)
    assert holds, figures
    for name in ("no replay", "replay"):  # with the ratio, both still look at the colours
        assert curves[name].side_bias() <= 0.3, (name, curves[name].right)
    # The notebook's account: without the ratio the logits run away; with it they stay a few units apart.
    gaps = {"with_ratio": colour.logit_gap(agents["replay"], memory.slots),
            "without": colour.logit_gap(agents["replay without the importance ratio"], memory.slots)}
    holds, figures = claim("colour.logits_run_apart").check(gaps)
    assert holds, figures


def assert_replay_keeps_mode1_without_speeding_mode2(curves, every):
    holds, figures = claim("colour.replay_keeps_mode1").check(curves)
    assert holds, figures
    # The Think! model answer: replay does not make mode 2 rise earlier.
    holds, figures = claim("colour.replay_buys_no_speed").check(curves)
    assert holds and figures["every"] == every and figures["plain_reach"] is not None, figures


def test_claim_without_the_ratio_the_agent_collapses_to_one_side(notebook_size):
    agents, curves, _, memory = notebook_size
    assert_without_ratio_collapses_to_one_side(agents, curves, memory)


def test_claim_replay_keeps_mode1_and_buys_no_speed(notebook_size):
    assert_replay_keeps_mode1_without_speeding_mode2(*notebook_size[1:3])


def test_curves_are_measured_from_step_0_every_eval_every(notebook_size):
    agents, curves, every, _ = notebook_size
    assert set(curves) == set(agents) == set(RUNS)
    steps = curves["replay"].steps
    assert steps[0] == 0 and steps[1] == every and steps[-1] == colour.SIZES.gradient_steps
    for curve in curves.values():
        assert len(curve.mode1) == len(curve.mode2) == len(curve.right) == len(curve.steps) == len(steps)
        assert curve.mode1[0] == curves["replay"].mode1[0]  # every run starts from the same agent


def test_train_on_mode2_reads_a_copy_and_leaves_the_agent_alone():
    memory = solutions.ReplayMemory(5)
    agent = colour.ActorCritic()
    colour.train_agent(colour.ColourEnv(), agent, 1, 5, replay=memory, replay_mode="write", rng=0, progress=False,
                       actor_loss_fn=solutions.replay_actor_loss)
    before = [p.detach().clone() for p in agent.parameters()]
    trained, curve = train_on_mode2(agent, memory, name="x", num_gradient_steps=3, eval_every=2, eval_trials=10,
                                    progress=False, actor_loss_fn=solutions.replay_actor_loss)
    assert memory.read_pointer == 0 and curve.steps == [0, 2, 3]
    assert all((a == b).all() for a, b in zip(before, agent.parameters(), strict=True))
    assert any((a != b).any() for a, b in zip(before, trained.parameters(), strict=True))
    with pytest.raises(ValueError, match="at least 1"):
        train_on_mode2(agent, None, name="x", num_gradient_steps=3, eval_every=0, eval_trials=10,
                       actor_loss_fn=solutions.replay_actor_loss)


@pytest.mark.slow
def test_claim_full_size_without_the_ratio_the_agent_collapses(full_size):
    agents, curves, _, memory = full_size
    assert_without_ratio_collapses_to_one_side(agents, curves, memory)


@pytest.mark.slow
def test_claim_full_size_replay_keeps_mode1_and_buys_no_speed(full_size):
    curves, every = full_size[1:3]
    assert_replay_keeps_mode1_without_speeding_mode2(curves, every)
    # At full size the gap at the end is wide, and mode 1 never dips lower with replay than without.
    assert curves["replay"].mode1[-1] >= curves["no replay"].mode1[-1] + 0.05
    assert min(curves["replay"].mode1) >= min(curves["no replay"].mode1)
