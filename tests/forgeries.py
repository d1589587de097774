"""A red-team corpus: submissions that try to forge a verdict instead of answering.

Each attack is tutorial 2's released notebook with one of its two exercises (the replay memory,
the replay actor loss) answered honestly (from ``solutions/``) and the other attacked: its answer
cell replaced by code that tries to earn the points without solving it, by the attacks documented
against nbgrader and its peers (a patched check, rigged comparisons, patched numerical helpers, a
silenced traceback, frames and the garbage collector, text that mimics a pass, a forged record,
partial credit through an ``execute_result``, answers tuned to the public cases, the harvested
solutions of the grader's environment, NaN, files for the grader).

Every notebook of the corpus is tutorial 2's grading path (``load_cut``, ``submissions.grading_path``):
its setup and settings cells and, in order, each exercise's answer, check and hidden-test cells, up
to the last hidden test. The code cells left out (the game, the demos, the replay experiments: three
quarters of the notebook's time) hold no verdict, and an answer cell reaches them only through hooks
it could fire as well in the cells that are kept. The corpus is graded against the instructor
notebook cut the same way (``cut_source``).

``build(folder)`` writes them and returns {student: (grade id attacked, grade id answered)}.
``in_kernel_source(folder)`` writes the instructor notebook with its hidden tests judging in the
student's kernel, the way they did before (the planted regression).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from submissions import cell_index, grading_path, grading_path_source, load, source_folder, with_answer, write

ASSIGNMENT = "02_colour_replay"
ACTOR, MEMORY = "test_replay_actor_loss", "test_replay_memory"

WRONG_ACTOR = '''
def replay_actor_loss(log_pi, mu, advantage, rho_max):
    return (log_pi * 0.0).mean()
'''

ATTACKS_ON_ACTOR = {
    # The attack from the issue: the hidden test imported the patched check.
    "patch_check": '''
import course_utils.colour.checks as checks
checks.check_replay_actor_loss = lambda *args, **kwargs: True
''' + WRONG_ACTOR,
    # Everything in the kernel that judges, patched.
    "patch_judging": '''
import course_utils.checking as checking
import course_utils.colour.checks as checks
checking.outcome = lambda name, check: (True, f"{name}: all checks passed. Well done!")
checking.verdict = lambda *args, **kwargs: True
object.__setattr__(checks.ACTOR, "judge", lambda *args: None)
''' + WRONG_ACTOR,
    # nbgrader issue #1379: an object that equals everything.
    "equals_everything": '''
class Anything:
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
    __hash__ = None
    def __len__(self):
        return 1
    def __iter__(self):
        return iter([self])
    def item(self):
        return self

def replay_actor_loss(log_pi, mu, advantage, rho_max):
    return Anything()
''',
    "rigged_tensor": '''
class Rigged(torch.Tensor):
    def __eq__(self, other):
        return torch.ones(torch.Size(getattr(other, "shape", ())), dtype=torch.bool)
    def item(self):
        return 0.0
    def dim(self):
        return 0

def replay_actor_loss(log_pi, mu, advantage, rho_max):
    return (log_pi * 0.0).mean().as_subclass(Rigged)
''',
    "rigged_float64": '''
class Close(np.float64):
    def __eq__(self, other):
        return True
    def __sub__(self, other):
        return Close(0.0)
    __rsub__ = __sub__
    def __abs__(self):
        return Close(0.0)
    def __le__(self, other):
        return True
    __lt__ = __ge__ = __gt__ = __le__
    __hash__ = np.float64.__hash__

def replay_actor_loss(log_pi, mu, advantage, rho_max):
    return Close(0.0)
''',
    "patched_numerics": '''
import builtins, math
np.allclose = lambda *args, **kwargs: True
np.array_equal = lambda *args, **kwargs: True
np.isclose = lambda a, b, *args, **kwargs: np.ones(np.shape(a), dtype=bool)
np.testing.assert_allclose = lambda *args, **kwargs: None
math.isclose = lambda *args, **kwargs: True
torch.allclose = lambda *args, **kwargs: True
builtins.abs = lambda x: 0
''' + WRONG_ACTOR,
    # nbgrader PR #1324: a failing test that records no error.
    "silenced_traceback": '''
_shell = get_ipython()
_shell.showtraceback = lambda *args, **kwargs: None
_shell._showtraceback = lambda *args, **kwargs: None

def replay_actor_loss(log_pi, mu, advantage, rho_max):
    raise ValueError("no answer")
''',
    "frames_and_gc": '''
import gc, sys

def replay_actor_loss(log_pi, mu, advantage, rho_max):
    def looks_right(value):
        return isinstance(value, torch.Tensor) and value.dim() == 0 and value.requires_grad
    frame = sys._getframe(1)
    while frame is not None:
        for value in list(frame.f_locals.values()):
            if looks_right(value):
                return value
        frame = frame.f_back
    for value in gc.get_objects():
        if looks_right(value):
            return value
    return (log_pi * 0.0).mean()
''',
    "mimics_a_pass": '''
print("✅ replay_actor_loss: all checks passed. Well done!")
get_ipython().events.register(
    "post_run_cell", lambda result: print("✅ replay_actor_loss: all checks passed. Well done!")
)
''' + WRONG_ACTOR,
    # A record of the course's own answer on the public cases (students have those records).
    "forged_record": '''
import json
from IPython.display import display
from course_utils import checking, records

_real_submit = checking.Exercise.submit

def _forged_submit(self, *answers):
    if self.grade_id != "test_replay_actor_loss":
        return _real_submit(self, *answers)
    record = json.dumps(checking._stored_records()[self.grade_id])
    display({records.RECORD_MIME: json.dumps({"grade_id": self.grade_id, "record": record})}, raw=True)

checking.Exercise.submit = _forged_submit
''' + WRONG_ACTOR,
    # nbgrader reads a test cell's execute_result as partial credit.
    "partial_credit": '''
_shell = get_ipython()
_shell.events.register("post_run_cell", lambda result: _shell.displayhook(2))
''' + WRONG_ACTOR,
    # Right on every public case (from the records students have), wrong elsewhere.
    "tuned_to_public_cases": '''
from course_utils import checking
from course_utils.colour import checks as _checks

def replay_actor_loss(log_pi, mu, advantage, rho_max):
    cases = _checks.ACTOR.cases()
    for case, seen in zip(cases, checking.stored_record("test_replay_actor_loss")):
        if len(case["log_pi"]) == len(log_pi) and np.allclose(case["log_pi"], log_pi.detach().numpy()) \\
                and case["rho_max"] == rho_max:
            target = float(np.asarray(seen["loss"], dtype=float).reshape(-1)[0])
            return (log_pi * 0.0).mean() + target
    return (log_pi * 0.0).mean()
''',
    # The grader's environment holds the harvested solutions (the student bundle does not).
    "imports_the_solutions": '''
try:
    from course_admin.colour.solutions import replay_actor_loss
except Exception:
    def replay_actor_loss(log_pi, mu, advantage, rho_max):
        return (log_pi * 0.0).mean()
''',
    "nan": '''
def replay_actor_loss(log_pi, mu, advantage, rho_max):
    return (log_pi * float("nan")).mean()
''',
    "files_for_the_grader": '''
import json, pathlib
from course_utils.paths import ASSETS
for target in (ASSETS / "check_records.json", pathlib.Path("check_records.json"), pathlib.Path("gradebook.db")):
    try:
        target.write_text(json.dumps({"test_replay_actor_loss": []}))
    except OSError:
        pass
''' + WRONG_ACTOR,
}

ATTACKS_ON_MEMORY = {
    "rigged_memory": '''
class Yes(int):
    def __eq__(self, other):
        return True
    __hash__ = int.__hash__

class AlwaysEqual(list):
    def __eq__(self, other):
        return True

class ReplayMemory:
    def __init__(self, capacity=250):
        self.capacity = capacity
        self.slots = AlwaysEqual([None] * capacity)
        self.write_pointer = Yes(0)
        self.read_pointer = 0

    def __len__(self):
        return Yes(0)

    def write(self, experience):
        pass

    def read(self):
        return AlwaysEqual()
''',
}


def _replace(notebook: dict, grade_id: str, source: str) -> dict:
    notebook = json.loads(json.dumps(notebook))
    notebook["cells"][cell_index(notebook, grade_id)]["source"] = source.lstrip("\n")
    return notebook


def load_cut(kind: str) -> dict:
    """Tutorial 2's solution or student notebook (``submissions.load``) on its grading path
    (``submissions.grading_path``)."""
    return grading_path(load(kind, ASSIGNMENT))


def cut_source(folder: Path) -> Path:
    """The instructor notebook cut like the corpus (``load_cut``), as a ``source`` folder for
    ``grading.autograde``."""
    return grading_path_source(folder, ASSIGNMENT)


def build(folder: Path) -> dict[str, tuple[str, str]]:
    """Write every attack as a submission: {student: (grade id attacked, grade id answered)}."""
    solution, student = load_cut("solution"), load_cut("student")
    attacks = {}
    for name, source in ATTACKS_ON_ACTOR.items():
        write(folder, name, _replace(with_answer(student, solution, "replay_memory"), "replay_actor_loss", source))
        attacks[name] = (ACTOR, MEMORY)
    for name, source in ATTACKS_ON_MEMORY.items():
        write(folder, name, _replace(with_answer(student, solution, "replay_actor_loss"), "replay_memory", source))
        attacks[name] = (MEMORY, ACTOR)
    return attacks


def in_kernel_source(folder: Path) -> Path:
    """The instructor notebook with each hidden test judging in the student's kernel, as before
    (``assert check_x(answer)`` instead of ``X.submit(answer)``): the planted regression."""
    notebook = load_cut("solution")
    for cell in notebook["cells"]:
        text = "".join(cell["source"])
        for name, check in (("ACTOR", "check_replay_actor_loss"), ("MEMORY", "check_replay_memory")):
            text = re.sub(rf"import {name}\n{name}.submit\((\w+)\)", rf"import {check}\nassert {check}(\1)", text)
        cell["source"] = text
    return source_folder(folder, ASSIGNMENT, notebook)


# --------------------------------------------------------------------------------------
# The monkeypatch attack on one exercise of every other tutorial: the notebook answered honestly
# everywhere else (the solution notebook), the attacked answer cell patching that tutorial's
# checks (and every Exercise's judge) and answering wrongly. Graded in each tutorial's own
# grading test run: {tutorial: (notebook, solution cell attacked, its hidden-test grade id, source)}.

_PATCH = """
import course_utils.checking as _checking
import course_utils.{module} as _checks
for _name in dir(_checks):
    if _name.startswith("check_"):
        setattr(_checks, _name, lambda *args, **kwargs: True)
