"""Facts the child that drives an answer derives beside its values cannot be forged into marks.

The answer runs in the process that drives it, so it can write that process's result line itself
(``test_hidden_cases.FORGED_LINE``). A forged record scores only with right values on the hidden
cases; what this file covers is the rest of a record: facts the child would derive from the
values (a time, "the agent is unchanged", "the batch was not modified"...). Each is either measured
outside the child or recorded as the values it is derived from, which the judge checks itself.

Each test hands in a WRONG answer (too slow, or one that changes what it must not) together with
a result line forged with the course's own record on the hidden cases (what a forger who had the
right values would write) and facts claiming success, drives it as the grader does, and asserts 0
on that exercise; the honest solution, driven alongside, keeps its marks. A planted regression
(the judge trusting the child's fact again) shows each test would notice.
"""

from __future__ import annotations

import json

import pytest
from verdicts import record_output

from course_admin.grading import judging
from course_admin.replay import solutions as replay_solutions
from course_utils import checking, records
from course_utils.replay import checks as tree_checks
from grading.test_drive_apart import _graded, _notebook, _with_answer, drive_many

FORGED_LINE = '''
import json as _json, os as _os, sys as _sys
_PAYLOAD = {payload!r}
_frame = _sys._getframe()
while _frame is not None and not ("exercise" in _frame.f_locals and "out" in _frame.f_locals):
    _frame = _frame.f_back
# the exercise's own child (not the one that times it, where drive_one has its steps)
if (_frame is not None and _frame.f_locals["exercise"].get("grade_id") == {grade_id!r}
        and _frame.f_locals.get("steps") is None):
    _line = {{"grade_id": {grade_id!r}, "payload": _PAYLOAD, "notes": [], "measured": {measured!r}}}
    _frame.f_locals["out"].write((_json.dumps(_line) + "\\n").encode())
    _frame.f_locals["out"].flush()
    _os._exit(0)
'''


def forged_line(grade_id: str, record: str, extra: dict | None = None) -> str:
    """An answer cell's text that writes the drive's result line itself: ``record`` (a record's
    JSON text) as the hidden cell's, with ``extra`` beside it in the payload and in the result."""
    payload = json.dumps({"grade_id": grade_id, "record": record, **(extra or {})})
    return FORGED_LINE.format(payload=payload, grade_id=grade_id, measured=(extra or {}).get("measured"))


def _solution_source(grade_id: str) -> str:
    graded = _graded(grade_id)
    for cell in _notebook(graded.tutorial).cells:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == graded.solution:
            return cell.source
    raise KeyError(graded.solution)


# --------------------------------------------------------------------------------------
# Timing: the segment trees' speed part

SLOW_SUM = '''

class SumSegmentTree(SumSegmentTree):  # WRONG: sum(start, end) loops over every leaf of the range
    def sum(self, start=0, end=None):
        end = self.capacity if end is None else end
        return sum(self.tree[self.capacity + i] for i in range(start, end))
'''


def _fast_claims() -> tuple[str, dict]:
    """The course's record on the hidden cases with a speed entry saying every sum was done in
    time, and a measurement claiming the whole speed part took 0.01 s of CPU (with the right
    answers on the steps of seed 1)."""
    record = judging.reference_record(tree_checks.TREES.grade_id)
    assert record["speed"]["over_time"] is False and record["speed"]["done"] == 2000
    cases = tree_checks.TREES.cases_for(True)
    trees = tree_checks.SPEED.start(cases, replay_solutions.SumSegmentTree, replay_solutions.MinSegmentTree)
    measured = tree_checks.SPEED.measure(cases, 1, lambda step: tree_checks.SPEED.answer(trees, step), lambda: 0.0)
    measured["cpu_seconds"] = [0.005, 0.005]
    return records.dump(record), {"measured": measured}


