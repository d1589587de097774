"""What an answer changes of the course's code is put back before the hidden test, and named."""

import builtins
import json

from course_admin.grading import course_state
from course_utils import checking
from course_utils.replay import checks as tree_checks


def test_a_rebound_global_method_builtin_and_object_attribute_are_put_back_and_named():
    clock, limit, record = tree_checks._cpu, checking.TIME_LIMIT, checking.Exercise.record
    dumps, builtin_len, drive = json.dumps, builtins.len, tree_checks.TREES.drive
    state = course_state.snapshot()
    try:
        tree_checks._cpu = lambda: 0.0
        checking.TIME_LIMIT = 50.0
        checking.Exercise.record = lambda self, *answers, hidden=True: "forged"
        json.dumps = lambda *a, **k: "{}"
        builtins.len = lambda x: 0
        object.__setattr__(tree_checks.TREES, "drive", lambda *a: None)
        tree_checks.planted = "new"
        changed = course_state.restore(state)
    finally:
        tree_checks._cpu, checking.TIME_LIMIT, checking.Exercise.record = clock, limit, record
        json.dumps, builtins.len = dumps, builtin_len
        object.__setattr__(tree_checks.TREES, "drive", drive)
        vars(tree_checks).pop("planted", None)
    assert {"course_utils.replay.checks._cpu", "course_utils.checking.TIME_LIMIT", "course_utils.checking.Exercise.record",
            "json.dumps", "builtins.len", "course_utils.replay.checks.TREES.drive",
            "course_utils.replay.checks.planted"} <= set(changed)
    assert tree_checks._cpu is clock and checking.TIME_LIMIT == limit and checking.Exercise.record is record
    assert json.dumps is dumps and builtins.len is builtin_len and tree_checks.TREES.drive is drive
    assert not hasattr(tree_checks, "planted")
    assert course_state.restore(state) == []


def test_an_objects_state_is_left_alone_when_asked_and_an_import_changes_nothing():
    state = course_state.snapshot()
    active = checking._DRIVE.active
    try:
        checking._DRIVE.active = not active
        import course_utils.replay.timing  # noqa: F401  (a package gains a submodule's name)

        assert course_state.restore(state, objects=False) == []
    finally:
        checking._DRIVE.active = active
