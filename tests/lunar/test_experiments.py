"""The notebook's experiments (``lunar.experiments``): the on-disk cache and the code fingerprint."""

import ast
import json

import numpy as np
import pytest
import torch

from course_admin.lunar import reference
from course_admin.lunar.solutions import (
    ActionEntropyLoss,
    Episode,
    PolicyNet,
    PolicyTrainer,
    TrainBatch,
    VanillaPolicyGradientLoss,
)
from course_utils.lunar.experiments import (
    EXPERIMENTS,
    SEEDS,
    Experiment,
    code_fingerprint,
    run_experiment,
    run_experiments,
    seed_band,
    stored_results,
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


def test_run_experiments_trains_every_seed_side_by_side_as_run_experiment_would(tmp_path, monkeypatch):
    """Each run of ``run_experiments`` (in worker processes) is ``run_experiment``'s run (in this
    process), the summary is their mean batch by batch with the band around it, and a second
    call reloads every run from the cache."""
    import multiprocessing as mp

    import matplotlib

    matplotlib.use("Agg")
    from course_utils.lunar.experiments import plot_experiment_results

    monkeypatch.setenv("COURSE_CACHE", str(tmp_path))
    hp = dict(batch_size=4, gamma=0.99, learn_rate=1e-3, hidden_layers=(8,))
    types = dict(batch_type=TrainBatch, episode_type=Episode)
    experiments = {
        "vpg": Experiment(PolicyNet, [VanillaPolicyGradientLoss()], PolicyTrainer, hp, **types),
        "epg": Experiment(PolicyNet, [VanillaPolicyGradientLoss(), ActionEntropyLoss(4, 0.5)], PolicyTrainer, hp, **types),
    }
    results = run_experiments(experiments, 8, seeds=(0, 1), progress=False, workers=2)
    assert not [p for p in mp.active_children() if p.name == "lunar-experiment"]
    assert list(results) == ["vpg", "epg"] and len(list((tmp_path / "lunar").glob("*.json"))) == 4
    alone = run_experiment("epg", *experiments["epg"][:4], 8, seed=1, force=True, progress=False, **types)
    summary = results["epg"]
    assert summary["seeds"] == [0, 1] and summary["runs"][1]["mean_reward"] == alone["mean_reward"]
    assert summary["runs"][0]["mean_reward"] != alone["mean_reward"]
    assert np.allclose(summary["mean_reward"], np.mean([run["mean_reward"] for run in summary["runs"]], axis=0))
    low, high = seed_band(summary)
    assert np.all(low <= np.array(summary["mean_reward"]) + 1e-9) and np.all(np.array(summary["mean_reward"]) <= high + 1e-9)
    assert np.any(low < high)
    fig = plot_experiment_results(results)
    assert len(fig.axes[3].collections) == 2  # one band per experiment
    assert "epg (2 seeds)" in [t.get_text() for t in fig.axes[3].get_legend().get_texts()]
    again = run_experiments(experiments, 8, seeds=(0, 1), progress=False, workers=2)
    assert again["vpg"]["mean_reward"] == results["vpg"]["mean_reward"]
    first, reloaded = results["vpg"]["runs"][0]["model_state"], again["vpg"]["runs"][0]["model_state"]
    assert all(torch.equal(reloaded[k], v) for k, v in first.items())


def test_a_failing_run_stops_every_worker_and_names_the_experiment(tmp_path, monkeypatch):
    import multiprocessing as mp

    class BrokenLoss(VanillaPolicyGradientLoss):
        def forward(self, batch, action_scores):
            raise ValueError("my loss is broken")

    monkeypatch.setenv("COURSE_CACHE", str(tmp_path))
    hp = dict(batch_size=2, gamma=0.99, learn_rate=1e-3, hidden_layers=(8,))
    broken = Experiment(PolicyNet, [BrokenLoss()], PolicyTrainer, hp, TrainBatch, Episode)
    with pytest.raises(RuntimeError, match=r"(?s)The experiment 'vpg' with seed \d failed.*my loss is broken"):
        run_experiments({"vpg": broken}, 4, seeds=(0, 1, 2), progress=False, workers=2)
    assert not [p for p in mp.active_children() if p.name == "lunar-experiment"]
    assert not list((tmp_path / "lunar").glob("*.json"))
    with pytest.raises(TypeError, match="lunar.Experiment"):
        run_experiments({"vpg": (PolicyNet,)}, 4, progress=False)


def test_the_table_gives_each_experiments_seeds_and_only_the_differences_they_do_not_blur():
    from course_utils.lunar.experiments import experiment_table, final_rewards, separated

    def summary(*finals):
        runs = [{"mean_reward": [-150.0, final], "episode_num": [16, 3008]} for final in finals]
        return {"mean_reward": [-150.0, float(np.mean(finals))], "episode_num": [16, 3008], "runs": runs}

    results = {"vpg": summary(90.0, 120.0, 100.0), "bpg": summary(130.0, 160.0, 125.0), "cpg": summary(110.0, 150.0, 140.0)}
    assert final_rewards(results["vpg"]) == [90.0, 120.0, 100.0]
    assert separated(results) == [("bpg", "vpg")]  # cpg's 110 is below vpg's 120; bpg's 125 is not
    table = experiment_table(results)
    assert "vpg" in table and "103.3" in table and " 90.0" in table and "120.0" in table
    assert "(3 seeds each;" in table and table.endswith("Every seed ended higher: bpg > vpg.")
    results["bpg"] = summary(130.0, 160.0, 115.0)
    assert experiment_table(results).endswith("the seeds overlap everywhere.")
    single = {"mean_reward": [-150.0, 80.0], "episode_num": [16, 3008]}  # a run without seeds counts as one
    assert final_rewards(single) == [80.0]


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
    assert stored["seeds"] == list(SEEDS) == [0, 1, 2]
    for summary in stored["runs"].values():
        assert summary["seeds"] == stored["seeds"] and len(summary["runs"]) == 3
        for run in summary["runs"]:
            assert run["episode_num"][-1] >= 3000 and len(run["mean_reward"]) == len(run["episode_num"])
            assert "model_state" not in run
        assert np.allclose(summary["mean_reward"], np.mean([run["mean_reward"] for run in summary["runs"]], axis=0))


def test_performance_bars_are_messages_that_say_what_to_look_at():
    from course_utils.lunar.experiments import PERFORMANCE_BARS, performance_bar

    stored = stored_results()["runs"]
    assert PERFORMANCE_BARS == {"cpg": 10.0, "aac": 50.0}  # the original assignment's bars
    for name in PERFORMANCE_BARS:
        assert f"{name} (the course's run): best mean reward" in performance_bar(stored, name)
        assert "above the bar" in performance_bar(stored, name)  # the course's full-size runs clear them
        assert max(stored[name]["mean_reward"]) > 100  # the notebook: "good runs get above 100"
    good = {"cpg": {"mean_reward": [-150.0, 80.0], "episode_num": [16, 3000]}}
    assert performance_bar(good, "cpg").startswith("cpg: best mean reward 80.0, above the bar of 10")
    weak = {"cpg": {"mean_reward": [-150.0, 5.0], "episode_num": [16, 3000]}}
    assert "not above the bar of 10 yet" in performance_bar(weak, "cpg") and "tune" in performance_bar(weak, "cpg")
    short = {"cpg": {"mean_reward": [-150.0], "episode_num": [48]}}
    assert "only 48 episodes" in performance_bar(short, "cpg")


def test_delta_balances_the_two_terms_of_the_aac_loss():
    """Section 7's explanation of delta = 0.01, on the course's aac run: at the start the value term
    is of the order of 10^4 and the policy term of the order of 100, and 0.01 brings them together."""
    from course_utils.lunar.experiments import loss_scales

    run = stored_results()["runs"]["aac"]
    first_policy, first_value = abs(run["loss_p"][0]), run["loss_v"][0]  # the untrained critic's batch
    assert 3e3 < first_value < 3e4 and 30 < first_policy < 300
    # over the 10 batches loss_scales prints, both are smaller: from the second batch on the critic's
    # output bias is set to each batch's mean error, so its advantages shrink (measured: 3 717 and 22)
    policy, value = np.mean(np.abs(run["loss_p"][:10])), np.mean(run["loss_v"][:10])
    assert 1e3 < value < 3e4 and 10 < policy < 300
    assert 1 / 3 < reference.AAC_HP["delta"] * value / policy < 3
    assert f"{value:.0f}" in loss_scales(run, reference.AAC_HP["delta"])


def test_the_settings_cell_names_every_size_with_its_full_value():
    from course_utils.lunar.sizes import SIZES

    cells = json.loads((SOLUTIONS / "03_policy_gradients.ipynb").read_text())["cells"]
    settings = next(c for c in cells if c["cell_type"] == "code" and "= SIZES." in "".join(c["source"]))
    assert settings["metadata"]["jupyter"]["source_hidden"] is True
    assert cells.index(settings) == 1 + next(i for i, c in enumerate(cells) if "setup_notebook(" in "".join(c["source"]))
    named = {}
    for line in "".join(settings["source"]).splitlines():
        if "= SIZES." in line:
            size = line.split("= SIZES.")[1].split()[0]
            named[size] = int(line.split("#")[1].split()[0])
    assert named == {size: SIZES.full(size) for size in SIZES._sizes}
    assert SIZES.full("experiment_episodes") == reference.EXPERIMENT_EPISODES
    code = "".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    assert "scaled(" not in code and "fast_mode" not in code and "headless" not in code


@pytest.mark.parametrize("kwargs", [{"max_episodes": 0.91}, {"max_episodes": 0}, {"max_episodes": True}, {"seeds": []},
                                    {"seeds": "012"}, {"seeds": [0.5]}])
def test_wrong_sizes_are_refused_before_training_or_writing(kwargs, monkeypatch):
    """A wrong size once overwrote the stored runs the notebook shows (the leak probe handed
    ``train_experiments`` a check's arguments): ``run_experiments`` refuses it before anything runs,
    for the notebook and for ``course train lunar-experiments`` alike."""
    from course_utils.lunar import experiments

    before = reference.STORED_RESULTS.read_bytes()
    for name in ("_train", "_train_in_processes"):
        monkeypatch.setattr(experiments, name, lambda *args, **kwargs: pytest.fail("it trained"))
    with pytest.raises(TypeError, match="must be"):
        reference.train_experiments(progress=False, **kwargs)
    with pytest.raises(TypeError, match="must be"):
        run_experiments(reference.reference_experiments(), **{"max_episodes": 4, **kwargs}, progress=False)
    assert reference.STORED_RESULTS.read_bytes() == before


def test_the_stored_aac_beats_the_batch_mean_baseline_on_every_seed():
    """Section 7's actor-critic, at full size: each seed of the stored aac ended above the same
    seed of bpg (the final mean reward the table prints)."""
    from course_utils.lunar.experiments import final_rewards

    stored = stored_results()
    aac, bpg = final_rewards(stored["runs"]["aac"]), final_rewards(stored["runs"]["bpg"])
    assert len(aac) == len(bpg) == 3
    assert all(a > b for a, b in zip(aac, bpg, strict=True)), (aac, bpg)


def test_the_stored_one_step_critic_does_not_centre_the_advantages():
    """Section 7's reason for critic_steps, on the stored ablation: with the loss's one critic step
    per batch the mean advantage stays well above 0 to the end, and every seed ends below bpg."""
    from course_utils.lunar.experiments import final_rewards

    stored = stored_results()
    one_step = stored["ablations"][reference.ONE_STEP_CRITIC]
    assert one_step["seeds"] == stored["seeds"] and len(one_step["runs"]) == 3
    for plain in one_step["runs"]:
        assert np.mean(plain["adv_m"][-50:]) > 10
    assert max(final_rewards(one_step)) < min(final_rewards(stored["runs"]["bpg"]))


def test_the_critic_panels_draw_the_recorded_fields_of_every_run_with_a_critic():
    import matplotlib

    matplotlib.use("Agg")
    from course_utils.lunar.experiments import CRITIC_KEYS, critic_report, plot_experiment_results

    stored = stored_results()
    results = dict(stored["runs"])
    fig = plot_experiment_results(results)
    assert len(fig.axes) == 6
    for ax, key in zip(fig.axes[4:], CRITIC_KEYS, strict=True):
        lines = [line for line in ax.get_lines() if line.get_label().startswith(("aac", "vpg", "epg", "bpg", "cpg"))]
        assert [line.get_label() for line in lines] == ["aac (3 seeds)"]  # only the run with a critic
        assert np.allclose(lines[0].get_ydata(), results["aac"][key])
        assert np.allclose(lines[0].get_xdata(), results["aac"]["episode_num"])
        assert len(ax.collections) == 1  # its band over the seeds
    colours = {line.get_label(): line.get_color() for ax in fig.axes for line in ax.get_lines()}
    assert colours["aac (3 seeds)"] == fig.axes[3].get_lines()[-1].get_color()  # one colour per experiment
    without = plot_experiment_results({name: results[name] for name in EXPERIMENTS})
    assert len(without.axes) == 4  # Section 6: no critic, no critic panels
    report = critic_report(results)
    for seed, run in zip(stored["seeds"], results["aac"]["runs"], strict=True):
        assert f"seed {seed}: mean advantage {np.mean(run['adv_m'][:10]):+.0f} over the first 10 batches" in report
        assert f"{np.mean(run['adv_m'][-50:]):+.0f} over the last 50" in report
    assert reference.ONE_STEP_CRITIC in report


def test_runs_that_do_not_split_evenly_over_the_cores_get_a_process_each():
    """Three runs on two cores share them as three processes (done after 1.5 runs' time, not 2);
    runs that fill the cores evenly, or many more runs than cores, get one process per core."""
    from course_utils.lunar.experiments import balanced_workers

    assert balanced_workers(3, 2) == 3  # the aac cell: 3 seeds
    assert balanced_workers(12, 2) == 2 and balanced_workers(4, 2) == 2  # Section 6: 4 experiments x 3 seeds
    assert balanced_workers(5, 2) == 2 and balanced_workers(1, 2) == 1 and balanced_workers(2, 2) == 2
    assert balanced_workers(3, 1) == 1 and balanced_workers(0, 2) == 1  # one core: in this process


def test_an_actor_critic_s_cached_runs_follow_the_critic_s_own_steps(monkeypatch):
    """The critic's extra steps (``critic.CriticFit``) are not one of the trainer's classes: a
    change to them must change the fingerprint of the runs that use them, and only of those."""
    from course_utils.lunar import experiments

    runs = reference.reference_experiments()
    aac, bpg = runs["aac"], runs["bpg"]
    before = experiments._fingerprint(aac, {}), experiments._fingerprint(bpg, {})

    class OtherFit(experiments.CriticFit):
        def __call__(self, batch):
            return None

    monkeypatch.setattr(experiments, "CriticFit", OtherFit)
    assert experiments._fingerprint(aac, {}) != before[0]
    assert experiments._fingerprint(bpg, {}) == before[1]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["vpg", "epg", "bpg", "cpg", "aac"])
def test_each_experiments_stored_run_is_reproduced_at_full_size(name, tmp_path):
    """Seed 0 of each stored experiment, trained again at full size (3000 episodes) with the
    reference classes and the landers stepped as the notebook steps them (in C where it is built):
    every recorded number of every batch is the stored one."""
    from course_utils.lunar import experiments

    spec = reference.reference_experiments()[name]
    data = experiments._train(name, spec, reference.EXPERIMENT_EPISODES, 0, tmp_path / "run.json", workers=1)
    stored = stored_results()["runs"][name]["runs"][0]
    for key, values in stored.items():
        assert data[key] == values, key
