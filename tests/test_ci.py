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
    def __init__(self, told=False):
        self.shutting_down, self.told = told, 0

    def shutdown(self):
        self.shutting_down, self.told = True, self.told + 1


class _Scheduler:
    def __init__(self, collection, workqueue, nodes):
        self.collection, self.workqueue, self.nodes = collection, workqueue, nodes


def test_every_worker_is_told_to_stop_once_every_group_is_handed_out():
    """The test run's scheduler (conftest): once the last group is handed out, each worker not
    told yet is told to stop (a worker sitting on its last test then runs it and ends), and none
    before: not while groups wait, not before the first distribution."""
    from conftest import shut_down_once_all_handed_out

    idle, busy, told = _Worker(), _Worker(), _Worker(told=True)
    shut_down_once_all_handed_out(_Scheduler(["a::t"], {"tests/test_b.py": {"b::t": False}}, [idle, busy]))
    shut_down_once_all_handed_out(_Scheduler(None, {}, [idle, busy]))
    assert idle.told == busy.told == 0
    shut_down_once_all_handed_out(_Scheduler(["a::t"], {}, [idle, busy, told]))
    assert idle.told == busy.told == 1 and told.told == 0
    shut_down_once_all_handed_out(_Scheduler(["a::t"], {}, [idle, busy, told]))
    assert idle.told == busy.told == 1  # once
