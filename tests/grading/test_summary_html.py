"""summary.html: a histogram per exercise, the flagged submissions, the problems, and nothing a
student wrote can run in it; nor reorder what is shown in it, grades.csv, summary.md or on the
terminal."""

from __future__ import annotations

import re
from pathlib import Path

from course_admin.grading.autograder import Report, _write_csv
from course_admin.grading.intake import Submission
from course_admin.grading.summary_html import histogram_svg, summary_html


def _submission(name, score, grades, flags=(), problems=()):
    sub = Submission(student=name, source=f"{name}.ipynb", assignment="02_colour_replay", name=name)
    sub.score, sub.max_score = score, 5.0
    sub.grades, sub.grade_max = dict(grades), {"test_replay_actor_loss": 5.0, "test_replay_memory": 3.0}
    sub.flags, sub.problems = list(flags), list(problems)
    return sub


def test_one_histogram_per_exercise_counts_every_score():
    svg = histogram_svg([0.0, 2.0, 2.0, 1.0], 2.0)
    assert re.findall(r"<title>(\d+) at ([\d.]+)</title>", svg) == [("1", "0"), ("1", "1"), ("2", "2")]


def test_the_page_lists_flags_and_problems_with_student_text_escaped(tmp_path):
    hostile = '<img src=x onerror="alert(1)"><script>alert(2)</script>'
    report = Report(
        submissions=[
            _submission("ada", 8.0, {"test_replay_actor_loss": 5.0, "test_replay_memory": 3.0}),
            _submission(hostile, 0.0, {"test_replay_actor_loss": 0.0, "test_replay_memory": 0.0},
                        flags=["cell 3 line 1: imports builtins"], problems=[hostile]),
        ],
        csv_path=Path(tmp_path / "grades.csv"),
        feedback_dir=tmp_path,
    )
    page = summary_html(report)
    assert page.count("<svg") == 2 and "test_replay_memory" in page
    assert "imports builtins" in page and "&lt;script&gt;" in page
    assert "<script" not in page and "<img" not in page and "onerror=\"" not in page
    assert "default-src 'none'" in page


def test_bidirectional_controls_in_names_are_shown_escaped_in_every_output(tmp_path):
    # U+202E (right-to-left override) makes "bob\u202egnp.exe" display as "bobexe.png"
    names = ["bob\u202egnp.exe", "a\u2066b\u2069c\u200e\u200f\u061cd\u202a\u202b\u202c\u202d"]
    subs = [_submission(name, 1.0, {"test_replay_actor_loss": 1.0}, flags=[f"cell 2 line 1: imports {name}"],
                        problems=[f"{name}.ipynb is a symbolic link"]) for name in names]
    subs[0].source = "bob\u202egnp.exe.ipynb"
    report = Report(submissions=subs, csv_path=tmp_path / "grades.csv", feedback_dir=tmp_path)
    outputs = {
        "grades.csv": _write_csv(subs, tmp_path).read_text(encoding="utf-8"),
        "summary.md": report.markdown(),
        "terminal": report.summary(),
        "summary.html": summary_html(report),
    }
    bidi = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")
    for where, text in outputs.items():
        assert not set(text) & bidi, where
        if where == "summary.md":  # markdown escapes the backslash: it renders as one
            text = text.replace("\\\\", "\\")
        assert "bob\\u202egnp.exe" in text, where
        assert "a\\u2066b\\u2069c\\u200e\\u200f\\u061cd\\u202a\\u202b\\u202c\\u202d" in text, where
    rows = outputs["grades.csv"].splitlines()
    assert rows[1].startswith("a\\u2066b") and rows[2].startswith("bob\\u202egnp.exe,")
    assert "bob\\u202egnp.exe.ipynb is a symbolic link" in rows[2]  # file names in messages too
