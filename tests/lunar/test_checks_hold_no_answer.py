"""Tutorial 3's check modules ship in the student wheel, so none of their code may compute what an
exercise asks, not even as a step a copy could reuse: here, the discounted reward-to-go of
``Episode.calc_qvals``. Every expression in the check modules' functions is evaluated on an
episode's rewards (given and reversed: discounting the past of the reversed episode is the
reward-to-go), with the names a check gives such code; none may come out as the reward-to-go.
"""

import ast
import importlib
import inspect
from pathlib import Path

import numpy as np
import pytest

import course_utils.lunar.checks as checks

MODULES = sorted(f"course_utils.lunar.checks.{p.stem}" for p in Path(checks.__file__).parent.glob("*.py"))


def _reward_to_go(rewards: np.ndarray, gamma: float) -> np.ndarray:
    out, running = np.zeros(len(rewards)), 0.0
    for t in range(len(rewards) - 1, -1, -1):
        running = rewards[t] + gamma * running
        out[t] = running
    return out


def _expressions(module) -> list[ast.expr]:
    tree = ast.parse(inspect.getsource(module))
    functions = [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.Lambda)]
    return [node for f in functions for node in ast.walk(f) if isinstance(node, ast.expr)
            and not isinstance(node, ast.Name | ast.Constant | ast.Attribute | ast.Starred)
            and not isinstance(getattr(node, "ctx", ast.Load()), ast.Store | ast.Del)]


def _as_values(value, length: int):
    try:
        array = np.asarray(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        return None
    return array if array.shape == (length,) else None


@pytest.mark.parametrize("name", MODULES)
def test_no_expression_of_a_check_module_is_the_reward_to_go(name):
    module = importlib.import_module(name)
    rng = np.random.default_rng(5)
    rewards, gamma = np.round(rng.normal(0.0, 3.0, 7), 3), 0.9
    want = _reward_to_go(rewards, gamma)
    found = []
    for node in _expressions(module):
        code = compile(ast.Expression(body=node), name, "eval")
        for given in (rewards, rewards[::-1]):
            for form in (given, given.tolist()):
                names = {**vars(module), "rewards": form, "gamma": gamma, "got": np.zeros(7), "expected": np.zeros(7)}
                try:
                    value = _as_values(eval(code, names), len(rewards))  # noqa: S307 - the course's own source
                except Exception:  # noqa: BLE001 - most expressions need names only a check's run binds
                    continue
                if value is not None and (np.allclose(value, want) or np.allclose(value[::-1], want)):
                    found.append(ast.unparse(node))
    assert not found, f"{name} computes the discounted reward-to-go: {sorted(set(found))}"