def test_a_slow_tree_with_a_forged_time_scores_zero_and_the_course_tree_passes(tmp_path):
    grade_id = tree_checks.TREES.grade_id
    record, claims = _fast_claims()
    graded = _graded(grade_id)
    forged = _solution_source(grade_id) + SLOW_SUM + forged_line(grade_id, record, claims)
    cases = [(_with_answer(_notebook(graded.tutorial), graded.solution, forged), grade_id),
             (_notebook(graded.tutorial), grade_id)]
    (cheat, why), (honest, message) = drive_many(cases, tmp_path)
    assert not cheat, "a slow tree passed with a forged time"
    assert "too slow" in why or "your sum grows with the capacity: it is not O(log n)" in why, why
    assert honest, message


def test_planted_a_judge_that_reads_the_child_s_time_passes_the_forgery():
    """The planted regression: the tree exercise without its speed part timed apart (the judge
    reading the speed entry the child recorded), and the forged record of the test above passes."""
    grade_id = tree_checks.TREES.grade_id
    record, claims = _fast_claims()
    output = record_output(grade_id, record, None)
    assert not judging.judge_outputs(grade_id, [output])[0]  # as graded: no measurement, no marks
    object.__setattr__(tree_checks.TREES, "timed", None)
    try:
        assert judging.judge_outputs(grade_id, [output])[0], "the planted judge should trust the forged time"
    finally:
        object.__setattr__(tree_checks.TREES, "timed", tree_checks.SPEED)


def test_the_measurement_the_answer_writes_is_never_read(tmp_path):
    """What the runner measured replaces anything of that name in the child's result line and in
    its payload: the payload's claim alone (planted, without the runner's overwrite) would pass."""
    from course_admin.grading import drive_apart

    grade_id = tree_checks.TREES.grade_id
    record, claims = _fast_claims()
    payload = json.dumps({"grade_id": grade_id, "record": record, **claims})
    trusted = record_output(grade_id, record, claims["measured"])  # planted: the child's claim read
    assert judging.judge_outputs(grade_id, [trusted])[0]
    output = drive_apart._record_output({"grade_id": grade_id, "payload": payload, "notes": [],
                                         "measured": {"seed": 5, "error": "the run ended before its first timed step"}})
    passed, message = judging.judge_outputs(grade_id, [output])
    assert not passed and "before its first timed step" in message, message


@pytest.mark.parametrize("steps", [0, 1])
def test_a_timing_child_that_stops_or_answers_wrong_gets_no_marks(steps):
    """Answers the runner measured but that are not the sums (the total is checked), or that stop
    early, fail; the course's own, measured the same way, pass."""
    from verdicts import measured_apart

    cases = tree_checks.TREES.cases_for(True)
    right = measured_apart(tree_checks.TREES, replay_solutions.SumSegmentTree, replay_solutions.MinSegmentTree)
    assert tree_checks.SPEED.entry(cases, right)["total"] is not None
    if steps:
        wrong = dict(right, answers=[a + steps for a in right["answers"]])
    else:
        wrong = dict(right, done=5, counts=[5, 0], answers=right["answers"][:5])
    entry = tree_checks.SPEED.entry(cases, wrong)
    record = judging.reference_record(tree_checks.TREES.grade_id)
    record["speed"] = entry
    with pytest.raises(checking.Problem, match="add up to|too slow"):
        tree_checks.TREES.judge(record, judging.reference_record(tree_checks.TREES.grade_id), cases)


# --------------------------------------------------------------------------------------
# Facts recorded as the values they come from. Each wrong answer below really computes what its
# exercise's values ask (right scores, losses, means...) but changes what it must not (the agent,
# a parent, the born agent, an input) or detaches what it must not; the forger writes its real
# record with every fact that gives it away claiming success: the old flags ("agent_unchanged",
# "parents_unchanged", "changed_given", "changed_input", "requires_grad") and, where the record
# holds the values a fact comes from, the record's own "before" made equal to its "after". The
# judge compares those values with the course's own drive of the same hidden case.

