"""The evolutions the notebook runs live: Lamarckian inheritance in the batched genetic algorithm,
the live display (in place in JupyterLab, a compact summary headless), and the notebook's claims:
the population's fitness rises as it runs, and the Lamarckian population pulls ahead of the
Baldwinian one from the same seed with the same budget."""

import functools

import numpy as np
import pytest
import torch

from course_admin.harlow import batch as hb
from course_admin.harlow import solutions
from course_utils import harlow
from course_utils.claims import claim
from course_utils.harlow import evolution
from course_utils.harlow import scoring as hs

SMALL = {
    "population_size": 8,
    "new_per_generation": 2,
    "tournament_size": 4,
    "parents_size": 2,
    "num_tasks": 2,
    "final_candidates": 2,
    "final_tasks": 3,
    "num_gradient_steps": 3,
    "progress": False,
}


def test_learned_weights_are_the_mean_of_the_trained_copies():
    params, hypers = hb.initial_population(2, torch.Generator().manual_seed(0))
    learned = {}
    scores = hs.evaluate_population(params, hypers, np.random.default_rng(0), num_tasks=3, learned=learned,
                                    num_gradient_steps=2)
    assert scores.shape == (2, 3) and set(learned) == set(params)
    for name, p in params.items():
        assert learned[name].shape == p.shape
    assert not torch.equal(learned["actor.weight"], params["actor.weight"])  # they learned something
    # the same run, copy by copy: the mean of the three trained copies of each individual
    pair_params = {name: p.repeat_interleave(3, dim=0) for name, p in params.items()}
    copies = {}
    hs.train_evaluate_pairs(pair_params, np.repeat(hypers, 3, axis=0), np.random.default_rng(0), num_gradient_steps=2,
                            learned=copies)
    assert torch.allclose(copies["actor.weight"].reshape(2, 3, 2, 20).mean(1), learned["actor.weight"])


def test_lamarckian_and_baldwinian_runs_share_their_start_and_differ_only_by_inheritance():
    calls = []
    baldwin = hb.evolve(seed=2, generations=4, on_generation=lambda h: calls.append(h["generation"][-1]), **SMALL)
    lamarck = hb.evolve(seed=2, generations=4, inheritance="lamarckian", **SMALL)
    assert calls == [0, 1, 2, 3, 4]
    assert baldwin["mean"][0] == lamarck["mean"][0]  # the same first population on the same tasks
    assert baldwin["mean"][1:] != lamarck["mean"][1:]
    assert lamarck["settings"]["inheritance"] == "lamarckian" and baldwin["settings"]["inheritance"] == "baldwinian"
    again = hb.evolve(seed=2, generations=4, inheritance="lamarckian", **SMALL)
    assert again["mean"] == lamarck["mean"]
    with pytest.raises(ValueError, match="inheritance must be one of"):
        hb.evolve(seed=2, generations=1, inheritance="darwinian", **SMALL)


SMALL_SELECTION = functools.partial(solutions.choose_parents, tournament_size=SMALL["tournament_size"],
                                    parents_size=SMALL["parents_size"])
"""The notebook's selection at ``SMALL``'s size."""