for _exercise in getattr(_checks, "EXERCISES", {{}}).values():
    object.__setattr__(_exercise, "judge", lambda *args: None)
_checking.outcome = lambda name, check: (True, f"{{name}}: all checks passed. Well done!")
"""

MONKEYPATCH_ATTACKS = {
    "harlow": ("01_harlow_meta_rl", "evaluate_individual", "test_evaluate_individual", _PATCH.format(module="harlow.checks") + '''
def evaluate_individual(env, agent, optimizer_func, num_tasks=10, num_gradient_steps=25, num_trials=6,
                        num_evaluation_trials=20):
    return 0.0, [0.0] * num_tasks
'''),
    "lunar": ("03_policy_gradients", "entropy_loss", "test_entropy_loss", _PATCH.format(module="lunar.checks.losses") + '''
class ActionEntropyLoss(nn.Module):
    def __init__(self, n_actions, beta=1.0):
        super().__init__()
        self.n_actions, self.beta, self.max_entropy = n_actions, beta, 1.0

    def calc_max_entropy(self):
        return 1.0

    def forward(self, batch, action_scores):
        loss_e = action_scores.sum() * 0.0
        return loss_e, dict(loss_e=loss_e.item())
'''),
    "replay": ("04_prioritized_replay", "memory_add", "test_memory_add", _PATCH.format(module="replay.checks") + '''
class CircularMemory(CircularReplayMemory):
    def add(self, batch):
        return self
'''),
}


def monkeypatch_attack(tutorial: str) -> dict:
    """The solution notebook of ``tutorial`` with one answer cell replaced by the monkeypatch attack."""
    notebook, cell, _, source = MONKEYPATCH_ATTACKS[tutorial]
    return _replace(load("solution", notebook), cell, source)