WRONG = {
    # evaluate_individual trains the agent itself on every task (no copy)
    "test_evaluate_individual": ("evaluate_individual", '''
def evaluate_individual(env, agent, optimizer_func, num_tasks=10, num_gradient_steps=25, num_trials=6,
                        num_evaluation_trials=20):
    scores = [train_evaluate_agent(env, agent, optimizer_func, num_gradient_steps, num_trials, num_evaluation_trials)
              for _ in range(num_tasks)]
    return np.sum(scores), scores
'''),
    # create_new_agent moves a parent's critic a little every time it makes a child
    "test_genetic_algorithm": ("genetic_algorithm", '''

_right_create_new_agent = create_new_agent


def create_new_agent(agent1, agent2):
    child = _right_create_new_agent(agent1, agent2)
    with torch.no_grad():
        agent1.critic.bias.add_(0.25)
    return child
'''),
    # lamarckian_individual writes the mean into the born agent, then returns a copy of it
    "test_lamarckian_individual": ("lamarckian_individual", '''
def lamarckian_individual(born, trained):
    born.load_state_dict({name: torch.stack([weights[name] for weights in trained]).mean(0) for name in trained[0]})
    return copy.deepcopy(born)
'''),
    # replay_actor_loss is right, then scales mu in place
    "test_replay_actor_loss": ("replay_actor_loss", '''
def replay_actor_loss(log_pi, mu, advantage, rho_max):
    rho = torch.clamp(log_pi.detach().exp() / mu, max=rho_max)
    loss = -(rho * log_pi * advantage.detach()).mean()
    mu.mul_(2.0)
    return loss
'''),
    # the VPG loss of detached scores: the right value, no gradient reaches the scores
    "test_vpg_loss": ("vpg_loss", '''
class VanillaPolicyGradientLoss(nn.Module):
    def forward(self, batch, action_scores):
        log_p = torch.log_softmax(action_scores.detach(), dim=-1).gather(1, batch.actions.view(-1, 1)).squeeze(1)
        loss_p = -(batch.q_vals * log_p).mean()
        return loss_p, dict(loss_p=loss_p.item())
'''),
}


def _claim_success(grade_id: str, got):
    """The wrong answer's real record (decoded), with every fact that gives it away claiming success."""
    if grade_id == "test_evaluate_individual":
        for case in got["planned"]:
            for call in case["calls"]:
                call.update(trained_the_agent=False, from_original_weights=True, learner_weights=case["agent_after"])
            case.update(agent_unchanged=True, agent_weights=case["agent_after"])
        got["real"].update(agent_unchanged=True, agent_weights=got["real"]["agent_after"])
    elif grade_id == "test_genetic_algorithm":
        got["offspring"].update(parents_unchanged=True, parents_before=got["offspring"]["parents_after"])
    elif grade_id == "test_lamarckian_individual":
        for seen in got:
            seen.update(changed_given=False, shares_born=False, shares_trained=False, given_before=seen["given_after"])
    elif grade_id == "test_replay_actor_loss":
        for seen in got:
            seen["changed_input"] = False
    elif grade_id == "test_vpg_loss":
        import torch

        for call, right in zip(got["calls"], judging.reference_record(grade_id)["calls"], strict=True):
            call.update(requires_grad=True, grad=torch.ones_like(right["grad"]))  # the scores' shape, which the child knows
    return got


def _wrong_answers(grade_id: str) -> list:
    """The wrong answer of ``grade_id`` in this process: the course's solutions with its cell run over them."""
    import importlib

    from course_admin.exercises import SOLUTION_IMPORTS

    graded = _graded(grade_id)
    namespace = dict(vars(importlib.import_module(f"course_admin.{graded.tutorial}.solutions")))
    exec(compile(SOLUTION_IMPORTS[graded.tutorial] + _wrong_source(grade_id), "<answer cell>", "exec"), namespace)
    return [namespace[name] for name in judging.exercise_for(grade_id).reference]


