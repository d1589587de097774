import json
import os
from pathlib import Path

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")


def pytest_configure(config):
    # The hidden cases are the grader's (course_admin), not the student package's: the tests drive
    # and judge exercises on them as the grader does.
    from course_admin.grading import hidden_cases

    hidden_cases.install()


def pytest_addoption(parser):
    parser.addoption("--run-slow", action="store_true", default=False, help="also run full-size (slow) tests")


# `make test` spreads the test files over 2 pytest-xdist workers (`--dist loadfile
# --no-loadscope-reorder`, with the scheduler below): a file runs whole in one worker, and every
# file is handed out before the first test starts, balanced by the seconds it took in a recent run
# (`GROUP_SECONDS_FILE`). Files that share a session fixture form one group, run by one worker (`SHARED`).
GROUP_SECONDS_FILE = Path(__file__).with_name("group_seconds.json")
"""Each group's seconds (setup, call and teardown of its tests) in a full `make test` run on 2 cores.
Only their proportions matter. Refresh it after adding or reshaping slow tests:
`COURSE_RECORD_GROUP_SECONDS=tests/group_seconds.json make test`."""
SECONDS_PER_UNLISTED_TEST = 0.5
"""A group missing from the file (a new test file) counts this much per test: the median file's."""
SHARED = {
    # one JupyterLab (the browser suite's session fixture `lab`) for both
    "tests/browser/test_notebooks_browser.py": "student_lab",
    "tests/browser/test_game_keys_browser.py": "student_lab",
    # one grading of tutorial 1 (tests/harlow_graded.py, once per run) for both: in one worker,
    # the second file finds it done instead of waiting, idle, for the other worker to finish it
    "tests/grading/test_tutorial_harlow.py": "harlow_graded",
    "tests/browser/test_manual_grading_browser.py": "harlow_graded",
}


def group(nodeid: str) -> str:
    """The group a test runs in: its file, or the group of files it shares a fixture with."""
    file = nodeid.split("::", 1)[0]
    return SHARED.get(file, file)


def group_seconds() -> dict[str, float]:
    return json.loads(GROUP_SECONDS_FILE.read_text()) if GROUP_SECONDS_FILE.exists() else {}


def expected_seconds(groups: dict[str, int], recorded: dict[str, float]) -> dict[str, float]:
    """Each group's expected seconds: ``recorded``, else its number of tests (``groups``) times
    ``SECONDS_PER_UNLISTED_TEST``."""
    return {name: recorded.get(name, count * SECONDS_PER_UNLISTED_TEST) for name, count in groups.items()}


