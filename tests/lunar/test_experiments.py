"""The notebook's experiments (``lunar.experiments``): the on-disk cache and the code fingerprint."""

import torch

from course_utils.lunar.experiments import code_fingerprint, run_experiment
from course_utils.lunar.solutions import ActionEntropyLoss, Episode, PolicyNet, PolicyTrainer, VanillaPolicyGradientLoss

from .mistakes import FlippedVanilla, ReversedQvals


def test_experiments_are_cached_per_mode_and_code(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_CACHE", str(tmp_path))
    monkeypatch.setenv("COURSE_FAST", "1")
    hp = dict(batch_size=4, gamma=0.99, learn_rate=1e-3, hidden_layers=(8,))
    args = ("vpg", PolicyNet, [VanillaPolicyGradientLoss()], PolicyTrainer, hp, 4)
    first = run_experiment(*args, progress=False)
    files = sorted(p.name for p in (tmp_path / "lunar").glob("*.json"))
    assert len(files) == 1 and files[0].startswith("vpg-fast-4ep-seed0-")
    again = run_experiment(*args, progress=False)  # reloaded, not retrained
    assert again["mean_reward"] == first["mean_reward"]
    assert all(torch.equal(again["model_state"][k], first["model_state"][k]) for k in first["model_state"])
    monkeypatch.setenv("COURSE_FAST", "0")
    run_experiment(*args, progress=False)  # full mode never reuses fast results
    run_experiment("vpg", PolicyNet, [FlippedVanilla()], PolicyTrainer, hp, 4, progress=False)  # other code
    names = sorted(p.name for p in (tmp_path / "lunar").glob("*.json"))
    assert len(names) == 3 and sum(n.startswith("vpg-full-") for n in names) == 2


def test_code_fingerprint_follows_the_code():
    assert code_fingerprint(Episode) == code_fingerprint(Episode)
    assert code_fingerprint(Episode) != code_fingerprint(ReversedQvals)
    assert code_fingerprint(ActionEntropyLoss(4, 0.5)) != code_fingerprint(ActionEntropyLoss(4, 0.7))
    assert code_fingerprint({"gamma": 0.99}) != code_fingerprint({"gamma": 0.999})