def _wrong_source(grade_id: str) -> str:
    _, source = WRONG[grade_id]
    return _solution_source(grade_id) + source if grade_id == "test_genetic_algorithm" else source


def _forged_record(grade_id: str) -> str:
    exercise = judging.exercise_for(grade_id)
    got = records.load(exercise.record(*_wrong_answers(grade_id), hidden=True))
    return records.dump(_claim_success(grade_id, got))


@pytest.fixture(scope="module")
def forged_verdicts(tmp_path_factory) -> dict:
    """Every wrong answer with its forged line, and the course's solution, driven as the grader does."""
    cases, forged = [], {}
    for grade_id in WRONG:
        graded = _graded(grade_id)
        forged[grade_id] = _forged_record(grade_id)
        cell = _wrong_source(grade_id) + forged_line(grade_id, forged[grade_id])
        cases += [(_with_answer(_notebook(graded.tutorial), graded.solution, cell), grade_id),
                  (_notebook(graded.tutorial), grade_id)]
    verdicts = drive_many(cases, tmp_path_factory.mktemp("forged"))
    return {grade_id: (verdicts[2 * k], verdicts[2 * k + 1], forged[grade_id]) for k, grade_id in enumerate(WRONG)}


@pytest.mark.parametrize("grade_id", list(WRONG))
def test_a_wrong_answer_whose_forged_line_claims_its_facts_scores_zero(grade_id, forged_verdicts):
    (cheat, why), (honest, message), _ = forged_verdicts[grade_id]
    assert not cheat, f"{grade_id}: a forged line passed"
    assert honest, message


@pytest.mark.parametrize("grade_id", list(WRONG))
def test_planted_a_judge_that_takes_the_child_s_facts_passes_the_forgery(grade_id, forged_verdicts, monkeypatch):
    """The planted regression: the judge compares the record with what the child recorded (its own
    "before", its own gradient) instead of the course's drive of the hidden case, and the forgery
    the test above fails passes."""
    *_, forged = forged_verdicts[grade_id]
    output = record_output(grade_id, forged)
    assert not judging.judge_outputs(grade_id, [output])[0]
    monkeypatch.setattr(judging, "reference_record", lambda gid, hidden=True: records.load(forged))
    passed, message = judging.judge_outputs(grade_id, [output])
    assert passed, message


# --------------------------------------------------------------------------------------
# "No gradient" facts turned into gradients: the drive ties what must be detached (the advantage
# handed to replay_actor_loss, the priorities prioritized_td_loss returns) to a gradient the judge
# compares with the course's (``facts.attached``: a term that is zero, with that gradient). Each
# answer below is right but for one missing detach; its forged record says "no gradient".

UNDETACHED = {
    "test_replay_actor_loss": ("""
def replay_actor_loss(log_pi, mu, advantage, rho_max):
    rho = torch.clamp(log_pi.detach().exp() / mu, max=rho_max)
    return -(rho * log_pi * advantage).mean()
""", "its gradient with respect to log_pi is not"),
    "test_td_loss": ("""
def prioritized_td_loss(q_net, target_net, batch, gamma, prior_eps=1e-6):
    q_taken = q_net(batch["obs"]).gather(1, batch["acts"].unsqueeze(1)).squeeze(1)
    with torch.no_grad():
        target = batch["rews"] + gamma * (1.0 - batch["done"]) * target_net(batch["next_obs"]).max(dim=1).values
    loss = (batch["weights"] * F.smooth_l1_loss(q_taken, target, reduction="none")).mean()
    return loss, (target - q_taken).abs() + prior_eps
""", "the loss is right but its gradient is not"),
}