def balanced(seconds: dict[str, float], workers: int) -> list[list[str]]:
    """The groups of each of ``workers`` workers: the longest group first, each to the worker
    expected to finish first so far (longest processing time first: within 4/3 of the best split).
    Each worker's list is in the order it runs them, longest first; ties keep ``seconds``'s order."""
    lists, loads = [[] for _ in range(workers)], [0.0] * workers
    for name in sorted(seconds, key=lambda name: -seconds[name]):
        least = loads.index(min(loads))
        lists[least].append(name)
        loads[least] += seconds[name]
    return lists


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config, log):
    """`--dist loadfile` by `group`, every group handed out at the start.

    Why at the start: xdist hands a worker its next file when the worker reports a test done.
    Three times in about twenty runs of the suite a worker sat idle on its last test while the
    other ran every file left (four minutes in one run), and the run hung or, once told to stop,
    ended with a file it had been handed unrun (INTERNALERROR `assert not crashitem`: the first
    test of tests/grading/test_derived_facts.py, handed out while the worker ran the formgrader
    browser tests). What that shows: the hand-out never reached the worker's queue (what lost it
    is not known). Handed out before any test starts, no file needs a message while tests run.
    (xdist's `loadgroup` names a test's group in its node id, which pytest 9 no longer lets a
    plugin change.)"""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class GroupScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return group(nodeid)

        def schedule(self) -> None:
            if self.collection is not None:  # a replacement for a crashed worker joined
                self._hand_out_what_is_left()
                return
            if not self._check_nodes_have_same_collection():
                self.log("**Different tests collected, aborting run**")
                return
            self.collection = list(next(iter(self.registered_collections.values())))
            for nodeid in self.collection:
                self.workqueue.setdefault(self._split_scope(nodeid), {})[nodeid] = False
            counts = {name: len(unit) for name, unit in self.workqueue.items()}
            plan = balanced(expected_seconds(counts, group_seconds()), len(self.nodes))
            for node, names in zip(self.nodes, plan, strict=True):
                for name in names:
                    self.workqueue.move_to_end(name, last=False)  # _assign_work_unit takes the first
                    self._assign_work_unit(node)
            for node in self.nodes:  # each runs what it has, then stops
                node.shutdown()

        def _hand_out_what_is_left(self) -> None:
            """Every test a crashed worker had not finished (``remove_node`` put its groups back,
            finished ones too) to the first worker not told to stop, then its stop. (xdist's own
            would hand it one group, perhaps a finished one, as an empty list of tests: no report
            would come back to ask for the next, and the run would hang.)"""
            for name in [name for name, unit in self.workqueue.items() if all(unit.values())]:
                del self.workqueue[name]
            fresh = next((node for node in self.nodes if not node.shutting_down), None)
            if fresh is None:
                return
            while self.workqueue:
                self._assign_work_unit(fresh)
            fresh.shutdown()

    return GroupScheduling(config, log)


def pytest_collection_modifyitems(config, items):
    seconds = group_seconds()
    first = {}
    for index, item in enumerate(items):
        first.setdefault(group(item.nodeid), index)
    # a group's tests together, in file order (sorted() is stable); without xdist, the longest first
    items[:] = sorted(items, key=lambda item: (-seconds.get(group(item.nodeid), 0), first[group(item.nodeid)]))
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason="full-size run: use --run-slow (make test-slow)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


_RECORDED: dict[str, float] = {}


def pytest_runtest_logreport(report):
    if os.environ.get("COURSE_RECORD_GROUP_SECONDS"):
        _RECORDED[group(report.nodeid)] = _RECORDED.get(group(report.nodeid), 0.0) + report.duration


def pytest_sessionfinish(session):
    """With ``COURSE_RECORD_GROUP_SECONDS=PATH``, the controller (or a run without xdist) writes
    each group's seconds there (``GROUP_SECONDS_FILE``'s format), over that file's figures for the
    groups that ran."""
    path = os.environ.get("COURSE_RECORD_GROUP_SECONDS")
    if path and not hasattr(session.config, "workerinput") and _RECORDED:
        # merged into what the file holds: a run of some files updates those alone
        old = json.loads(Path(path).read_text()) if Path(path).exists() else {}
        recorded = {**old, **{name: round(seconds, 1) for name, seconds in _RECORDED.items()}}
        Path(path).write_text(json.dumps(dict(sorted(recorded.items(), key=lambda kv: -kv[1])), indent=1) + "\n")


@pytest.fixture(scope="session")
def dask_scheduler():
    """The address of one local Dask cluster (one single-threaded worker process) per test
    process, for the tests that grade a class through Dask but are not about starting a cluster.
    ``course autograde``'s own cluster (``scheduler=None``) is what the hostile corpus and
    tests/grading/test_dispatch.py grade with.

    One worker, not two: each worker process costs CPU of its own (about 3 CPU-s to start, and
    8 to 10 more on the first tutorial notebook it grades: nbgrader's imports, its kernel
    zygote, its drive runner), and `make test` already runs two test processes on two cores, so
    a second worker per test process adds that cost and no throughput
    (tests/grading/test_autograder.py alone: 80.6 CPU-s with two workers, 52.8 with one)."""
    from course_admin.grading.dispatch import close_cluster, start_local_cluster

    cluster = start_local_cluster(1).result()
    yield cluster.scheduler_address
    close_cluster(cluster)
