"""``course_admin.stored_json``: the format of the JSON files ``course release`` writes, and what
``course release --check`` says of a file that differs."""

import json
import math

from course_admin import stored_json


def test_write_is_sorted_indented_and_utf8(tmp_path):
    path = stored_json.write(tmp_path / "x.json", {"b": [1, 2.5], "a": {"é": (3,)}})
    assert path.read_text(encoding="utf-8") == '{\n "a": {\n  "é": [\n   3\n  ]\n },\n "b": [\n  1,\n  2.5\n ]\n}\n'
    assert stored_json.stale(path, {"a": {"é": [3]}, "b": [1, 2.5]}) == []


def test_stale_says_a_line_per_differing_section(tmp_path):
    path = tmp_path / "x.json"
    fresh = {"same": [1, 2], "changed": 1.0, "new": "n", "nan": math.nan}
    assert stored_json.stale(path, fresh) == ["x.json: missing"]
    path.write_text(json.dumps({"same": [1, 2], "changed": 2.0, "old": 0, "nan": math.nan}))
    assert stored_json.stale(path, fresh) == ["x.json: 'changed' differs", "x.json: 'new' differs", "x.json: 'old' differs"]
    path.write_text(json.dumps(fresh))
    assert stored_json.stale(path, fresh) == ["x.json: the same values, written another way"]
    path.write_text("{not json")
    assert stored_json.stale(path, fresh)[0].startswith("x.json: not valid JSON")
    path.write_text("[1]")
    assert stored_json.stale(path, fresh) == ["x.json: does not hold a JSON object"]
