"""The package installs like a real one: the wheel carries its assets, and an installed copy
(no editable install, no repository on ``sys.path``) finds them through importlib.resources."""

import json
import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from course_admin.grading.bundle import build_wheel
from course_utils.paths import ASSETS, PACKAGE, ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_every_subpackage_is_listed_for_the_wheel():
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    inits = [*PACKAGE.rglob("__init__.py"), *(ROOT / "course_admin").rglob("__init__.py")]
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in inits if "__pycache__" not in p.parts}
    assert listed == found | {"course_utils.assets", "course_utils.assets.checkpoints"}
    assert PYPROJECT["tool"]["setuptools"]["package-dir"] == {"course_utils.assets": "assets"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("wheel"))


def test_the_wheel_carries_every_asset(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    registry = json.loads((ASSETS / "checkpoints.json").read_text())
    for entry in registry.values():
        assert f"course_utils/assets/checkpoints/{entry['file']}" in names
    for path in ASSETS.glob("*"):
        if path.is_file() and path.suffix in (".json", ".mplstyle"):
            assert f"course_utils/assets/{path.name}" in names, path.name
    assert not any(name.startswith(("tests/", "solutions/", "notebooks/")) for name in names)
    modules = {name for name in names if name.startswith("course_utils/") and name.endswith(".py")}
    assert modules == {str(p.relative_to(ROOT)) for p in PACKAGE.rglob("*.py")} | {"course_utils/assets/__init__.py"}
    admin = {name for name in names if name.startswith("course_admin/") and name.endswith(".py")}
    assert admin == {str(p.relative_to(ROOT)) for p in (ROOT / "course_admin").rglob("*.py")}


INSTALLED_CHECK = """
import json, sys
import course_utils
from course_utils import paths
from course_utils.checkpoints import load_checkpoint, read_registry
from course_utils.plotting import use_course_style
from course_utils.harlow.pretrained import load_history
from course_utils.lunar.expected import load_expected
assert paths.ASSETS.is_relative_to(paths.PACKAGE), paths.ASSETS
use_course_style()
sizes = {name: len(load_checkpoint(name)) for name in read_registry()}
print(json.dumps({"package": str(paths.PACKAGE), "checkpoints": sizes, "generations": len(load_history()["generation"]),
                  "expected": sorted(load_expected())}))
"""


def _run_installed(site: Path, code: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(site), "COURSE_FAST": "1", "MPLBACKEND": "Agg"}
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_an_installed_wheel_finds_its_assets_from_any_folder(wheel, tmp_path):
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), str(wheel)],
                   check=True, capture_output=True, timeout=300)
    elsewhere = tmp_path / "somewhere"
    elsewhere.mkdir()
    result = _run_installed(site, INSTALLED_CHECK, elsewhere)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert Path(report["package"]).is_relative_to(site)  # not the repository's copy
    assert set(report["checkpoints"]) == set(json.loads((ASSETS / "checkpoints.json").read_text()))
    assert report["generations"] == 801 and "losses" in report["expected"]

    damaged = site / "course_utils" / "assets" / "checkpoints" / "colour_mode1.pt"
    damaged.write_bytes(damaged.read_bytes()[:-10])
    result = _run_installed(site, "from course_utils.colour import load_agent; load_agent('mode1')", elsewhere)
    assert result.returncode != 0
    assert "CheckpointError" in result.stderr and "does not match the registry" in result.stderr
    assert "Reinstall the course package" in result.stderr and "FileNotFoundError" not in result.stderr
