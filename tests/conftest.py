import os

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")


def pytest_addoption(parser):
    parser.addoption("--run-slow", action="store_true", default=False, help="also run full-size (slow) tests")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason="full-size run: use --run-slow (make test-slow)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def dask_scheduler():
    """The address of one local Dask cluster (2 single-threaded worker processes) per test
    process, for the tests that grade a class through Dask but are not about starting a cluster:
    starting one costs about 3 s of wall-clock and 6 s of CPU, and the first submission each
    worker grades imports nbgrader. ``course autograde``'s own cluster (``scheduler=None``) is
    what the hostile corpus and tests/grading/test_dispatch.py grade with."""
    from course_admin.grading.dispatch import close_cluster, start_local_cluster

    cluster = start_local_cluster(2).result()
    yield cluster.scheduler_address
    close_cluster(cluster)
