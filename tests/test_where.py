"""``course where GRADE_ID``: every graded exercise's parts, each at a line that holds it."""

import re

import pytest

from course_admin import where
from course_admin.exercises import GRADED
from course_utils.cli import main
from course_utils.paths import ROOT

PLACE = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+)")


def _line(place: str) -> str:
    match = PLACE.match(place)
    assert match, place
    path = ROOT / match["path"]
    assert path.is_file(), place
    lines = path.read_text().splitlines()
    number = int(match["line"])
    assert 1 <= number <= len(lines), place
    return lines[number - 1]


@pytest.mark.parametrize("cell", GRADED, ids=[cell.grade_id for cell in GRADED])
def test_every_graded_cell_has_its_parts_at_lines_that_hold_them(cell):
    places = dict(where.where(cell.grade_id))
    assert f'"{cell.grade_id}"' in _line(places["index row"])
    cell_id = re.search(r"id (\w+)\)", places["solution cell"])[1]
    assert f'"id": "{cell_id}"' in _line(places["solution cell"])
    if cell.manual:
        assert "hidden-test cell" not in places
        return
    for what in ("check cell", "hidden-test cell"):
        cell_id = re.search(r"id (\w+)\)", places[what])[1]
        assert f'"id": "{cell_id}"' in _line(places[what]), what
    function = cell.check.split(":")[1]
    assert f"def {function}(" in _line(places["check function"])
    assert re.match(r"^[A-Z_]+ = ", _line(places["Exercise"]))  # the Exercise the hidden cell submits to
    for part in ("cases", "drive", "judge"):
        assert _line(places[f"  {part}"]).lstrip().startswith(("def ", "class ")), part
    assert f"# Solution cell {cell.solution!r}" in _line(places["harvested solution"])
    for helper in cell.helpers:
        assert helper.split(":")[1] in _line(places[f"helper {helper}"])
    hint_places = [place for what, place in where.where(cell.grade_id) if what == "hint test"]
    assert len(hint_places) == len(cell.hint_tests)
    for test, place in zip(cell.hint_tests, hint_places, strict=True):
        assert f"def {test.split('::')[1]}(" in _line(place)


def test_a_solution_cells_id_finds_its_graded_cells_and_an_unknown_id_is_named(capsys):
    assert where.where("aac_loss") == where.where("test_aac_loss")
    assert main(["where", "test_aac_loss"]) == 0
    assert "course_utils/lunar/checks/aac_checks.py" in capsys.readouterr().out
    assert main(["where", "no_such_exercise"]) == 2
    err = capsys.readouterr().err
    assert "'no_such_exercise' is not a graded cell" in err and "test_aac_loss" in err
