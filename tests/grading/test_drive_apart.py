"""Marks for the student's own code: answers that wrap course code score 0 on their exercise.

``adapters/`` holds, per graded exercise, the smallest wrappers a red-team student found around
course code the student wheel ships (each file: ``<grade_id>__<what it wraps>.py``, the text of
the answer cell). Each is handed in in place of the course's solution cell, and the hidden cases
are driven as the grader drives them (``drive_apart``: a child per exercise that can read only
its own check and the code the notebook gives every answer), then judged in this process.
"""

from __future__ import annotations

import ast
import importlib
import json
import re
import secrets
from pathlib import Path

import nbformat
import pytest

from course_admin.exercises import GRADED, TUTORIALS
from course_admin.grading import drive_apart, judging
from course_admin.grading.sandbox import Limits
from course_utils.paths import NOTEBOOKS, SOLUTIONS

ADAPTERS = Path(__file__).parent / "adapters"


def _graded(grade_id: str):
    return next(cell for cell in GRADED if cell.grade_id == grade_id)


def _notebook(tutorial: str):
    return nbformat.reads((SOLUTIONS / f"{TUTORIALS[tutorial]}.ipynb").read_text(), as_version=4)


def _with_answer(nb, solution_id: str, source: str):
    for cell in nb.cells:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == solution_id:
            cell.source = source
            return nb
    raise KeyError(solution_id)


def drive_many(cases: list[tuple], tmp_path: Path, allow_list: bool = True) -> list[tuple[bool, str]]:
    """Drive each (notebook, grade_id) apart, as ``DriveApart`` does, in one runner; judge here."""
    workdir = tmp_path / f"drive-{secrets.token_hex(3)}"
    (workdir / ".tmp").mkdir(parents=True)  # tmp_path itself is made on the way
    spec = {"workdir": str(workdir), "limits": Limits(cell_timeout=60).as_dict(), "token": secrets.token_hex(8)}
    spec_path = tmp_path / "spec.json"
    spec_path.write_text(json.dumps(spec))
    exercises = []
    for nb, grade_id in cases:
        hidden = {i: (grade_id, c.source) for i, c in enumerate(nb.cells)
                  if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id}
        exercises += drive_apart.build_job(nb, hidden, workdir, landlock=True)["exercises"]
    if not allow_list:  # the planted regression: every course file readable, no gate
        everything = drive_apart.closure(_all_modules())
        for exercise in exercises:
            exercise["package_files"] = [str(path) for path in everything.values()]
    results = drive_apart.run_job({"exercises": exercises}, spec_path, spec)
    return [judging.judge_outputs(r["grade_id"], [drive_apart._record_output(r)]) for r in results]


def drive(nb, grade_ids: list[str], tmp_path: Path, allow_list: bool = True) -> dict[str, tuple[bool, str]]:
    return dict(zip(grade_ids, drive_many([(nb, g) for g in grade_ids], tmp_path, allow_list), strict=True))


def _all_modules() -> set[str]:
    from course_utils.paths import PACKAGE

    names = set()
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        names.add(".".join(("course_utils", *(parts[:-1] if parts[-1] == "__init__" else parts))))
    return names


def _adapters() -> list[Path]:
    return sorted(ADAPTERS.glob("test_*.cell"))


@pytest.fixture(scope="module")
def adapter_verdicts(tmp_path_factory) -> dict[str, tuple[bool, str]]:
    """Every adapter handed in in place of its exercise's solution, driven in one runner."""
    cases = []
    for adapter in _adapters():
        graded = _graded(adapter.stem.split("__")[0])
        cases.append((_with_answer(_notebook(graded.tutorial), graded.solution, adapter.read_text()), graded.grade_id))
    verdicts = drive_many(cases, tmp_path_factory.mktemp("adapters"))
    return {adapter.stem: verdict for adapter, verdict in zip(_adapters(), verdicts, strict=True)}


SETUP_NAMES = {"colour", "lunar", "harlow", "replay"}
"""The tutorial packages the notebooks' setup cells bind (``from course_utils import colour``)."""


def _dotted(node) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else None


def _course_references(source: str) -> set[str]:
    """The course names an adapter reaches for by name: its imports from ``course_utils`` or
    ``course_admin``, attribute chains on a setup cell's tutorial package (``colour.agent.x``) and
    string literals that are a dotted course name."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in ("course_utils", "course_admin"):
            names |= {f"{node.module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            names |= {a.name for a in node.names if a.name.split(".")[0] in ("course_utils", "course_admin")}
        elif isinstance(node, ast.Attribute) and (dotted := _dotted(node)) and dotted.split(".")[0] in SETUP_NAMES:
            names.add(f"course_utils.{dotted}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and re.fullmatch(
                r"course_(utils|admin)(\.\w+)+", node.value):
            names.add(node.value)
    return names


def _resolves(name: str) -> bool:
    """``name`` is a module, or a name inside one, that exists in this process."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:end]))
        except ImportError:
            continue
        try:
            for part in parts[end:]:
                found = getattr(found, part)
        except AttributeError:
            return False
        return True
    return False


