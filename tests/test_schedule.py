"""The one timetable: README table, notebook time lines and section marks come from it."""

import json

import pytest

from course_admin import schedule
from course_utils.paths import ROOT, SOLUTIONS


def test_each_tutorial_total_is_the_sum_of_its_sections():
    for t in schedule.TUTORIALS:
        assert t.minutes == sum(m for _, m in t.sections) > 0
        assert f"about {t.minutes} minutes" in t.time_line()


def test_readme_and_notebooks_carry_the_timetable():
    readme = (ROOT / "README.md").read_text()
    assert schedule.readme_table() in readme
    for t in schedule.TUTORIALS:
        nb = json.loads((SOLUTIONS / f"{t.notebook}.ipynb").read_text())
        text = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
        assert t.time_line() in "".join(nb["cells"][0]["source"])
        for heading, minutes in t.sections:
            assert f"## {heading} *(~{minutes} min)*" in text
    assert schedule.stale_schedule() == []


def test_apply_to_notebook_rewrites_marks_and_refuses_a_missing_section():
    t = schedule.TUTORIALS[1]
    nb = {"cells": [{"cell_type": "markdown", "source": ["# T\n", "\n", "**Estimated time: 9 minutes**\n"]}]}
    nb["cells"] += [{"cell_type": "markdown", "source": [f"## {h} *(~1 min)*\n", "text"]} for h, _ in t.sections]
    out = schedule.apply_to_notebook(nb, t.notebook)
    assert t.time_line() in "".join(out["cells"][0]["source"])
    assert "".join(out["cells"][1]["source"]).startswith(f"## {t.sections[0][0]} *(~{t.sections[0][1]} min)*\n")
    del nb["cells"][2]
    with pytest.raises(ValueError, match="does not have"):
        schedule.apply_to_notebook(nb, t.notebook)


def test_readme_without_markers_gets_a_clear_error():
    with pytest.raises(ValueError, match="markers"):
        schedule.apply_to_readme("# no table here\n")
    with pytest.raises(KeyError, match="known"):
        schedule.tutorial("05_missing")


def test_student_bundle_readme_takes_its_table_from_the_timetable():
    from course_admin.grading.bundle import student_readme

    text = student_readme("rl_course-1.0-py3-none-any.whl")
    assert schedule.student_table() in text and "{table}" not in text and "{wheel}" not in text
    for t in schedule.TUTORIALS:
        assert f"`{t.notebook}.ipynb`" in text and f"{t.minutes} min" in text


def test_section_8_takes_its_training_cells_minutes_from_the_course_s_timed_run(tmp_path):
    """Tutorial 3's Section 8: ten minutes besides its training cell, plus that cell's wall-clock
    minutes (rounded up) as ``course train lunar-student-run`` stored them (until it has, the
    figure from before)."""
    run = tmp_path / "run.json"
    run.write_text(json.dumps({"wall_s": 254.4, "cpu_s": 480.0, "solved": True}))
    assert schedule.section_8_minutes(run) == schedule.SECTION_8_OTHER_MINUTES + 5 == 15
    run.write_text(json.dumps({"wall_s": 60.0, "cpu_s": 100.0, "solved": True}))
    assert schedule.section_8_minutes(run) == 11
    assert schedule.section_8_minutes(tmp_path / "missing.json") == schedule.SECTION_8_UNTIMED_MINUTES
    sections = dict(schedule.tutorial("03_policy_gradients").sections)
    assert sections["Section 8: Training longer, and the course's agent"] == schedule.section_8_minutes()
