"""``course bench ci`` on a throwaway repository whose ``.ci/run`` prints a pytest summary."""

import json
import subprocess

import pytest

from course_admin import ci


def _repo(tmp_path, *scripts):
    repo = tmp_path / "repo"
    (repo / ".ci").mkdir(parents=True)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for script in scripts:
        (repo / ".ci" / "run").write_text(script)
        subprocess.run(git + ["-C", str(repo), "add", "."], check=True)
        subprocess.run(git + ["-C", str(repo), "commit", "-qm", "step"], check=True)
    return repo


def test_each_revision_runs_as_ci_runs_it_on_its_own_clone(tmp_path):
    repo = _repo(
        tmp_path,
        # CI=true and no stdin (else 3 or 4); then a failing run (1) after its summary
        ('test "$CI" = true || exit 3; if read -t 1 line; then exit 4; fi\n'
         'echo "===== 10 passed, 1 skipped in 12.50s ====="; exit 1'),
        'python3 -c "sum(range(3_000_000))"; echo "== 3 passed in 0.75s =="; test ! -e ../../marker && touch marker',
    )
    result = ci.bench_ci(baseline="HEAD~1", repo=repo)
    base, course = result["baseline"], result["course"]
    assert base["returncode"] == 1
    assert (base["tests"], base["tests_s"]) == ("10 passed, 1 skipped", 12.5)
    assert (course["tests"], course["tests_s"], course["returncode"]) == ("3 passed", 0.75, 0)
    assert course["cpu_s"] > 0 and course["wall_s"] > 0 and course["commit"] != base["commit"]
    assert "tail" in base and "tail" not in course
    assert not (repo / "marker").exists()  # every run happens in a clone of its own
    json.dumps(result)


def test_outside_a_git_checkout_it_says_what_it_needs(tmp_path):
    with pytest.raises(RuntimeError, match="needs git and a git checkout"):
        ci.time_ci_run(tmp_path, "HEAD")


class _Worker:
    """A worker as the scheduler sees it: what it was told, in order."""

    def __init__(self, name):
        self.name, self.commands, self.shutting_down = name, [], False
        self.gateway = type("Gateway", (), {"id": name})()

    def send_runtest_some(self, indices):
        self.commands.append(("runtests", list(indices)))

    def shutdown(self):
        self.commands.append(("shutdown",))
        self.shutting_down = True


class _Config:
    def getvalue(self, name):
        return {"dist": "loadfile", "tx": ["2*popen"]}[name]


def _join(scheduler, worker, collection):
    """``worker`` ready with ``collection``, as xdist's session tells the scheduler."""
    scheduler.add_node(worker)
    scheduler.add_node_collection(worker, collection)
    return worker


def _scheduled(collection):
    """The test run's scheduler (conftest) after two workers collected ``collection`` and it scheduled."""
    import conftest

    scheduler = conftest.pytest_xdist_make_scheduler(_Config(), None)
    gw0, gw1 = (_join(scheduler, _Worker(name), collection) for name in ("gw0", "gw1"))
    scheduler.schedule()
    return scheduler, gw0, gw1


def test_every_group_is_handed_out_balanced_before_the_first_test_and_then_the_stop(monkeypatch):
    """The test run's scheduler (conftest): each worker is sent all its groups, longest first and
    balanced by their recorded seconds, then the stop, before any test runs, so no hand-out has to
    reach a worker while tests run; a group's tests stay together in one worker."""
    import conftest

    recorded = {"tests/test_long.py": 100.0, "shared": 60.0, "tests/test_mid.py": 50.0, "tests/test_short.py": 5.0}
    monkeypatch.setattr(conftest, "group_seconds", lambda: recorded)
    monkeypatch.setitem(conftest.SHARED, "tests/test_s1.py", "shared")
    monkeypatch.setitem(conftest.SHARED, "tests/test_s2.py", "shared")
    collection = ["tests/test_short.py::a", "tests/test_s1.py::a", "tests/test_long.py::a", "tests/test_long.py::b",
                  "tests/test_s2.py::a", "tests/test_mid.py::a", "tests/test_new.py::a", "tests/test_new.py::b"]
    scheduler, gw0, gw1 = _scheduled(collection)
    # long (100) to gw0; shared (60) and mid (50) to gw1 (60 + 50 = 110); short and the unlisted
    # new file (2 tests x 0.5 s) to gw0
    assert gw0.commands == [("runtests", [2, 3]), ("runtests", [0]), ("runtests", [6, 7]), ("shutdown",)]
    assert gw1.commands == [("runtests", [1, 4]), ("runtests", [5]), ("shutdown",)]
    assert not scheduler.workqueue and scheduler.collection == collection
    for index in (2, 3, 0, 6):
        scheduler.mark_test_complete(gw0, index)
    assert gw0.commands[-1] == ("shutdown",) and len(gw0.commands) == 4  # nothing more is sent
    assert scheduler.remove_node(gw1) == "tests/test_s1.py::a"  # a crashed worker's first unrun test


def test_a_replacement_for_a_crashed_worker_gets_every_test_the_crashed_one_had_not_finished(monkeypatch):
    """A worker that crashes is replaced by xdist; the replacement is sent the crashed worker's
    unfinished tests (not its finished groups), then the stop, and the run can finish."""
    import conftest

    monkeypatch.setattr(conftest, "group_seconds", lambda: {"tests/test_a.py": 10.0, "tests/test_b.py": 9.0,
                                                             "tests/test_c.py": 8.0})
    collection = ["tests/test_a.py::x", "tests/test_b.py::x", "tests/test_b.py::y", "tests/test_c.py::x",
                  "tests/test_c.py::y"]
    scheduler, gw0, gw1 = _scheduled(collection)
    assert gw1.commands == [("runtests", [1, 2]), ("runtests", [3, 4]), ("shutdown",)]  # b (9 s) and c (8 s)
    for index in (1, 2, 3):
        scheduler.mark_test_complete(gw1, index)
    assert scheduler.remove_node(gw1) == "tests/test_c.py::y"  # gw1 died in c's second test
    gw2 = _join(scheduler, _Worker("gw2"), collection)
    scheduler.schedule()
    assert gw2.commands == [("runtests", [4]), ("shutdown",)]  # not b, which gw1 had finished
    for worker, index in ((gw0, 0), (gw2, 4)):
        scheduler.mark_test_complete(worker, index)
    assert scheduler.tests_finished


def test_balanced_puts_each_group_longest_first_on_the_least_loaded_worker():
    import conftest

    assert conftest.balanced({"a": 3, "b": 3, "c": 2, "d": 2, "e": 2}, 2) == [["a", "c", "e"], ["b", "d"]]
    assert conftest.balanced({"a": 1}, 3) == [["a"], [], []]
    assert conftest.expected_seconds({"x": 4, "y": 2}, {"x": 9.5}) == {"x": 9.5, "y": 2 * conftest.SECONDS_PER_UNLISTED_TEST}