def _undetached_forgery(grade_id: str) -> dict:
    """The undetached answer's record on the hidden cases, claiming "no gradient" where it has one."""
    import importlib

    from course_admin.exercises import SOLUTION_IMPORTS

    graded = _graded(grade_id)
    namespace = dict(vars(importlib.import_module(f"course_admin.{graded.tutorial}.solutions")))
    exec(compile(SOLUTION_IMPORTS[graded.tutorial] + UNDETACHED[grade_id][0], "<answer cell>", "exec"), namespace)
    exercise = judging.exercise_for(grade_id)
    got = records.load(exercise.record(*[namespace[name] for name in exercise.reference], hidden=True))
    for seen in got:
        if grade_id == "test_td_loss":
            seen["priorities have a gradient"] = False
        else:
            seen["grad_advantage"] = None
    return record_output(grade_id, records.dump(got))


@pytest.mark.parametrize("grade_id", list(UNDETACHED))
def test_a_missing_detach_whose_record_claims_no_gradient_scores_zero(grade_id):
    passed, message = judging.judge_outputs(grade_id, [_undetached_forgery(grade_id)])
    assert not passed and UNDETACHED[grade_id][1] in message, message
    reference = record_output(grade_id, records.dump(judging.reference_record(grade_id)))
    assert judging.judge_outputs(grade_id, [reference])[0]


@pytest.mark.parametrize("grade_id", list(UNDETACHED))
def test_planted_a_drive_without_the_attached_term_passes_the_forgery(grade_id, monkeypatch):
    """The planted regression: the drive's tie to the gradient is a zero without one, and the
    forgery the test above fails passes."""
    import torch

    from course_utils import facts

    monkeypatch.setattr(facts, "attached", lambda tensor: torch.zeros_like(facts.copy(tensor)))
    passed, message = judging.judge_outputs(grade_id, [_undetached_forgery(grade_id)])
    assert passed, message


def _copying_add_forgery() -> dict:
    """A right ``add`` that returns a copy of the memory, its record saying it returned the memory."""
    import copy

    class CopyingMemory(replay_solutions.CircularMemory):
        def add(self, batch):
            super().add(batch)
            return copy.deepcopy(self)

    got = records.load(tree_checks.ADD.record(CopyingMemory, hidden=True))
    for log in got:
        log.update({name: "self" for name in log if name.endswith(": returned")})
    return record_output(tree_checks.ADD.grade_id, records.dump(got))


def test_an_add_that_returns_a_copy_scores_zero_whatever_its_record_says_it_returned():
    """The memory exercise adds every batch through what ``add`` returned (``_next_adder``) and
    reads the slots from the memory: a returned copy leaves the memory behind, which the slots show."""
    passed, message = judging.judge_outputs(tree_checks.ADD.grade_id, [_copying_add_forgery()])
    assert not passed and "the slots hold steps" in message, message


def test_planted_adding_every_batch_to_the_memory_itself_passes_the_forgery(monkeypatch):
    monkeypatch.setattr(tree_checks, "_next_adder", lambda memory, returned: memory)
    passed, message = judging.judge_outputs(tree_checks.ADD.grade_id, [_copying_add_forgery()])
    assert passed, message


PROBE_LOADED = '''
import sys
raise RuntimeError("loaded: " + " ".join(sorted(m for m in sys.modules if m.startswith("course_utils.replay"))) + " .")
'''


def test_the_runner_forgets_the_check_it_imported_to_draw_the_steps(tmp_path):
    """The runner imports the tree check to draw the speed part's steps; the child of the next
    exercise (forked from the runner) must not find it loaded, outside its Landlock list."""
    trees, td = _graded("test_segment_trees"), _graded("test_td_loss")
    nb = _with_answer(_notebook("replay"), td.solution, PROBE_LOADED)
    (trees_passed, message), (_, probe) = drive_many([(nb, trees.grade_id), (nb, td.grade_id)], tmp_path)
    assert trees_passed, message
    assert "loaded: " in probe, probe
    assert "course_utils.replay.checks " not in probe.split("loaded: ")[1], probe