@pytest.mark.parametrize("adapter", [p.stem for p in _adapters()])
def test_every_adapter_reaches_for_course_code_that_exists(adapter):
    """An adapter whose course code is gone fails its exercise only because the import does: the
    test below would count it and could never fail on it. Such an adapter is deleted with the code."""
    names = _course_references((ADAPTERS / f"{adapter}.cell").read_text())
    assert names, "the adapter names no course code"
    assert all(_resolves(name) for name in names), sorted(name for name in names if not _resolves(name))


@pytest.mark.parametrize("adapter", [p.stem for p in _adapters()])
def test_an_adapter_around_course_code_scores_zero_with_the_reason(adapter, adapter_verdicts):
    passed, message = adapter_verdicts[adapter]
    assert not passed, message
    reasons = ("not available to this exercise", "is not defined", "changed the course's own code")
    assert any(reason in message for reason in reasons), message


def test_honest_answers_keep_their_marks_apart(tmp_path):
    cases = [(_notebook(cell.tutorial), cell.grade_id) for cell in GRADED if cell.check]
    verdicts = drive_many(cases, tmp_path)
    failed = {case[1]: message for case, (passed, message) in zip(cases, verdicts, strict=True) if not passed}
    assert not failed, failed


def test_a_module_another_exercise_s_cell_loads_is_not_this_exercise_s_reason(tmp_path):
    """Every answer cell runs in every exercise's child. The replay memory's cell loading the
    buffer's stand-in memory (code the memory exercise does not give) is the memory exercise's
    reason; the untouched segment-tree exercise fails for its own stub, and its reason does not name
    the module the other cell loaded."""
    nb = _notebook("replay")
    memory, trees = _graded("test_memory_add"), _graded("test_segment_trees")
    source = next(c.source for c in nb.cells if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == memory.solution)
    nb = _with_answer(nb, memory.solution, "import course_utils.replay.standin_memory as _filling\n" + source)
    stub = next(c.source for c in nbformat.reads((NOTEBOOKS / f"{TUTORIALS['replay']}.ipynb").read_text(), as_version=4).cells
                if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == trees.solution)
    nb = _with_answer(nb, trees.solution, stub)
    verdicts = drive(nb, ["test_memory_add", "test_segment_trees"], tmp_path)
    passed, message = verdicts["test_memory_add"]
    assert not passed and "course_utils.replay.standin_memory is not available" in message
    passed, message = verdicts["test_segment_trees"]
    assert not passed and "not available to this exercise" not in message, message
    assert drive_apart.course_code_problems(_judged(nb, verdicts)) == [
        "test_memory_add: 0 points, its answer uses course code the exercise does not give it "
        "(course_utils.replay.standin_memory); an instructor who allows it can override the score in formgrader"]


def _judged(nb, verdicts: dict) -> dict:
    """``nb`` with each failed exercise's verdict as its hidden cell's error output, as
    ``JudgeRecords`` leaves it."""
    cells = []
    for cell in nb.cells:
        verdict = verdicts.get(cell.get("metadata", {}).get("nbgrader", {}).get("grade_id"))
        failed = verdict is not None and not verdict[0]
        cells.append({**cell, "outputs": [{"output_type": "error", "ename": "AssertionError", "evalue": verdict[1]}]
                      if failed else []})
    return {"cells": cells}


def test_without_the_allow_list_the_adapter_would_pass(tmp_path):
    """The planted regression: every course module readable in the child, and the answer that takes
    its importance ratio from the course's ``colour.agent`` passes. The adapter test above is what
    notices; with the allow-list the same answer scores 0 and says which module it reached for."""
    graded = _graded("test_replay_actor_loss")
    source = (ADAPTERS / "test_replay_actor_loss__agent_importance_ratios.cell").read_text()
    source = "from course_utils.colour import agent as _agent\n" + (
        source.replace("colour.agent.", "_agent.").replace("colour.Experience", "_agent.Experience"))
    nb = _with_answer(_notebook("colour"), graded.solution, source)
    without = drive(nb, [graded.grade_id], tmp_path, allow_list=False)[graded.grade_id]
    assert without[0], without[1]
    passed, message = drive(nb, [graded.grade_id], tmp_path)[graded.grade_id]
    assert not passed and "course_utils.colour.agent" in message and "is not available" in message, message


