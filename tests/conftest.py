import os

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
# --no-loadscope-reorder`): a file runs whole in one worker, and files are handed out one at a
# time, in the order of collection, to whichever worker is free. The files below go first, the
# longest first, so that the last file to start is a short one and neither worker waits long for
# the other at the end (xdist's own order, most tests first, started these few-test grading files
# last). Files that share a session fixture form one group, run by one worker (`SHARED`).
SLOWEST_FIRST = {
    # group: its seconds (setup and calls) in a full run on 2 cores shared with other work (load
    # 15, 2026-11-26): only their order matters. Unlisted files take under a minute each there
    # and follow in file order.
    "tests/grading/test_bundle.py": 790,
    "student_lab": 740,
    "tests/grading/test_forgery.py": 520,
    "tests/grading/test_hostile.py": 430,
    "tests/grading/test_skip_cells.py": 330,  # scaled by its CPU (tutorial 2 up to its last graded cell)
    "tests/grading/test_tutorial_lunar.py": 185,
    "tests/grading/test_autograder.py": 130,
    "harlow_graded": 110,  # test_tutorial_harlow's 75 and the manual-grading browser test's formgrader part
    "tests/grading/test_tutorial_replay.py": 90,
    "tests/grading/test_notebook_size.py": 90,
    "tests/grading/test_judging.py": 40,
    "tests/harlow/test_evolution.py": 40,
    "tests/browser/test_formgrader_browser.py": 30,
}
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


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config, log):
    """`--dist loadfile` by `group` instead of by file. (xdist's `loadgroup` names a test's
    group in its node id, which pytest 9 no longer lets a plugin change.)"""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class GroupScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return group(nodeid)

        def _reschedule(self, node) -> None:
            super()._reschedule(node)
            shut_down_once_all_handed_out(self)

    return GroupScheduling(config, log)


def shut_down_once_all_handed_out(scheduler) -> None:
    """Tell every worker not told yet to finish what it has and stop, once the scheduler has
    handed out every group (``workqueue`` empty after the first distribution).

    Why: xdist tells a worker to stop only when that worker reports a test done and nothing is
    left to hand out, and a worker keeps the last test it was given unrun until it hears of a
    next one or of the stop (pytest needs the next test to tear fixtures down). Twice in about
    ten CI runs, after the other worker took the last group, a worker sat on its last test with
    nothing to report and was never told to stop: the run hung at 96-97% with both workers idle
    (`py-spy dump`: one in xdist's ``TestQueue.get``, the other's session over). A stop sent to
    a worker that still has tests only queues behind them, as xdist's own does."""
    if scheduler.collection is None or scheduler.workqueue:
        return
    for node in scheduler.nodes:
        if not node.shutting_down:
            node.shutdown()


def pytest_collection_modifyitems(config, items):
    first = {}
    for index, item in enumerate(items):
        first.setdefault(group(item.nodeid), index)
    # a group's tests together, in file order (sorted() is stable); the slowest groups first
    items[:] = sorted(items, key=lambda item: (-SLOWEST_FIRST.get(group(item.nodeid), 0), first[group(item.nodeid)]))
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason="full-size run: use --run-slow (make test-slow)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


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
