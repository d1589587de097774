"""``course bench grading``: submissions per minute with 1 and 2 Dask workers and through a
``dask scheduler``, on the synthetic assignment (``synthetic``)."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from course_admin.grading.dispatch import dask_environment
from course_admin.grading.synthetic import student_version, synthetic_assignment


def _start_dask_cluster(workers: int) -> tuple[str, list[subprocess.Popen]]:
    """``dask scheduler`` and ``workers`` single-threaded ``dask worker`` processes on
    127.0.0.1, started with the command-line tools as an instructor would."""
    scripts = Path(sys.executable).parent
    dask = str(scripts / "dask")
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        scheduler_file = f.name
    os.unlink(scheduler_file)
    env = {**os.environ, **dask_environment(), "PATH": str(scripts) + os.pathsep + os.environ.get("PATH", "")}
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": env}
    processes = [
        subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--dashboard-address", ":0",
                          "--scheduler-file", scheduler_file], **quiet)
    ]
    deadline = time.time() + 120
    while not os.path.exists(scheduler_file) or not Path(scheduler_file).read_text().strip():
        if time.time() > deadline:
            raise RuntimeError("dask scheduler did not start")
        time.sleep(0.2)
    time.sleep(0.2)
    address = json.loads(Path(scheduler_file).read_text())["address"]
    for _ in range(workers):
        processes.append(
            subprocess.Popen([dask, "worker", address, "--nthreads", "1", "--nworkers", "1", "--host", "127.0.0.1",
                              "--memory-limit", "0", "--no-dashboard"], **quiet)
        )
    from distributed import Client

    with Client(address) as client:
        client.wait_for_workers(workers, timeout=180)
    return address, processes


_SPIN = """
import sys, time
import numpy as np
total, x = 0, np.ones(64)
print("ready", flush=True)
sys.stdin.readline()
start, cpu = time.perf_counter(), time.process_time()
for i in range(int(sys.argv[1])):
    total += i % 7
    if i % 100 == 0:
        x = np.tanh(x * 0.5 + 0.1)