@pytest.mark.parametrize("cell", [c for c in GRADED if c.check], ids=lambda c: c.grade_id)
def test_no_exercise_can_read_its_twins(cell):
    """The course code that computes what an exercise asks (``GradedCell.twins``) is not among the
    files its child may read."""
    readable = set(drive_apart.package_files(cell.grade_id))
    assert not set(cell.twins) & readable, sorted(set(cell.twins) & readable)


def test_the_runner_preloads_only_what_every_child_may_read(tmp_path):
    """The runner imports, before forking, the modules all of a job's exercises may read; a child
    inherits them, so nothing outside that common set may be loaded there (a run in a fresh
    process, as the runner is)."""
    import subprocess
    import sys

    nb = _notebook("lunar")
    ids = [cell.grade_id for cell in GRADED if cell.tutorial == "lunar" and cell.check]
    hidden = {i: (c.metadata.nbgrader.grade_id, c.source) for i, c in enumerate(nb.cells)
              if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") in ids}
    job = drive_apart.build_job(nb, hidden, tmp_path, landlock=True)
    shared = set.intersection(*(set(e["package_files"]) for e in job["exercises"]))
    (tmp_path / "job.json").write_text(json.dumps(job))
    probe = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import drive_runner as r; "
        "r._preload(json.load(open(sys.argv[2]))); "
        "print(json.dumps(sorted(getattr(m, '__file__', None) or '' for n, m in sys.modules.items() "
        "if n.startswith('course_utils.'))))"
    )
    done = subprocess.run([sys.executable, "-c", probe, str(Path(drive_apart.RUNNER).parent), str(tmp_path / "job.json")],
                          capture_output=True, text=True, check=True)
    loaded = {f for f in json.loads(done.stdout.strip().splitlines()[-1]) if f}
    assert loaded, "nothing was preloaded"
    assert loaded <= shared, sorted(loaded - shared)
    twins = {str(drive_apart._module_file(t)) for cell in GRADED if cell.tutorial == "lunar" for t in cell.twins}
    assert not loaded & twins


def test_the_runner_server_restarts_and_the_one_off_runner_is_the_fallback(tmp_path, monkeypatch):
    """Submissions go through one long-lived runner per grading process (torch imported once);
    a server that died is started anew, and without one a runner of the submission's own gives
    the same verdicts."""
    nb = _notebook("colour")
    ids = [cell.grade_id for cell in GRADED if cell.tutorial == "colour" and cell.check]
    assert all(passed for passed, _ in drive(nb, ids, tmp_path / "first").values())
    server = drive_apart._server()
    server.kill()
    server.wait()
    assert all(passed for passed, _ in drive(nb, ids, tmp_path / "restarted").values())
    assert drive_apart._SERVER.process is not server and drive_apart._SERVER.alive() is not None
    monkeypatch.setattr(drive_apart, "_through_server", lambda *args: None)
    assert all(passed for passed, _ in drive(nb, ids, tmp_path / "alone").values())


ESCAPE_PROBE = '''
import ctypes as _ctypes, os as _os, socket as _socket
_found = sorted(_os.listdir("."))  # what an earlier exercise's process left where this one writes
open("left-by-" + str(_os.getpid()), "w").close()
for _name, _try in [("udp", lambda: _socket.socket(_socket.AF_INET, _socket.SOCK_DGRAM)),
                    ("unix", lambda: _socket.socket(_socket.AF_UNIX)), ("pair", _socket.socketpair), ("fork", _os.fork)]:
    try:
        if _try() == 0:
            _os._exit(0)
        _found.append(_name)
    except OSError:
        pass
if _ctypes.CDLL(None).msgget(0x5153, 0o1600) != -1:
    _found.append("msgget")
raise RuntimeError("REACHED:" + ",".join(_found) + ":END")
'''


def test_a_driven_answer_starts_no_process_and_reaches_no_other_exercise(tmp_path):
    """Every answer cell runs in every exercise's process, where other exercises' twins may be
    readable: what it computes there must not reach the process that drives the exercise it
    answers. The probe, handed in as tutorial 3's calc_qvals
    answer, runs first where the policy network is driven, then in its own exercise's process: it
    finds no file the first left, and cannot open a socket, fork or make a message queue."""
    graded = _graded("test_calc_qvals")
    nb = _with_answer(_notebook("lunar"), graded.solution, ESCAPE_PROBE)
    verdicts = drive(nb, ["test_policy_net", "test_calc_qvals"], tmp_path)
    passed, message = verdicts["test_calc_qvals"]
    assert not passed and "REACHED::END" in message, message


