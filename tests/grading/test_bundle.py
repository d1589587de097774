"""The student bundle (``course bundle OUT``): what students receive holds no solution, installs
from its own wheel, and runs every notebook from its own folder, outside this repository."""

import importlib
import inspect
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import student_bundle
from browser.conftest import _missing as browser_missing

from course_admin.exercises import GRADED, TUTORIALS
from course_admin.grading import harvest, skip_cells
from course_admin.grading.bundle import BundleError, build_bundle
from course_utils.paths import ROOT, SOLUTIONS


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    return student_bundle.installed(tmp_path_factory)


def test_an_existing_folder_or_a_stale_tree_is_refused_and_nothing_is_written(bundle, tmp_path):
    before = sorted(p.name for p in bundle["folder"].rglob("*"))
    with pytest.raises(BundleError, match="already exists"):
        build_bundle(bundle["folder"])
    assert sorted(p.name for p in bundle["folder"].rglob("*")) == before
    with pytest.raises(BundleError, match="run `course release`"):
        build_bundle(tmp_path / "new", stale=["notebooks/01_harlow_meta_rl.ipynb differs"])
    assert not (tmp_path / "new").exists()


def test_the_bundle_holds_notebooks_the_student_wheel_a_readme_and_the_two_commands(bundle):
    folder = bundle["folder"]
    assert sorted(p.name for p in (folder / "notebooks").glob("*.ipynb")) == sorted(f"{n}.ipynb" for n in TUTORIALS.values())
    assert [p.name for p in (folder / "wheels").iterdir()] == [bundle["wheel"].name]
    readme, makefile = (folder / "README.md").read_text(), (folder / "Makefile").read_text()
    assert "course lab" in readme and "course check" in readme and bundle["wheel"].name in readme
    assert "download.pytorch.org/whl/cpu" in readme and "Windows" in readme
    assert "lab:" in makefile and "check:" in makefile
    with zipfile.ZipFile(bundle["zip"]) as archive:
        assert {n.split("/", 1)[1] for n in archive.namelist() if "/" in n and not n.endswith("/")} == {
            str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()
        }
    names = zipfile.ZipFile(bundle["wheel"]).namelist()
    assert not [n for n in names if n.startswith("course_admin/") or n.endswith(("solutions.py", "reference.py"))]
    modules = {n for n in names if n.startswith("course_utils/") and n.endswith(".py")}
    student = {str(p.relative_to(ROOT)) for p in (ROOT / "course_utils").rglob("*.py")}
    assert modules == student | {"course_utils/assets/__init__.py"}
    assert "course_utils/assets/checkpoints.json" in names and "course_utils/lunar/checks/losses.py" in names
    assert bundle["dropped"] and all(n.startswith("course_admin/") for n in bundle["dropped"])
    assert "course_admin/lunar/solutions.py" in bundle["dropped"] and "course_admin/grading/autograder.py" in bundle["dropped"]


KNOWN_LEAKS = set()
"""Files of the bundle known to hold solution code: none. Tutorial 4's plain segment trees, plain
prioritized buffer and working memory ``add`` now live only in the harvested, instructor-side
``replay/solutions.py``; any file of the bundle holding solution code fails this test."""


def _windows(text: str, size: int = 3) -> set[str]:
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]
    return {"\n".join(lines[i : i + size]) for i in range(len(lines) - size + 1)}