print(time.perf_counter() - start, time.process_time() - cpu)
"""
"""A fixed piece of interpreter and small-NumPy work (``argv[1]`` loop steps, 3,000,000 about 1 s
on one core): the kind of work grading is made of (nbgrader, kernels, the checks). It starts when
told on its standard input, after the interpreter and NumPy are up, and prints its own wall and
CPU seconds: start-up, which is not this work, counts in neither."""


def _spin_together(count: int, steps: int) -> list[tuple[float, float]]:
    """(wall s, CPU s) of ``count`` copies of ``_SPIN`` released at the same moment."""
    spinners = [subprocess.Popen([sys.executable, "-c", _SPIN, str(steps)], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True) for _ in range(count)]
    for spinner in spinners:
        if spinner.stdout.readline().strip() != "ready":
            raise RuntimeError(f"the timing job did not start: {spinner.communicate()}")
    for spinner in spinners:
        spinner.stdin.write("go\n")
        spinner.stdin.flush()
    results = []
    for spinner in spinners:
        out, _ = spinner.communicate()
        wall, cpu = map(float, out.split())
        results.append((wall, cpu))
    return results


def machine_ceiling(workers: int = 2, repeats: int = 5, steps: int = 6_000_000) -> dict:
    """How much faster ``workers`` processes finish ``workers`` copies of the same CPU-bound work
    (``_SPIN``, about 2 s) than one process finishes one copy, on this machine now: the most any
    parallel grading can gain here. On a machine whose cores slow each other down (virtual CPUs
    that are hyperthreads of one host core, or a busy host), this is well below ``workers``.

    One copy alone and ``workers`` at once are timed in turns, ``repeats`` times, and the median
    of the turns' ratios is reported: this VM's speed moves from minute to minute, and a ratio of
    two runs minutes apart measured that drift, not the cores. Each copy times only its own loop
    (the interpreter's start-up is not the work), ``workers`` copies the slowest of them.
    ``machine_cpu_per_copy_*`` is each copy's CPU seconds: when it rises with ``workers`` at once,
    the cores slow each other down; when wall rises but CPU does not, something else ran."""
    alone, together, cpu_alone, cpu_together, ratios = [], [], [], [], []
    for _ in range(repeats):
        (one_wall, one_cpu), = _spin_together(1, steps)
        several = _spin_together(workers, steps)
        slowest = max(wall for wall, _ in several)
        alone.append(one_wall)
        together.append(slowest)
        cpu_alone.append(one_cpu)
        cpu_together.append(statistics.mean(cpu for _, cpu in several))
        ratios.append(workers * one_wall / slowest)
    return {"machine_one_process_s": round(statistics.median(alone), 2),
            f"machine_{workers}_processes_s": round(statistics.median(together), 2),
            "machine_cpu_per_copy_alone_s": round(statistics.median(cpu_alone), 2),
            f"machine_cpu_per_copy_{workers}_at_once_s": round(statistics.median(cpu_together), 2),
            f"machine_speedup_{workers}_vs_1": round(statistics.median(ratios), 2),
            "machine_repeats": repeats}


def timeline(spans: dict[str, tuple], start: float, end: float) -> dict:
    """Where a grading run's workers sat idle or warmed up, from its tasks' (worker, start, stop)
    in seconds since the epoch (``Report.task_spans``) and the run's own start and end:

    - ``before_first_task_s``: the run's start to its first task's (the coordinator's
      generation and jobs, the cluster's start, the worker's imports of the grading task);
    - ``start_spread_core_s``: core-seconds the other workers started their first task later;
    - ``first_task_s`` against ``task_median_s``: each worker's first task (the mean) against
      the others (the median): a worker's one-time imports and kernel zygote;
    - ``gaps_core_s``: between one task's end and the next's start on the same worker, summed;
    - ``tail_core_s``: core-seconds the workers waited for the last task to end, summed;
    - ``after_last_task_s``: the last task's end to the run's end (the last merge, read-back,
      CSV, similarity, summary, the cluster's close)."""
    by_worker: dict[str, list[tuple[float, float]]] = {}
    for worker, begun, ended in spans.values():
        if begun is not None:
            by_worker.setdefault(worker, []).append((begun, ended))
    if not by_worker:
        return {}
    runs = [sorted(tasks) for tasks in by_worker.values()]
    first_start = min(tasks[0][0] for tasks in runs)
    last_stop = max(tasks[-1][1] for tasks in runs)
    rest = [stop - begun for tasks in runs for begun, stop in tasks[1:]]
    return {"before_first_task_s": round(first_start - start, 2),
            "start_spread_core_s": round(sum(tasks[0][0] - first_start for tasks in runs), 2),
            "first_task_s": round(statistics.mean(tasks[0][1] - tasks[0][0] for tasks in runs), 2),
            "task_median_s": round(statistics.median(rest), 2) if rest else None,
            "gaps_core_s": round(sum(max(0.0, b[0] - a[1]) for tasks in runs for a, b in zip(tasks, tasks[1:], strict=False)), 2),
            "tail_core_s": round(sum(last_stop - tasks[-1][1] for tasks in runs), 2),
            "after_last_task_s": round(end - last_stop, 2)}


def bench_grading(submissions: int = 40, workers: int = 2, train_steps: int = 80_000) -> dict:
    """Submissions per minute for ``submissions`` synthetic submissions (a third full marks,
    a third partial, a third untouched) graded with 1 worker, with ``workers`` workers (local
    cluster), and through a ``dask scheduler`` plus ``workers`` ``dask worker`` processes on
    127.0.0.1. ``records_*`` grades the same submissions with hidden tests that record and a
    grader that judges (``judging``, the course's way) with 1 and ``workers`` workers;
    ``records_vs_kernel_*`` is its cost per submission over the asserts judged in the kernel.

    Each submission first trains a small model for ``train_steps`` gradient steps (about 1 s
    of CPU; real submissions of this course train for 20 to 70 s), so that the figures are
    about grading work. ``overhead_*`` repeats 1 and ``workers`` workers with no training
    (``train_steps=0``): what is left is nbgrader's and the kernels' own cost per submission,
    where latencies (kernel start-up, polling) weigh most and parallel workers gain least.

    Each run starts from an empty course folder, so nothing is skipped as unchanged.
    ``*_per_minute`` is end to end (course set-up and cluster start-up included);
    ``*_grading_phase_per_minute`` counts from the tasks sent (cluster up) to the last result
    merged. ``*_before_first_task_s`` ... ``*_after_last_task_s``: where the run's workers sat idle
    or warmed up (``timeline``). ``*_cores_used`` is the tasks' CPU seconds (grading and kernels) plus the
    coordinator's over the grading phase's wall seconds. On a shared machine the wall
    figures are inflated by other load: see ``load_average_*``."""
    from course_admin.grading import autograder as grading
    from course_admin.grading import student_notebooks

    figures: dict = {"benchmark": "grading", "submissions": submissions, "workers": workers, "cores": os.cpu_count()}
    figures["train_steps"] = train_steps
    figures["load_average_before"] = round(os.getloadavg()[0], 2)
    scores: dict[str, list] = {}
    with tempfile.TemporaryDirectory(prefix="course-bench-grading-") as tmp:
        tmp = Path(tmp)

        def submissions_folder(label: str, steps: int, records: bool = False) -> tuple[Path, Path]:
            source = tmp / f"solutions-{label}"
            solution = json.loads(synthetic_assignment(source, train_steps=steps, records=records).read_text())
            folder = tmp / f"submissions-{label}"
            folder.mkdir()
            variants = [student_version(solution, "add", "square"), student_version(solution, "add"), student_version(solution)]
            for i in range(submissions):
                (folder / f"student{i:03d}.ipynb").write_text(json.dumps(variants[i % 3]))
            return folder, source

        def run(label: str, folder: Path, source: Path, **kwargs) -> None:
            course = tmp / f"course-{label}"
            student_notebooks.forget_generated()  # each run pays its generation, as one `course autograde` does
            children = os.times()
            start, cpu, epoch = time.perf_counter(), time.process_time(), time.time()
            report = grading.autograde(folder, out=tmp / f"out-{label}", course_dir=course, source=source,
                                       progress=False, **kwargs)
            wall = time.perf_counter() - start
            figures.update({f"{label}_{key}": value for key, value in timeline(report.task_spans, epoch, time.time()).items()})
            after = os.times()
            graded = sum(s.assignment is not None and not s.problems for s in report.submissions)
            figures[f"{label}_wall_s"] = round(wall, 2)
            figures[f"{label}_coordinator_cpu_s"] = round(time.process_time() - cpu, 2)
            figures[f"{label}_children_cpu_s"] = round(after.children_user + after.children_system
                                                       - children.children_user - children.children_system, 2)
            figures[f"{label}_worker_cpu_s"] = round(sum(report.task_cpu_seconds.values()), 2)
            figures[f"{label}_per_minute"] = round(60 * submissions / wall, 1)
            figures[f"{label}_grading_phase_per_minute"] = round(60 * submissions / report.grading_seconds, 1)
            task_cpu = figures[f"{label}_worker_cpu_s"] + figures[f"{label}_coordinator_cpu_s"]
            figures[f"{label}_cores_used"] = round(task_cpu / report.grading_seconds, 2)
            figures[f"{label}_graded_ok"] = graded
            scores[label] = sorted((s.name, s.score) for s in report.submissions)

        work = submissions_folder("train", train_steps)
        run("workers_1", *work, workers=1)
        run(f"workers_{workers}", *work, workers=workers)
        recorded = submissions_folder("records", train_steps, records=True)
        run("records_workers_1", *recorded, workers=1)
        run(f"records_workers_{workers}", *recorded, workers=workers)
        address, processes = _start_dask_cluster(workers)
        try:
            run("scheduler", *work, scheduler=address)
        finally:
            for process in processes[::-1]:
                process.terminate()
            for process in processes:
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    process.kill()
        empty = submissions_folder("overhead", 0)
        run("overhead_workers_1", *empty, workers=1)
        run(f"overhead_workers_{workers}", *empty, workers=workers)
    figures[f"speedup_{workers}_vs_1"] = round(figures[f"workers_{workers}_per_minute"] / figures["workers_1_per_minute"], 2)
    figures[f"speedup_{workers}_vs_1_grading_phase"] = round(
        figures[f"workers_{workers}_grading_phase_per_minute"] / figures["workers_1_grading_phase_per_minute"], 2
    )
    figures[f"overhead_speedup_{workers}_vs_1"] = round(
        figures[f"overhead_workers_{workers}_per_minute"] / figures["overhead_workers_1_per_minute"], 2
    )
    # Judging from records (the hidden tests drive and record in the kernel, the grader judges)
    # against today's way (asserts judged in the kernel), same submissions and work otherwise.
    for kind in ("wall_s", "worker_cpu_s"):
        figures[f"records_vs_kernel_{kind}"] = round(figures[f"records_workers_1_{kind}"] / figures[f"workers_1_{kind}"], 3)
    figures["records_same_scores"] = scores["records_workers_1"] == scores["workers_1"] == scores[f"records_workers_{workers}"]
    figures[f"records_speedup_{workers}_vs_1"] = round(
        figures[f"records_workers_{workers}_per_minute"] / figures["records_workers_1_per_minute"], 2
    )
    figures.update(bench_course_grading(workers))
    # The same measure for the machine itself: what share of the most that ``workers`` cores
    # can give here the grading's speed-up reaches.
    figures.update(machine_ceiling(workers))
    ceiling = figures[f"machine_speedup_{workers}_vs_1"]
    for label in ("speedup", "records_speedup", "overhead_speedup"):
        figures[f"{label}_{workers}_vs_1_of_machine"] = round(figures[f"{label}_{workers}_vs_1"] / ceiling, 2)
    figures["load_average_after"] = round(os.getloadavg()[0], 2)
    figures["note"] = "shared machine: wall figures include contention from other jobs; see the cpu figures"
    return figures


def bench_course_grading(workers: int = 2) -> dict:
    """A real course submission set: the four solution notebooks (as handed in, whole), graded
    with 1 worker (hidden tests driven apart, ``drive_apart``; given cells no grade needs not run,
    ``skip_cells``), then with every cell run (``every_cell``), then with ``workers`` workers. Per
    submission (``*_cpu_s``: each notebook's worker CPU) and in total; whether the scores are the
    same every way; and what a second student's four notebooks cost a worker that graded a
    first (``course_second_student_*``: the steady state of a class, without the worker's one-time
    imports). (The hidden tests have no in-kernel baseline: the student package holds no hidden
    case.)"""
    from course_admin.exercises import TUTORIALS
    from course_admin.grading import autograder as grading
    from course_admin.grading import student_notebooks
    from course_admin.grading.sandbox import Limits
    from course_utils.paths import SOLUTIONS

    figures: dict = {"load_average_before": round(os.getloadavg()[0], 2)}
    scores: dict[str, list] = {}
    names = {f"student{number}": notebook for number, notebook in enumerate(TUTORIALS.values())}
    with tempfile.TemporaryDirectory(prefix="course-bench-course-") as tmp:
        tmp = Path(tmp)
        folder = tmp / "submissions"
        folder.mkdir()
        for student, notebook in names.items():
            (folder / f"{student}.ipynb").write_bytes((SOLUTIONS / f"{notebook}.ipynb").read_bytes())
        runs = (("course_workers_1", Limits(), 1), ("course_every_cell_workers_1", Limits(skip_given=False), 1),
                (f"course_workers_{workers}", Limits(), workers))
        for label, limits, count in runs:
            student_notebooks.forget_generated()
            start = time.perf_counter()
            report = grading.autograde(folder, out=tmp / f"out-{label}", course_dir=tmp / f"course-{label}",
                                       workers=count, limits=limits, progress=False)
            figures[f"{label}_wall_s"] = round(time.perf_counter() - start, 2)
            figures[f"{label}_worker_cpu_s"] = round(sum(report.task_cpu_seconds.values()), 2)
            if count == 1:
                figures[f"{label}_cpu_s"] = {names[key.split("/")[0]]: round(cpu, 2)
                                              for key, cpu in sorted(report.task_cpu_seconds.items())}
            scores[label] = sorted((s.name, s.score) for s in report.submissions)
        # What one more student costs once a worker is warm: the first notebooks a worker grades
        # also pay for its imports (torch, the tutorials' checks) and its kernel zygote, once.
        pair = tmp / "two-students"
        pair.mkdir()
        for student, notebook in names.items():
            for copy in ("first", "second"):
                (pair / f"{copy}-{student}.ipynb").write_bytes((SOLUTIONS / f"{notebook}.ipynb").read_bytes())
        student_notebooks.forget_generated()
        report = grading.autograde(pair, out=tmp / "out-two", course_dir=tmp / "course-two", workers=1,
                                   progress=False)
        for copy in ("first", "second"):
            figures[f"course_{copy}_student_worker_cpu_s"] = round(
                sum(cpu for key, cpu in report.task_cpu_seconds.items() if key.startswith(f"{copy}-")), 2)
        figures["course_second_student_cpu_s"] = {
            names[key.split("/")[0].removeprefix("second-")]: round(cpu, 2)
            for key, cpu in sorted(report.task_cpu_seconds.items()) if key.startswith("second-")}
    for kind in ("wall_s", "worker_cpu_s"):
        figures[f"course_vs_every_cell_{kind}"] = round(
            figures[f"course_workers_1_{kind}"] / figures[f"course_every_cell_workers_1_{kind}"], 3)
    figures[f"course_speedup_{workers}_vs_1"] = round(
        figures["course_workers_1_wall_s"] / figures[f"course_workers_{workers}_wall_s"], 2)
    figures["course_same_scores"] = len(set(map(tuple, scores.values()))) == 1
    figures["course_scores"] = scores["course_workers_1"]
    if not figures["course_same_scores"]:  # which run differed, and how (a cell past its time limit on a loaded machine?)
        figures["course_scores_by_run"] = scores
    figures["load_average_after"] = round(os.getloadavg()[0], 2)
    return figures