def test_the_runner_server_takes_its_folder_with_it_when_stopped():
    from course_admin.grading import drive_apart

    drive_apart._SERVER.stop()
    server = drive_apart._server()
    home = drive_apart._SERVER.home
    assert home is not None and home.is_dir() and server.poll() is None
    drive_apart._SERVER.stop()
    assert server.poll() is not None and not home.exists() and drive_apart._SERVER.home is None


RING_ADAPTER = '''
class CircularMemory(CircularReplayMemory):
    def add(self, batch):
        batch, n = self.prepare(batch)
        ring = ReplayBuffer(1, self.capacity, 1)
        ring.ptr, ring.size = self.pointer, self.size
        for t in range(n):
            slot = ring.store([0], 0, 0.0, [0], False)
            for key, value in batch.items():
                self.memory[key][slot] = value[t]
        self.pointer, self.size = ring.ptr, ring.size
        return self
'''
"""The red team's answer to tutorial 4's memory exercise when the given ``ReplayBuffer`` was a
ring: the ring arithmetic of its ``store``, one transition at a time."""


def test_tutorial_4s_given_replay_buffer_is_no_ring_to_wrap(tmp_path):
    """The ``ReplayBuffer`` every answer of tutorial 4 is given keeps its transitions in the
    student's own memory (it has no ring of its own): the adapter around its ring has nothing to
    call."""
    graded = _graded("test_memory_add")
    nb = _with_answer(_notebook("replay"), graded.solution, RING_ADAPTER)
    passed, message = drive(nb, ["test_memory_add"], tmp_path)["test_memory_add"]
    assert not passed and "ReplayBuffer keeps its transitions in a memory" in message, message


def test_the_child_drives_the_hidden_cases_without_what_only_the_judge_reads(tmp_path):
    """Tutorial 2's hidden cases carry what each typical mistake gives (its hints): one of them is
    T times the right loss. The child that runs the answer gets the cases without them; the judge,
    in the grader, still has them, and the solution keeps its marks."""
    import base64
    import pickle

    from course_admin.grading.judging import exercise_for

    nb = _notebook("colour")
    hidden = {i: ("test_replay_actor_loss", c.source) for i, c in enumerate(nb.cells)
              if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "test_replay_actor_loss"}
    (job,) = drive_apart.build_job(nb, hidden, tmp_path, landlock=True)["exercises"]
    sent = pickle.loads(base64.b64decode(job["hidden_cases"]))  # noqa: S301 (the grader's own)
    judged = exercise_for("test_replay_actor_loss").cases_for(True)
    assert len(sent) == len(judged) and all("hints" in case for case in judged)
    assert not any(key in case for case in sent for key in drive_apart.JUDGE_KEYS)
    assert [{k: v for k, v in case.items() if k != "hints"} for case in judged] == sent
    assert drive_many([(nb, "test_replay_actor_loss")], tmp_path)[0][0]


def test_an_attribute_named_like_a_setup_name_is_not_course_code(tmp_path):
    """Only the names an answer reads as globals count as the setup cell's: a wrong PolicyAgent
    whose methods read ``self.env`` and ``self.json`` (attributes) fails for its own reason, while
    one whose method reads the setup cell's global ``env`` is still reported."""
    graded = _graded("test_agent_distribution")
    stub = next(c.source for c in _notebook("lunar").cells
                if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == graded.solution)
    body = stub[stub.index("class PolicyAgent"):stub.index("    def current_action_distribution")]
    wrong = "        return torch.full((3,), 1 / 3)\n"
    attribute = body + ("    def current_action_distribution(self):\n        self.json = self.env.action_space\n"
                        + wrong + "    def step(self):\n        return self.json\n")
    global_env = body + "    def current_action_distribution(self):\n        env.reset()\n" + wrong
    cases = [(_with_answer(_notebook("lunar"), graded.solution, source), graded.grade_id)
             for source in (attribute, global_env)]
    (passed, message), (passed_global, message_global) = drive_many(cases, tmp_path)
    assert not passed and "setup cell" not in message, message
    assert not passed_global and "your answer uses `env`, which the notebook's setup cell binds" in message_global
    assert drive_apart.course_code_problems(_judged(cases[0][0], {graded.grade_id: (passed, message)})) == []
    assert drive_apart.course_code_problems(_judged(cases[1][0], {graded.grade_id: (passed_global, message_global)})) == [
        "test_agent_distribution: 0 points, its answer uses course code the exercise does not give it "
        "(`env` of the setup cell); an instructor who allows it can override the score in formgrader"]
