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
    (tmp_path / "subs").mkdir()
    try:
        cli.main(["autograde", str(tmp_path / "subs"), "--roster", "r.csv", "--term", "t.toml", "--times", "a.csv",
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


def test_a_missing_folder_a_tutorial_the_course_lacks_and_bad_numbers_say_what_to_fix(tmp_path, capsys):
    """Before anything is graded or written: each mistake is one line saying what to do."""
    subs, out = tmp_path / "subs", tmp_path / "out"
    assert cli.main(["autograde", str(subs), "--out", str(out), "--workers", "0"]) == 2
    assert "is not a folder: unzip the LMS's download" in capsys.readouterr().err
    subs.mkdir()
    term = tmp_path / "term.toml"
    term.write_text("[tutorials.02_colour_repaly]\ndue = 2026-10-20T23:59:00\n")  # a typo: its due date would meet nothing
    assert cli.main(["autograde", str(subs), "--out", str(out), "--workers", "0", "--term", str(term)]) == 2
    err = capsys.readouterr().err
    assert "[tutorials.02_colour_repaly], which is not a tutorial of the course" in err and "02_colour_replay" in err
    times = tmp_path / "times.csv"
    times.write_text("user_id,submitted_at\n1001,2026-10-20T20:00:00Z\n")
    assert cli.main(["autograde", str(subs), "--out", str(out), "--workers", "0", "--times", f"99_nope={times}"]) == 2
    assert "'99_nope' is not a tutorial of the course" in capsys.readouterr().err
    assert not out.exists()
    for option, value in (("--workers", "-1"), ("--memory", "0"), ("--output-mb", "x")):
        try:
            cli.main(["autograde", str(subs), option, value])
        except SystemExit as stop:
            assert stop.code == 2
        assert f"argument {option}" in capsys.readouterr().err