def _solution_windows() -> set[str]:
    """Every run of three consecutive lines of every solution cell's answer: what a student must
    write themselves (single generic lines such as ``return self`` would match anything)."""
    windows = set()
    for name in TUTORIALS.values():
        for cell in json.loads((SOLUTIONS / f"{name}.ipynb").read_text())["cells"]:
            for block in re.findall(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", "".join(cell["source"]), re.S):
                windows |= _windows(block)
    return windows


def test_no_solution_code_and_no_hidden_test_is_in_the_bundle(bundle):
    texts = {}
    for path in bundle["folder"].rglob("*"):
        if path.suffix in (".ipynb", ".md"):
            texts[str(path.relative_to(bundle["folder"]))] = path.read_text()
    with zipfile.ZipFile(bundle["wheel"]) as wheel:
        texts |= {name: wheel.read(name).decode() for name in wheel.namelist() if name.endswith(".py")}
    solution = _solution_windows()
    assert len(solution) > 100
    leaks = {where for where, text in texts.items() if _windows(text) & solution}
    assert leaks == KNOWN_LEAKS
    for where, text in texts.items():
        assert "BEGIN HIDDEN TESTS" not in text and "BEGIN SOLUTION" not in text, where
        if where.endswith(".ipynb"):
            assert "strict=True)" not in text, where  # a check has no strict mode: hidden tests submit records


@pytest.fixture(scope="module")
def student_env(bundle):
    env = {**os.environ, "PYTHONPATH": bundle["pythonpath"], "COURSE_FAST": "1", "COURSE_HEADLESS": "1", "MPLBACKEND": "Agg"}
    return env, bundle["site"]


def test_the_installed_student_package_checks_itself_and_lacks_the_instructor_commands(bundle, student_env):
    env, site = student_env
    run = subprocess.run([sys.executable, "-m", "course_utils.cli", "check"], cwd=bundle["folder"], env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "Ready" in run.stdout and "❌" not in run.stdout
    where, visible = student_bundle.what_imports(env, bundle["folder"])
    assert where.is_relative_to(site) and visible == []
    train = subprocess.run([sys.executable, "-m", "course_utils.cli", "train", "colour"], cwd=bundle["folder"], env=env,
                           capture_output=True, text=True, timeout=300)
    assert train.returncode == 2 and "invalid choice: 'train'" in train.stderr


def _nbmake(notebooks: list[Path], env: dict, cwd: Path, overwrite: bool = False) -> str:
    """``pytest --nbmake`` on ``notebooks``, in a Python started with ``env`` in ``cwd``: each
    notebook runs top to bottom in its own folder (nbmake's working directory); with
    ``overwrite`` its executed cells, outputs included, are written back over it. Asserts that
    every notebook ran without an error; returns pytest's output."""
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbmake", "--nbmake-timeout=600",
         *(["--overwrite"] if overwrite else []), *map(str, notebooks)],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=1500,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert f"{len(notebooks)} passed" in run.stdout, run.stdout[-2000:]
    return run.stdout


@pytest.mark.skipif(browser_missing() is None, reason="the browser suite runs every notebook unanswered from the "
                    "bundle's wheel, in JupyterLab (tests/browser/test_notebooks_browser.py)")
def test_every_notebook_runs_unanswered_from_the_bundle(bundle, student_env, tmp_path):
    """Where the browser suite cannot run: every student notebook, unanswered, from the bundle."""
    env, _ = student_env
    _nbmake(sorted((bundle["folder"] / "notebooks").glob("*.ipynb")), env, bundle["folder"])


def _answered(student: Path, target: Path) -> int:
    """``student`` with every solution cell replaced by the solution notebook's (markers removed),
    up to its last check cell, written to ``target``; returns the number of check cells (each
    prints one verdict). The cells after the last check (the experiments that train the answers)
    run answered in the grading tests' "full" submissions, and unanswered from this bundle in the
    browser suite."""
    answers = dict(harvest.solution_cells(SOLUTIONS / student.name))
    notebook = json.loads(student.read_text())
    for cell in notebook["cells"]:
        grade_id = (cell.get("metadata", {}).get("nbgrader") or {}).get("grade_id")
        if cell["cell_type"] == "code" and grade_id in answers:
            cell["source"] = answers[grade_id]
    checks = [i for i, cell in enumerate(notebook["cells"]) if "# Check your answer" in "".join(cell["source"])]
    cells = notebook["cells"][: checks[-1] + 1]
    # The given demonstrations no check cell needs (the name analysis grading skips them by) are
    # left out: they run unanswered in the browser suite, and what they compute is tested in each
    # tutorial's own tests (live evolutions, the variance experiment) at the same size.
    candidates = {i for i, cell in enumerate(cells) if skip_cells.is_given(cell) and i not in checks}
    left_out = candidates - skip_cells.needed(cells, candidates)
    notebook["cells"] = [cell for i, cell in enumerate(cells) if i not in left_out]
    target.write_text(json.dumps(notebook))
    return len(checks)


def _verdicts(notebook: Path) -> dict[str, int]:
    """The passed (✅) and failed (❌) verdicts that ``notebook``'s executed code cells printed."""
    text = "".join(
        "".join(output.get("text", ""))
        for cell in json.loads(notebook.read_text())["cells"] if cell["cell_type"] == "code"
        for output in cell.get("outputs", [])
    )
    return {"passed": text.count("\u2705"), "failed": text.count("\u274c")}


def test_every_notebook_answered_with_the_solutions_passes_every_check_from_the_bundle(bundle, student_env, tmp_path):
    env, _ = student_env
    answered, checks = tmp_path / "answered", {}
    answered.mkdir()
    for student in sorted((bundle["folder"] / "notebooks").glob("*.ipynb")):
        checks[answered / student.name] = _answered(student, answered / student.name)
    _nbmake(sorted(checks), env, answered, overwrite=True)  # the executed notebooks hold the verdicts
    for notebook, count in checks.items():
        verdicts = _verdicts(notebook)
        assert verdicts["failed"] == 0 and verdicts["passed"] >= count > 0, (notebook.name, verdicts, count)


LEAK_PROBE = """
import importlib, inspect, json, pkgutil, sys
import matplotlib.pyplot as plt
import course_utils
from course_utils import checking
from course_utils.checking import passes

checking.TIME_LIMIT = 10.0  # as in the notebooks: a candidate that loops is no answer either
CALL_SHAPES = json.loads(sys.argv[1])
CHECKS = json.loads(sys.argv[2])  # [grade id, "module:check"] of every checked exercise (the index is course_admin's)


def callable_as(candidate, shape) -> bool:
    # Whether the candidate accepts the call the model answer accepts (its required arguments,
    # positionally with its keyword-only ones by name, or all by name): a function that accepts
    # neither raises TypeError on the check's first call, and is no answer.
    if shape is None:
        return True
    try:
        signature = inspect.signature(candidate)
    except (TypeError, ValueError):
        return True
    for args, kwargs in ((range(shape["positional"]), dict.fromkeys(shape["keyword_only"], 0)),
                         ((), dict.fromkeys(shape["names"], 0))):
        try:
            signature.bind(*args, **kwargs)
            return True
        except TypeError:
            pass
    return False


tried = {}
names = [m.name for m in pkgutil.walk_packages(course_utils.__path__, "course_utils.")]
candidates = {}
for name in names:
    module = importlib.import_module(name)
    for attr, value in vars(module).items():
        if attr.startswith("_") or getattr(value, "__module__", None) != name:
            continue
        if inspect.isclass(value) or inspect.isfunction(value):
            candidates[f"{name}:{attr}"] = value
leaks = []
for grade_id, target in CHECKS:
    module, _, function = target.partition(":")
    check = getattr(importlib.import_module(module), function)
    params = list(inspect.signature(check).parameters)
    kinds = [p[0].isupper() or p.endswith("_class") for p in params]  # class exercises take classes, others functions
    fits = [
        {where for where, c in candidates.items()
         if inspect.isclass(c) == kind and (kind or callable_as(c, CALL_SHAPES.get(param)))}
        for param, kind in zip(params, kinds)
    ]
    if len(params) == 1:
        tries = [((where,), (candidates[where],)) for where in sorted(fits[0])]
    else:  # answers that go together come from one module: try every ordered pair of its names
        tries = [
            ((wa, wb), (candidates[wa], candidates[wb]))
            for wa in sorted(fits[0]) for wb in sorted(fits[1]) if wa.split(":")[0] == wb.split(":")[0]
        ]
    tried[grade_id] = len(tries)
    for where, answers in tries:
        if passes(check, *answers):
            leaks.append([grade_id, "+".join(where)])
        plt.close("all")  # candidates that plot: hundreds of open figures slow every later call
print(json.dumps({"candidates": len(candidates), "tried": tried, "leaks": sorted(leaks)}))
"""

KNOWN_ANSWER_LEAKS = set()
"""Public names of the student package that pass an exercise's hidden test when handed in as the
answer: none. Tutorial 4's ``CircularReplayMemory.add`` raises ``NotImplementedError`` (Exercise 1),
its buffer's stand-in memory never wraps, and the course's trees and buffers are instructor code
(and the shared discounted-return helper takes its discount by keyword); any such name fails this
test."""


def _call_shapes() -> dict[str, dict]:
    """{answer name: the call its model answer accepts} for the exercises whose answer is a
    function: how many positional arguments it requires, its required keyword-only ones, and all
    its required names. A candidate function that cannot be called so is not run against the
    check (it would fail on a TypeError): 6,000 calls fewer, most of the probe's time."""
    shapes = {}
    for tutorial in TUTORIALS:
        module = importlib.import_module(f"course_admin.{tutorial}.solutions")
        for name, value in vars(module).items():
            if not inspect.isfunction(value) or value.__module__ != module.__name__:
                continue
            required = [p for p in inspect.signature(value).parameters.values()
                        if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
            shapes[name] = {
                "positional": sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in required),
                "keyword_only": [p.name for p in required if p.kind is p.KEYWORD_ONLY],
                "names": [p.name for p in required if p.kind is not p.POSITIONAL_ONLY],
            }
    return shapes


def test_no_public_function_or_class_of_the_student_package_is_an_answer(bundle, student_env, tmp_path):
    env, _ = student_env
    checks = [(row.grade_id, row.check) for row in GRADED if not row.manual]
    run = subprocess.run([sys.executable, "-c", LEAK_PROBE, json.dumps(_call_shapes()), json.dumps(checks)], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=1200)
    assert run.returncode == 0, run.stderr[-4000:]
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report["candidates"] > 100
    # every exercise is tried against candidates that its call fits (dozens each)
    assert min(report["tried"].values()) >= 10, report["tried"]
    assert {tuple(leak) for leak in report["leaks"]} == KNOWN_ANSWER_LEAKS


TWINS = {
    # name defined in the student package: the exercise it answered when the red team copied it
    "make_offspring": "test_genetic_algorithm", "unstack_agent": "test_lamarckian_individual",
    "a2c_loss": "test_replay_actor_loss and tutorial 3's losses",
    "discounted_returns": "test_calc_qvals", "ReplayBuffer": "test_memory_add, test_replay_memory",
    "VectorPrioritizedReplayBuffer": "test_prioritized_buffer", "VectorSumTree": "test_segment_trees",
    "VectorMinTree": "test_segment_trees", "td_quantities": "test_td_loss", "_mlp": "test_policy_net",
    "ActorCriticNet": "test_aac_net", "play_together": "test_agent_step", "expected_batch": "test_from_episodes",
    "batch_gradients": "test_score_function", "NumpyActorCritic": "test_aac_loss", "train_aac": "test_aac_loss",
    "gae_advantages": "the optional GAE exercise",
}
"""What a red team copied out of the student wheel into answer cells (all of it earned marks).
``harlow.scoring.stack_agents`` stays: it stacks weights for the batched scorer, and the red team's
Lamarckian adapter needed the course's ``unstack_agent`` (gone) beside it."""
NOT_TWINS = {"course_utils/replay/buffer.py:ReplayBuffer": "the DQN's given buffer: no ring, each transition goes into "
                                                           "the memory it is given (the student's)"}


def test_the_student_package_defines_none_of_the_answers_a_red_team_copied():
    """The boundary of the student wheel (README, "What the student package holds"): no module of
    ``course_utils`` defines the course code that answered an exercise when copied into a cell."""
    import ast

    from course_utils.paths import PACKAGE

    found = {}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            where = f"{path.relative_to(PACKAGE.parent)}:{getattr(node, 'name', '')}"
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name in TWINS \
                    and where not in NOT_TWINS:
                found[where] = TWINS[node.name]
    assert found == {}
