"""``course_utils.lunar`` is in layers: each module imports only the modules of the layers
below it (also inside functions), so there are no import cycles; and no module is over 600
lines."""

import ast
from pathlib import Path

import pytest

import course_utils.lunar

PACKAGE = Path(course_utils.lunar.__file__).parent
LAYERS = ["env", "harness", "solutions", "rollouts", "experiments", "aac", "expected", "bench", "checks"]
"""Lowest first. ``checks`` is a subpackage, itself in layers: common, agents, losses."""
CHECK_LAYERS = ["common", "agents", "losses"]


def _modules():
    return sorted(p for p in PACKAGE.rglob("*.py") if p.name != "__init__.py" or p.parent != PACKAGE)


def _lunar_imports(path: Path) -> set[str]:
    """The ``course_utils.lunar`` modules ``path`` imports, as dotted names below the package."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        for name in names:
            if name.startswith("course_utils.lunar."):
                found.add(name.removeprefix("course_utils.lunar."))
    return found


def _rank(dotted: str) -> tuple[int, int] | None:
    parts = dotted.split(".")
    if parts[0] not in LAYERS:
        return None  # a name imported from a module (``from course_utils.lunar.env import make_env``)
    inner = CHECK_LAYERS.index(parts[1]) if parts[0] == "checks" and len(parts) > 1 and parts[1] in CHECK_LAYERS else -1
    return LAYERS.index(parts[0]), inner


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_modules_import_only_lower_layers(path):
    relative = path.relative_to(PACKAGE).with_suffix("")
    own = _rank(".".join(p for p in relative.parts if p != "__init__"))
    assert own is not None, f"{relative} is in no layer: add it to LAYERS"
    for name in _lunar_imports(path):
        rank = _rank(name)
        if rank is None or rank[0] == own[0] and (own[1] == -1 or rank[1] == -1):
            continue  # a package's __init__ re-exporting its modules
        assert rank < own, f"{relative} imports course_utils.lunar.{name}, which is not below it"


def test_harness_does_not_import_the_solutions():
    assert not {name for name in _lunar_imports(PACKAGE / "harness.py") if name.startswith("solutions")}


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_over_600_lines(path):
    assert len(path.read_text().splitlines()) <= 600
