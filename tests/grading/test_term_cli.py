"""``course autograde --roster --term --times``: the files reach the grader, and a bad one stops
the run with what to fix, before anything is graded."""

from course_utils import cli


def test_the_term_options_reach_autograde(monkeypatch, tmp_path):
    seen = {}

    def fake(folder, **kwargs):
        seen.update(kwargs, folder=folder)
        raise SystemExit(0)

    from course_admin import grading

    monkeypatch.setattr(grading, "autograde", fake, raising=False)
    try:
        cli.main(["autograde", "subs", "--roster", "r.csv", "--term", "t.toml", "--times", "a.csv",
                  "--times", "02_colour_replay=w.csv"])
    except SystemExit:
        pass
    assert (seen["roster"], seen["term"], seen["times"]) == ("r.csv", "t.toml", ["a.csv", "02_colour_replay=w.csv"])


def test_a_bad_term_file_says_what_to_fix_and_grades_nothing(tmp_path, capsys):
    (tmp_path / "subs").mkdir()
    term = tmp_path / "term.toml"
    term.write_text('[feedback]\nhidden = "everything"\n')
    code = cli.main(["autograde", str(tmp_path / "subs"), "--out", str(tmp_path / "out"), "--workers", "0",
                     "--term", str(term)])
    assert code == 2 and "write one of pass_fail, hint, full" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_bad_roster_says_what_to_export(tmp_path, capsys):
    (tmp_path / "subs").mkdir()
    roster = tmp_path / "roster.csv"
    roster.write_text("colour\nred\n")
    assert cli.main(["autograde", str(tmp_path / "subs"), "--workers", "0", "--roster", str(roster)]) == 2
    assert "export the Canvas gradebook" in capsys.readouterr().err
