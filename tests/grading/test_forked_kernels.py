"""A grading kernel forked from the kernel zygote (``forked_kernels``, ``kernel_zygote``) is the
kernel ``sandbox.py kernel`` launches: same sandbox, descriptors, environment, folders, paths and
fresh random streams; and the grader counts its CPU. (The hostile corpus, tests/grading/
test_hostile.py, attacks the forked kernels: it grades through them.)"""

import json

import pytest

from course_admin import grading
from course_admin.grading import forked_kernels
from course_admin.grading.synthetic import TINY, synthetic_assignment

pytestmark = pytest.mark.grading

PROBE = """
import json, os, random, sys, tempfile, threading, time
import numpy

def settled_descriptors():
    # The kernel's own threads (heartbeat, iopub, control) open and close descriptors while this
    # cell runs: list them until two listings 0.2 s apart agree, so a descriptor held for a moment
    # by another thread is not counted.
    def listing():
        fds = sorted(int(fd) for fd in os.listdir("/proc/self/fd"))
        kinds = []
        for fd in fds:
            try:
                target = os.readlink(f"/proc/self/fd/{fd}")
            except OSError:
                continue
            kinds.append((fd, target.split(":[")[0] if ":[" in target else target))
        return kinds
    previous = listing()
    for _ in range(25):
        time.sleep(0.2)
        current = listing()
        if current == previous:
            return current
        previous = current
    return previous

print("PROBE", json.dumps({
    "fds": settled_descriptors(),
    "environment": dict(os.environ),
    "cwd": os.getcwd(),
    "home_listing": sorted(os.listdir(os.path.expanduser("~"))),
    "tmp": tempfile.gettempdir(),
    "path": sys.path,
    "argv0": os.path.basename(sys.argv[0]),
    "random": random.random(),
    "numpy_random": float(numpy.random.random()),
    "session_leader": os.getsid(0) == os.getpid(),
    "backend": __import__("matplotlib").get_backend(),
    "no_new_privs": open("/proc/self/status").read().split("NoNewPrivs:")[1].split()[0],
    "seccomp": open("/proc/self/status").read().split("Seccomp:")[1].split()[0],
}))
"""


def _probes(tmp_path, solution: dict, students: int, forked: bool, monkeypatch) -> tuple[list[dict], object]:
    monkeypatch.setattr(forked_kernels, "ENABLED", forked)
    folder = tmp_path / f"subs-{forked}"
    folder.mkdir()
    notebook = json.loads(json.dumps(solution))
    notebook["cells"].insert(1, {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                                 "source": PROBE})
    for number in range(students):
        (folder / f"s{number}.ipynb").write_text(json.dumps(notebook))
    course = tmp_path / f"course-{forked}"
    report = grading.autograde(folder, out=tmp_path / f"out-{forked}", course_dir=course, source=tmp_path / "source",
                               workers=0, progress=False)
    probes = []
    for number in range(students):
        graded = json.loads((course / "autograded" / f"s{number}" / TINY / f"{TINY}.ipynb").read_text())
        text = "".join("".join(o.get("text", "")) for c in graded["cells"] for o in c.get("outputs", []))
        probes.append(json.loads(text.split("PROBE ", 1)[1].splitlines()[0]))
    return probes, report


def _comparable(probe: dict, workdir_of: str) -> dict:
    """A probe with what differs between any two kernels (pids, folders, tokens, random draws) named."""
    def named(value):
        return value.replace(workdir_of, "WORK") if isinstance(value, str) else value

    kept = {key: value for key, value in probe.items() if key not in ("random", "numpy_random")}
    kept["environment"] = {key: named(value) for key, value in probe["environment"].items()
                           if key not in ("COURSE_SANDBOX", "JPY_PARENT_PID")}
    kept["path"] = [named(p) for p in probe["path"]]
    # What each descriptor is, counted: which number the kernel's zmq sockets get depends on the
    # order its threads open them in, a race between any two kernels; one more or one other
    # descriptor (a zygote pipe left open, a file) is what must not differ.
    kept["fds"] = sorted(named(kind) for _, kind in probe["fds"])
    return {key: named(value) if key != "environment" else value for key, value in kept.items()}


def test_a_forked_kernel_is_the_launched_one_with_its_own_random_streams(tmp_path, monkeypatch):
    solution = json.loads(synthetic_assignment(tmp_path / "source").read_text())
    cpu_before = forked_kernels.CPU_SECONDS
    forked, forked_report = _probes(tmp_path, solution, 2, True, monkeypatch)
    forked_cpu = forked_kernels.CPU_SECONDS - cpu_before
    launched, launched_report = _probes(tmp_path, solution, 1, False, monkeypatch)
    assert forked_kernels._ZYGOTE.alive() is not None  # they were forked
    reference = _comparable(launched[0], launched[0]["cwd"])
    for probe in forked:
        assert _comparable(probe, probe["cwd"]) == reference
    assert forked[0]["random"] != forked[1]["random"] and forked[0]["numpy_random"] != forked[1]["numpy_random"]
    assert reference["session_leader"] and reference["seccomp"] == "2" and reference["no_new_privs"] == "1"
    assert reference["tmp"] == "WORK/.tmp"
    # the same sandbox applied, and the same grades
    for report in (forked_report, launched_report):
        assert [s.score for s in report.submissions] == [3.0] * len(report.submissions)
    # the forked kernels' CPU counts in the submissions' figures: they are the zygote's children
    assert forked_cpu > 0.05


def test_a_zygote_started_early_serves_the_first_kernel_and_is_counted_once(tmp_path, monkeypatch):
    """``start_early`` starts the zygote without waiting for its imports; the submission's kernel
    is forked from that zygote, and its imports count once, in the figures of the submission that
    first needed a kernel."""
    solution = json.loads(synthetic_assignment(tmp_path / "source").read_text())
    forked_kernels._stop()
    before = forked_kernels.CPU_SECONDS
    forked_kernels.start_early()
    early = forked_kernels._ZYGOTE.alive()
    assert early is not None and not forked_kernels._READY
    forked_kernels.start_early()
    assert forked_kernels._ZYGOTE.alive() is early and forked_kernels.CPU_SECONDS == before  # kept, nothing counted yet
    _, report = _probes(tmp_path, solution, 1, True, monkeypatch)
    assert forked_kernels._ZYGOTE.alive() is early and forked_kernels._READY
    assert [s.score for s in report.submissions] == [3.0]
    # the zygote's imports (ipykernel, NumPy, Matplotlib, torch: seconds) and the kernel's CPU
    assert forked_kernels.CPU_SECONDS - before > 1.0
    assert sum(report.task_cpu_seconds.values()) > forked_kernels.CPU_SECONDS - before
