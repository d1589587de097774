"""The notebooks' claims as data (``course_utils.claims``) and the instructor's audit of them with
the model answers' claims (``course_admin.claims``): every stored claim holds, a planted
contradiction fails ``course release --check``, and every live claim is checked by a test."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from course_admin import claims
from course_utils import claims as notebook_claims
from course_utils.cli import main

TESTS = Path(__file__).parent


def test_every_claim_on_a_stored_result_holds():
    assert claims.contradicted() == []


def test_claims_are_named_after_their_tutorial_and_say_their_figures():
    for name, claim in claims.all_claims().items():
        tutorial = name.split(".")[0]
        assert tutorial in notebook_claims.TUTORIALS, name
        assert re.search(r"\{\w+", claim.says), f"{name} quotes no figure of its result"
        if claim.stored:
            assert claim.source in notebook_claims.stored_loaders(), name
            claim.text()  # every placeholder has its figure


def test_a_planted_contradiction_fails_the_release_check(monkeypatch, capsys):
    history = notebook_claims.stored_result("harlow_evolution")
    flat = dict(history, mean=[history["mean"][0]] * len(history["mean"]))  # a run that never rose
    monkeypatch.setattr(notebook_claims, "stored_loaders", lambda: {"harlow_evolution": lambda: flat})
    notebook_claims.stored_result.cache_clear()
    try:
        problems = claims.contradicted()
        assert any(p.startswith("claim harlow.saved_run_rises") for p in problems), problems
        assert main(["release", "--check"]) == 1
        assert "contradicted: claim harlow.saved_run_rises" in capsys.readouterr().err
        assert "| **NO** |" in claims.claims_table()
    finally:
        notebook_claims.stored_result.cache_clear()


def test_a_claim_whose_result_lost_a_field_is_reported(monkeypatch):
    monkeypatch.setattr(notebook_claims, "stored_loaders", lambda: {"per_results": lambda: {"curves": {}}})
    notebook_claims.stored_result.cache_clear()
    try:
        assert any("replay.seeds_vary" in p and "cannot be checked" in p for p in claims.contradicted())
    finally:
        notebook_claims.stored_result.cache_clear()


def test_every_live_claim_is_checked_by_a_test():
    sources = "\n".join(p.read_text() for p in TESTS.rglob("test_*.py") if p.name != "test_claims.py")
    for name, claim in claims.all_claims().items():
        if not claim.stored:
            assert f'"{name}"' in sources, f"no test checks the live claim {name}"


def test_show_claim_prints_the_stored_figures(capsys):
    text = notebook_claims.show_claim("lunar.course_agent_solves")
    assert text in capsys.readouterr().out and "{" not in text
    with pytest.raises(KeyError, match="course claims"):
        notebook_claims.claim("lunar.no_such_claim")
    with pytest.raises(ValueError, match="live result"):
        notebook_claims.claim("colour.replay_keeps_mode1").text()


def test_show_claim_says_when_a_live_result_does_not_bear_it_out(capsys):
    class Curve:
        def __init__(self, mode1, mode2):
            self.mode1, self.mode2 = [mode1], [mode2]

        def side_bias(self):
            return 0.0

        def steps_to_reach(self, level):
            return 0

    curves = {"replay": Curve(0.5, 0.95), "no replay": Curve(0.6, 0.95), "replay without the importance ratio": Curve(0.5, 0.5)}
    text = notebook_claims.show_claim("colour.replay_keeps_mode1", curves)
    assert "50%" in text and "does not bear that sentence out" in capsys.readouterr().out


def test_course_claims_prints_the_table(capsys):
    assert main(["claims"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n| `") == len(claims.all_claims())


def test_question_3s_model_answer_quotes_its_claim_verbatim():
    """The model answer is hidden markdown (it cannot print): its figures are the claim's sentence,
    filled in with the stored runs, so a retrained run that moves a figure fails here until the
    answer is updated (and ``course release --check`` fails if the new run contradicts it)."""
    import json

    notebook = json.loads((TESTS.parent / "solutions" / "03_policy_gradients.ipynb").read_text())
    answer = next("".join(c["source"]) for c in notebook["cells"] if c.get("id") == "56f88df6")
    assert claims.claim("lunar.question3_figures").text() in answer


def test_model_answer_claims_are_the_instructors_alone():
    """A model answer is hidden from students: its claims are in the audit, not in the student
    package, and no student notebook names them."""
    import glob

    model_answers = set(claims.all_claims()) - set(notebook_claims.all_claims())
    assert "lunar.question3_figures" in model_answers
    student = "".join(Path(path).read_text() for path in glob.glob(str(TESTS.parent / "notebooks" / "*.ipynb")))
    assert not [name for name in model_answers if name in student]
