"""The notebook's experiments (``lunar.experiments``): the on-disk cache and the code fingerprint."""

import ast
import json

import torch

from course_utils.lunar import reference
from course_utils.lunar.experiments import EXPERIMENTS, code_fingerprint, run_experiment, stored_results
from course_utils.lunar.solutions import (
    ActionEntropyLoss,
    Episode,
    PolicyNet,
    PolicyTrainer,
    TrainBatch,
    VanillaPolicyGradientLoss,
)
from course_utils.paths import SOLUTIONS

from .mistakes import FlippedVanilla, ReversedQvals


def test_experiments_are_cached_per_mode_and_code(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_CACHE", str(tmp_path))
    monkeypatch.setenv("COURSE_FAST", "1")
    hp = dict(batch_size=4, gamma=0.99, learn_rate=1e-3, hidden_layers=(8,))
    args = ("vpg", PolicyNet, [VanillaPolicyGradientLoss()], PolicyTrainer, hp, 4)
    types = dict(batch_type=TrainBatch, episode_type=Episode)
    first = run_experiment(*args, progress=False, **types)
    files = sorted(p.name for p in (tmp_path / "lunar").glob("*.json"))
    assert len(files) == 1 and files[0].startswith("vpg-fast-4ep-seed0-")
    again = run_experiment(*args, progress=False, **types)  # reloaded, not retrained
    assert again["mean_reward"] == first["mean_reward"]
    assert all(torch.equal(again["model_state"][k], first["model_state"][k]) for k in first["model_state"])
    monkeypatch.setenv("COURSE_FAST", "0")
    run_experiment(*args, progress=False, **types)  # full mode never reuses fast results
    run_experiment("vpg", PolicyNet, [FlippedVanilla()], PolicyTrainer, hp, 4, progress=False, **types)  # other code
    names = sorted(p.name for p in (tmp_path / "lunar").glob("*.json"))
    assert len(names) == 3 and sum(n.startswith("vpg-full-") for n in names) == 2


def test_code_fingerprint_follows_the_code():
    assert code_fingerprint(Episode) == code_fingerprint(Episode)
    assert code_fingerprint(Episode) != code_fingerprint(ReversedQvals)
    assert code_fingerprint(ActionEntropyLoss(4, 0.5)) != code_fingerprint(ActionEntropyLoss(4, 0.7))
    assert code_fingerprint({"gamma": 0.99}) != code_fingerprint({"gamma": 0.999})


def _notebook_dict(name: str) -> dict:
    """``pg_hp`` or ``aac_hp`` as the solution notebook defines it."""
    cells = json.loads((SOLUTIONS / "03_policy_gradients.ipynb").read_text())["cells"]
    for cell in (c for c in cells if c["cell_type"] == "code"):
        for node in ast.parse("".join(line for line in cell["source"] if not line.startswith("%"))).body:
            if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == name:
                call = node.value
                return {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords}
    raise AssertionError(f"{name} is not defined in the notebook")


def test_the_stored_runs_are_the_notebooks_experiments_with_its_default_hyperparameters():
    stored = stored_results()
    assert set(stored["runs"]) == {*EXPERIMENTS, "aac"}
    assert stored["max_episodes"] == reference.EXPERIMENT_EPISODES == 3000
    for name, constant in (("pg_hp", reference.PG_HP), ("aac_hp", reference.AAC_HP)):
        notebook = _notebook_dict(name)
        assert notebook == constant
        assert stored[name] == {**notebook, "hidden_layers": list(notebook["hidden_layers"])}
    for run in stored["runs"].values():
        assert run["episode_num"][-1] >= 3000 and len(run["mean_reward"]) == len(run["episode_num"])
        assert "model_state" not in run