def test_headless_live_evolution_prints_a_compact_summary_and_one_figure(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_HEADLESS", "1")
    shown = []
    monkeypatch.setattr(evolution.plt, "show", lambda: shown.append(1))
    small = {k: v for k, v in SMALL.items()
             if k not in ("progress", "final_tasks", "final_candidates", "tournament_size", "parents_size")}
    result = harlow.evolve_live(20, solutions.update_population, SMALL_SELECTION, seed=0, **small)
    lines = capsys.readouterr().out.strip().splitlines()
    assert 3 <= len(lines) <= 12 and "generation    0" in lines[0] and "generation   20" in lines[-1]
    assert shown == [1] and result["seconds"] > 0 and len(result["mean"]) == 21
    with pytest.raises(ValueError, match="at least 1"):
        harlow.evolve_live(0, solutions.update_population, solutions.choose_parents)


def test_live_evolution_redraws_one_figure_in_place(monkeypatch):
    """In JupyterLab the plot is one display, updated as generations come (throttled)."""
    monkeypatch.setenv("COURSE_HEADLESS", "0")
    monkeypatch.setattr(evolution, "REDRAW_SECONDS", 0.0)
    events = []

    class Handle:
        def update(self, fig):
            events.append(("update", fig.axes[0].get_title()))

    def display(fig, display_id=False):
        events.append(("display", fig.axes[0].get_title()))
        return Handle()

    import IPython.display

    monkeypatch.setattr(IPython.display, "display", display)
    plot = evolution.LiveEvolution(3, "run", curves={"saved": ([0, 1], [5.0, 6.0])})
    history = {"generation": [], "mean": [], "num_tasks": 10}
    for g in range(4):
        history["generation"].append(g)
        history["mean"].append(50.0 + g)
        plot(history)
    assert [e[0] for e in events] == ["display", "update", "update", "update"]
    assert events[-1][1].endswith("generation 3 of 3")


def _race(monkeypatch, fast: bool):
    """The notebook's two runs at the given size: Section 2's live Baldwinian evolution and
    Section 3's Lamarckian one, same seed, same number of generations."""
    monkeypatch.setenv("COURSE_FAST", "1" if fast else "0")
    monkeypatch.setenv("COURSE_HEADLESS", "1")
    monkeypatch.setattr(evolution.plt, "show", lambda: None)
    generations = harlow.SIZES.live_generations
    baldwinian = harlow.evolve_live(generations, solutions.update_population, solutions.choose_parents, seed=1)
    lamarckian = harlow.evolve_live(generations, solutions.update_population, solutions.choose_parents, seed=1,
                                    lamarckian_individual=solutions.lamarckian_individual)
    return {"baldwinian": baldwinian, "lamarckian": lamarckian}, generations


def _assert_the_notebooks_claims(runs, generations, rise, lead):
    baldwin, lamarck = harlow.summary(runs["baldwinian"]), harlow.summary(runs["lamarckian"])
    assert baldwin["generations"] == lamarck["generations"] == generations
    assert baldwin["gain"] > rise  # Section 2: the fitness rises as the population evolves
    holds, figures = claim("harlow.lamarck_pulls_ahead").check(runs)  # Section 3, as the notebook prints it
    assert holds and figures["lead"] > lead, figures


def test_notebook_claims_of_the_live_evolutions_at_fast_size(monkeypatch):
    _assert_the_notebooks_claims(*_race(monkeypatch, fast=True), rise=1.0, lead=2.0)


@pytest.mark.slow
def test_notebook_claims_of_the_live_evolutions_at_full_size(monkeypatch):
    _assert_the_notebooks_claims(*_race(monkeypatch, fast=False), rise=5.0, lead=3.0)


def test_the_stored_runs_show_what_the_notebook_says_of_them():
    """Until the student's operators pass, the notebook shows the course's stored runs of its live
    size (``course train harlow-runs``): the Lamarckian lead holds on them, and the student package
    holds none of the course's operators that made them."""
    import importlib.util

    runs = harlow.load_runs()
    generations = harlow.SIZES.full("live_generations")
    assert runs["baldwinian"]["generation"][-1] == runs["lamarckian"]["generation"][-1] == generations
    assert runs["baldwinian"]["mean"][0] == runs["lamarckian"]["mean"][0]  # the same first population
    assert harlow.summary(runs["baldwinian"])["gain"] > 5.0
    holds, figures = claim("harlow.lamarck_pulls_ahead").check(runs)
    assert holds and figures["lead"] > 3.0, figures
    assert len(runs["newbie_scores"]) == 10 and all(-20 <= s <= 20 for s in runs["newbie_scores"])
    assert importlib.util.find_spec("course_utils.harlow.batch") is None
