"""``assets/lunar_expected.json`` is what ``reference.make_expected`` produces, ``stored_batch``
reads the reference's test batch from it as plain data, and its stored episodes know their q-values."""

import json

import pytest
import torch

from course_admin.lunar import reference
from course_admin.lunar.solutions import Episode, TrainBatch
from course_utils.lunar.checks.episodes import _from_episodes_cases, _stored_episodes
from course_utils.lunar.checks.stored_batch import stored_batch
from course_utils.lunar.expected import StoredEpisode, load_expected


def _stored():
    """The stored episodes of the test batch, as the from_episodes check hands them in."""
    return _stored_episodes(_from_episodes_cases()[0])


def test_expected_file_is_what_make_expected_produces():
    stored = load_expected()
    assert json.loads(json.dumps(reference.make_expected())) == stored
    assert stored["losses"]["entropy_beta1"] > -1.0  # random scores are not uniform
    assert reference.stale_expected() == []


def test_write_expected_writes_the_file_byte_for_byte(tmp_path):
    path = reference.write_expected(tmp_path / "lunar_expected.json")
    assert path.read_bytes() == reference.EXPECTED_FILE.read_bytes()


def test_stale_expected_names_what_differs(tmp_path):
    path = tmp_path / "lunar_expected.json"
    assert reference.stale_expected(path) == ["lunar_expected.json: missing"]
    data = load_expected()
    data["losses"]["vpg"] += 1.0
    path.write_text(json.dumps(data))
    assert reference.stale_expected(path) == ["lunar_expected.json: 'losses' differs"]
    path.write_text(json.dumps(load_expected(), indent=2))  # other formatting, same values: release would rewrite it
    assert reference.stale_expected(path) == ["lunar_expected.json: the same values, written another way"]
    reference.write_expected(path)
    assert reference.stale_expected(path) == []


def _reference_episodes(episodes):
    return [Episode(ep.total_reward, ep.experiences) for ep in episodes]


def test_stored_batch_is_the_reference_batch():
    batch, scores, values = stored_batch()
    ref = TrainBatch.from_episodes(_reference_episodes(_stored()), 0.9)
    assert len(batch) == len(ref) == 210
    assert torch.equal(batch.states, ref.states) and batch.states.dtype == torch.float32
    assert torch.equal(batch.actions, ref.actions) and batch.actions.dtype == torch.long
    assert torch.allclose(batch.q_vals, ref.q_vals, rtol=0, atol=2e-6) and batch.q_vals.dtype == torch.float32
    assert torch.equal(batch.total_rewards, ref.total_rewards)
    assert scores.shape == (210, 4) and values.shape == (210,)


def test_stored_episodes_give_the_qvals_the_checks_use():
    episodes = _stored()
    for episode, ref in zip(episodes, _reference_episodes(episodes), strict=True):
        assert episode.calc_qvals(1.0) == pytest.approx(ref.calc_qvals(1.0), rel=1e-6, abs=1e-6)  # stored, rounded
        assert episode.calc_qvals(0.9) == pytest.approx(ref.calc_qvals(0.9), rel=1e-6, abs=1e-6)  # stored float32, rounded
        assert episode.calc_qvals(torch.tensor(0.9)) == episode.calc_qvals(0.9)  # a float32 gamma
        with pytest.raises(ValueError, match="gamma 0.99"):
            episode.calc_qvals(0.99)


def test_stored_episodes_are_no_episode_class():
    episode = _stored()[0]
    with pytest.raises(TypeError):
        StoredEpisode(episode.total_reward, episode.experiences)
    episode.calc_qvals(0.9).reverse()  # callers get their own list
    assert episode.calc_qvals(0.9) == _stored()[0].calc_qvals(0.9)


def test_course_release_writes_and_checks_the_expected_values(monkeypatch, tmp_path, capsys):
    from argparse import Namespace

    from course_admin import cli, grading
    from course_admin.grading import harvest, judging
    from course_utils import checking

    monkeypatch.setattr(harvest, "write_solutions", lambda: [])
    monkeypatch.setattr(grading, "release", lambda: [])
    monkeypatch.setattr(harvest, "stale_solutions", lambda: [])
    monkeypatch.setattr(grading, "stale_notebooks", lambda: [])
    target = tmp_path / "lunar_expected.json"
    write = reference.write_expected
    monkeypatch.setattr(reference, "write_expected", lambda: write(target))
    from course_admin.colour import expected as colour_expected
    from course_admin.replay import reference as replay_reference

    others = {}
    for module in (replay_reference, colour_expected):  # the other tutorials' stored values, also into tmp_path
        others[module] = tmp_path / module.EXPECTED_FILE.name
        monkeypatch.setattr(module, "write_expected", lambda m=module, w=module.write_expected: w(others[m]))
    records = tmp_path / checking.CHECK_RECORDS
    write_records = judging.write_check_records
    monkeypatch.setattr(judging, "write_check_records", lambda: write_records(records))
    assert cli._release(Namespace(check=False)) == 0
    assert capsys.readouterr().out == "".join(
        f"wrote {path}\n" for path in (target, others[replay_reference], others[colour_expected], records))
    assert target.read_bytes() == reference.EXPECTED_FILE.read_bytes()
    assert all(path.read_bytes() == module.EXPECTED_FILE.read_bytes() for module, path in others.items())
    assert records.read_bytes() == (reference.EXPECTED_FILE.parent / checking.CHECK_RECORDS).read_bytes()
    monkeypatch.setattr(reference, "stale_expected", lambda: ["lunar_expected.json: 'losses' differs"])
    assert cli._release(Namespace(check=True)) == 1
    assert "stale: lunar_expected.json: 'losses' differs" in capsys.readouterr().err
