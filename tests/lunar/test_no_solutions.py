"""Tutorial 3's checks never use its reference solutions: students do not get
``course_admin.lunar.solutions``, so nothing the checks import may import it.

Shown twice: statically (every import in ``checks/`` and ``expected``, also inside functions,
and the course modules they reach), and by running every check on the reference solutions in
a fresh interpreter where ``course_admin.lunar.solutions`` cannot be imported, the solutions
being loaded from their file under another module name."""

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import course_utils

PACKAGE = Path(course_utils.__file__).parent
LUNAR = PACKAGE / "lunar"
SOLUTIONS_FILE = PACKAGE.parent / "course_admin" / "lunar" / "solutions.py"
STUDENT_SIDE = sorted((LUNAR / "checks").glob("*.py")) + [LUNAR / "expected.py"]
FORBIDDEN = ("course_admin.lunar.solutions", "course_admin.lunar.reference")
"""``reference`` computes the expected values from the solutions: it imports them."""


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every module ``path`` names in an import statement anywhere (also inside functions, and
    ``from package import module``), relative imports resolved, and every string constant that
    looks like a dotted ``course_utils`` name (for ``importlib.import_module``)."""
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path).rpartition(".")[0]
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("course_utils."):
            names.add(node.value.split(":")[0])
    return names


def _file_of(name: str) -> Path | None:
    path = PACKAGE.parent.joinpath(*name.split("."))
    if path.with_suffix(".py").is_file():
        return path.with_suffix(".py")
    if (path / "__init__.py").is_file():
        return path / "__init__.py"
    return None  # not a module: a name imported from one


def _is_forbidden(name: str) -> bool:
    return any(name == bad or name.startswith(bad + ".") for bad in FORBIDDEN)


@pytest.mark.parametrize("path", STUDENT_SIDE, ids=lambda p: str(p.relative_to(LUNAR)))
def test_student_side_modules_do_not_import_the_solutions(path):
    assert not {name for name in _imports(path) if _is_forbidden(name)}


def test_the_course_modules_the_checks_reach_do_not_import_the_solutions():
    """Following imports from the checks through every course module they reach. Not followed: the
    ``__init__`` of the packages above an imported module, which Python runs too; for
    ``course_utils.lunar``'s, the notebook's front door, the subprocess test below shows it."""
    seen, todo = {}, [(_module_name(p), p) for p in STUDENT_SIDE]
    while todo:
        name, path = todo.pop()
        if name in seen:
            continue
        seen[name] = path
        for imported in _imports(path):
            if imported.startswith("course_utils"):
                assert not _is_forbidden(imported), f"{name} imports {imported}"
                file = _file_of(imported)
                if file is not None and (imported != "course_utils.lunar" or name == imported):
                    todo.append((imported, file))
    assert {"course_utils.lunar.expected", "course_utils.lunar.harness", "course_utils.checking"} <= set(seen)


RUN_WITHOUT_SOLUTIONS = textwrap.dedent(
    """
    import importlib.util, json, sys, types
    from pathlib import Path

    BLOCKED = ("course_admin.lunar.solutions", "course_admin.lunar.reference")
    for name in BLOCKED:
        sys.modules[name] = None  # `import` of these now raises ImportError

    import course_utils

    LUNAR = Path(course_utils.__file__).parent / "lunar"
    SOLUTIONS_FILE = Path(course_utils.__file__).parent.parent / "course_admin" / "lunar" / "solutions.py"
    try:
        import course_utils.lunar
        front_door = "imported"
    except ImportError:
        # The package's front door re-exports the solutions for the notebook; the checks do not
        # need it: stand in an empty package, so only the checks' own imports are tested.
        for name in [n for n in sys.modules if n.startswith("course_utils.lunar") and n not in BLOCKED]:
            del sys.modules[name]
        package = types.ModuleType("course_utils.lunar")
        package.__path__ = [str(LUNAR)]
        sys.modules["course_utils.lunar"] = course_utils.lunar = package
        front_door = "bypassed"

    from course_admin.exercises import GRADED

    # The harvested reference solutions, from their file under another name.
    spec = importlib.util.spec_from_file_location("harvested_reference", SOLUTIONS_FILE)
    ref = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = ref
    spec.loader.exec_module(ref)

    CANDIDATES = {
        "check_policy_net": ref.PolicyNet,
        "check_agent_distribution": ref.PolicyAgent,
        "check_agent_step": ref.PolicyAgent,
        "check_calc_qvals": ref.Episode,
        "check_from_episodes": ref.TrainBatch,
        "check_score_function": ref.score_function_gradient,
        "check_vpg_loss": ref.VanillaPolicyGradientLoss,
        "check_bpg_loss": ref.BaselinePolicyGradientLoss,
        "check_entropy_loss": ref.ActionEntropyLoss,
        "check_policy_trainer": ref.PolicyTrainer,
        "check_aac_net": ref.AACPolicyNet,
        "check_aac_agent": ref.AACPolicyAgent,
        "check_aac_loss": ref.AACPolicyGradientLoss,
    }
    every_check = {row.check.partition(":")[2]: row.check for row in GRADED if row.tutorial == "lunar" and row.check}
    assert set(CANDIDATES) == set(every_check), set(CANDIDATES) ^ set(every_check)

    def check(target):
        module, _, name = target.partition(":")
        return getattr(importlib.import_module(module), name)

    passed = {name: check(every_check[name])(candidate) for name, candidate in CANDIDATES.items()}
    solutions_file = str(SOLUTIONS_FILE)
    loaded = sorted(
        name for name, module in sys.modules.items()
        if module is not None and getattr(module, "__file__", None) == solutions_file and name != spec.name
    )
    print(json.dumps({
        "passed": passed,
        "front_door": front_door,
        "blocked": [sys.modules.get(name, "absent") is None for name in BLOCKED],
        "solutions_loaded_as": loaded,
    }))
    """
)


def test_every_check_passes_the_reference_without_the_solutions_module():
    env = {**os.environ, "COURSE_FAST": "1", "COURSE_HEADLESS": "1", "MPLBACKEND": "Agg"}
    result = subprocess.run(
        [sys.executable, "-c", RUN_WITHOUT_SOLUTIONS],
        cwd=PACKAGE.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert len(report["passed"]) == 13 and all(report["passed"].values()), report["passed"]
    assert report["blocked"] == [True, True]  # still unimportable at the end: nothing replaced them
    assert report["solutions_loaded_as"] == []  # the solutions ran only as the copy the test loaded
