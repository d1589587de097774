"""Autograding a class with hostile and broken submissions (tests/hostile_submissions.py), in
parallel on 2 Dask workers, on the tiny synthetic assignment. One run backs most assertions;
a second run on the same folder plus one new submission checks that grading is idempotent.

Every submission must end with a grade and a clear reason, without stopping the run or
changing anyone else's result: ``normal`` must keep full marks.
"""

import csv
import json
import os
import socket
import subprocess
import sys
import uuid

import pytest
from hostile_submissions import LEAKED, build, build_intake

from course_admin import grading
from course_admin.grading import kernel_restrictions, regrade_index, sandbox
from course_admin.grading.synthetic import TINY, student_version, synthetic_assignment

pytestmark = pytest.mark.grading
LIMITS = sandbox.Limits(cell_timeout=5, wall_timeout=30, memory_mb=1536, output_mb=1)
ABI = kernel_restrictions.landlock_abi()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hostile")
    solutions = tmp / "solutions"
    solution = json.loads(synthetic_assignment(solutions).read_text())
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(5)
    listener.setblocking(False)
    home_file = tmp / "instructor-home" / "secret.txt"
    home_file.parent.mkdir()
    home_file.write_text("instructor's secret")
    course = tmp / "course"
    paths = {
        "marker": f"/tmp/course-hostile-{uuid.uuid4().hex}",
        "solution": str(solutions / f"{TINY}.ipynb"),
        "gradebook": str(course / "gradebook.db"),
        "home_file": str(home_file),
        "port": listener.getsockname()[1],
        "signals_scoped": ABI >= 6,
        "survivor_port": _free_fixed_port(),
    }
    folder = tmp / "submissions"
    expected = {ident: (score, reason, ident.split("~")[0]) for ident, (score, reason) in build(folder, solution, paths).items()}
    expected.update(build_intake(folder, solution, paths))
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file() and not p.is_symlink()}
    out = tmp / "out"
    # Everything the grader and its kernels write to this process's stdout and stderr, which
    # would be the instructor's terminal (the workers and kernels inherit descriptors 1 and 2).
    terminal = tmp / "terminal.txt"
    saved = [os.dup(1), os.dup(2)]
    with terminal.open("wb") as sink:
        os.dup2(sink.fileno(), 1)
        os.dup2(sink.fileno(), 2)
        try:
            report = grading.autograde(folder, out=out, course_dir=course, source=solutions, workers=2, limits=LIMITS,
                                       progress=False)
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)
    rows = {row["gradebook_id"]: row for row in csv.DictReader(report.csv_path.open(encoding="utf-8"))}
    try:
        accepted = listener.accept()
        accepted[0].close()
    except BlockingIOError:
        accepted = None
    listener.close()
    yield {
        "report": report, "rows": rows, "expected": expected, "paths": paths, "folder": folder, "before": before,
        "out": out, "course": course, "solutions": solutions, "solution": solution, "accepted": accepted,
        "terminal": terminal.read_bytes(),
    }
    if os.path.exists(paths["marker"]):
        os.unlink(paths["marker"])


def _free_fixed_port() -> int:
    """A free TCP port below the ephemeral range (32768 and up): no other program is handed it
    by chance while the corpus is graded."""
    for port in range(21_000, 32_000, 7):
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue
    raise RuntimeError("no free port between 21000 and 32000")


def printed(corpus, student: str) -> str:
    """Everything a submission's cells printed, from its autograded notebook."""
    notebook = json.loads((corpus["course"] / "autograded" / student / TINY / f"{TINY}.ipynb").read_text())
    texts = []
    for cell in notebook["cells"]:
        for output in cell.get("outputs", []):
            text = output.get("text", "")
            texts.append("".join(text) if isinstance(text, list) else text)
    return "".join(texts)


def test_every_submission_gets_its_grade_and_reason(corpus):
    rows, expected = corpus["rows"], corpus["expected"]
    assert set(rows) == set(expected)
    for student, (score, reason, name) in expected.items():
        row = rows[student]
        assert float(row["score"]) == score, f"{student}: {row['score']} ({row['problems']})"
        assert reason in row["problems"], f"{student}: expected '{reason}' in '{row['problems']}'"
        assert row["student"] == (f"'{name}" if name.startswith("=") else name)


def test_normal_student_keeps_full_marks_and_has_no_problems(corpus):
    row = corpus["rows"]["normal"]
    assert (row["score"], row["max_score"], row["test_add"], row["test_square"], row["problems"]) == ("3", "3", "1", "2", "")


def test_broken_files_are_named_not_graded(corpus):
    rows = corpus["rows"]
    for student in ("corrupt", "emptyzip", "zerobytes", "essay"):
        assert rows[student]["assignment"] == "" and rows[student]["problems"]


def test_crash_keeps_the_points_earned_before_it(corpus):
    row = corpus["rows"]["crash"]
    assert (row["test_add"], row["test_square"]) == ("1", "0")


def test_zip_paths_are_never_extracted(corpus):
    folder = corpus["folder"]
    assert not (folder.parent / "escape").exists() and not (folder / "escape").exists()


def test_hostile_code_cannot_touch_files_outside_its_folder(corpus):
    if ABI < 1:
        pytest.skip("no Landlock on this kernel: only the working folder separates submissions")
    assert not os.path.exists(corpus["paths"]["marker"])
    after = {p.name: p.read_bytes() for p in corpus["folder"].iterdir() if p.is_file() and not p.is_symlink()}
    assert after == corpus["before"]
    text = printed(corpus, "writer")
    assert "ESCAPED" not in text and "inside: my own folder is fine" in text and text.count("blocked:") == 3


def test_hostile_code_cannot_read_other_submissions_hidden_tests_or_connect(corpus):
    if ABI < 1:
        pytest.skip("no Landlock on this kernel: only the working folder separates submissions")
    text = printed(corpus, "reader")
    assert "blocked: other submission PermissionError" in text
    assert "blocked: hidden tests PermissionError" in text
    assert "blocked: gradebook PermissionError" in text
    assert "blocked: instructor home PermissionError" in text
    assert LEAKED not in text and text.count("blocked: listing") == 3 and text.count("blocked: environ") == 2
    if ABI >= 4:
        assert "blocked: tcp PermissionError" in text and corpus["accepted"] is None


def test_hostile_code_cannot_kill_the_grader(corpus):
    if ABI < 6:
        pytest.skip("signal scoping needs Landlock ABI 6 (Linux 6.12)")
    text = printed(corpus, "killer")
    assert "blocked: kill" in text and "ESCAPED" not in text


def test_output_is_capped_in_notebook_and_feedback(corpus):
    autograded = corpus["course"] / "autograded" / "flood" / TINY / f"{TINY}.ipynb"
    assert autograded.stat().st_size < 3 * 2**20
    assert (corpus["out"] / "feedback" / "flood" / f"{TINY}.html").stat().st_size < 4 * 2**20


def test_summary_table_and_markdown(corpus):
    report = corpus["report"]
    table = {row["exercise"]: row for row in report.exercise_table()}
    assert table["test_add"]["points"] == 1 and table["test_square"]["points"] == 2
    graded = [s for s in report.submissions if s.assignment]
    assert table["test_square"]["n"] == len(graded)
    assert table["test_square"]["failed"] == sum(s.grades["test_square"] < 2 for s in graded)
    assert "rlimits: 1536 MB address space" in report.sandbox
    assert ABI < 1 or any(note.startswith("landlock") for note in report.sandbox)
    text = report.summary_path.read_text()
    assert "Kernel isolation:" in text and "| test_square | 2 |" in text and "kernel died" in text and "| normal |" not in text


def test_nbgrader_export_and_feedback_see_the_merged_grades(corpus):
    course = corpus["course"]
    target = course / "export.csv"
    base = [sys.executable, "-m", "nbgrader"]
    where = [f"--CourseDirectory.root={course}", f"--CourseDirectory.db_url=sqlite:///{course / 'gradebook.db'}"]
    env = {**os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")}
    subprocess.run([*base, "export", f"--to={target}", *where], cwd=course, check=True, capture_output=True, env=env)
    scores = {row["student_id"]: float(row["raw_score"]) for row in csv.DictReader(target.open())}
    for student, (score, _, _) in corpus["expected"].items():
        if corpus["rows"][student]["assignment"]:
            assert scores[student] == score, student
    subprocess.run([*base, "generate_feedback", TINY, "--student=crash", "--force", *where], cwd=course, check=True,
                   capture_output=True, env=env)
    assert "kernel died" in (course / "feedback" / "crash" / TINY / f"{TINY}.html").read_text()


def test_rerun_grades_only_the_new_submission(corpus, dask_scheduler):
    folder, solution = corpus["folder"], corpus["solution"]
    (folder / "latecomer.ipynb").write_text(json.dumps(student_version(solution, "square")))
    try:
        report = grading.autograde(folder, out=corpus["out"], course_dir=corpus["course"], source=corpus["solutions"],
                                   scheduler=dask_scheduler, limits=LIMITS, progress=False)
    finally:
        (folder / "latecomer.ipynb").unlink()
    assert report.graded_now == 1
    statuses = {s.student: s.status for s in report.submissions}
    assert statuses["latecomer"] == "graded" and statuses["normal"] == "unchanged"
    rows = {row["gradebook_id"]: row for row in csv.DictReader(report.csv_path.open(encoding="utf-8"))}
    assert rows["latecomer"]["score"] == "2"
    for student, row in corpus["rows"].items():
        assert (rows[student]["score"], rows[student]["problems"]) == (row["score"], row["problems"]), student


def test_untouched_and_full_keep_zero_and_full_marks_beside_every_case(corpus):
    rows = corpus["rows"]
    assert (rows["zz_victim"]["score"], rows["zz_victim%21"]["score"]) == ("3", "0")
    assert rows["zz_victim"]["problems"] == "" and rows["zz_victim%21"]["student"] == "zz_victim!"


def test_no_process_of_a_submission_outlives_it_nor_its_ports(corpus):
    pid, port = map(int, printed(corpus, "survivor").split("SURVIVOR", 1)[1].split()[:2])
    assert port == corpus["paths"]["survivor_port"]
    try:
        state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        state = "gone"
    assert state in ("gone", "Z"), f"process {pid} of the survivor submission is still {state}"
    with socket.socket() as again:
        again.bind(("127.0.0.1", port))  # the port it held is free


def test_kernels_never_write_to_the_graders_terminal(corpus):
    assert b"FAKE-TERMINAL-LINE" not in corpus["terminal"]
    assert "FAKE-TERMINAL-LINE" not in corpus["report"].summary()


def test_output_cap_holds_for_display_updates_and_errors(corpus):
    for student in ("displaybomb", "bigerror", "floodfail", "errorflood", "verbose"):
        autograded = corpus["course"] / "autograded" / student / TINY / f"{TINY}.ipynb"
        assert autograded.stat().st_size < 3 * 2**20, student
        assert (corpus["out"] / "feedback" / student / f"{TINY}.html").stat().st_size < 4 * 2**20, student
    row = corpus["rows"]["floodfail"]
    assert (row["test_add"], row["test_square"]) == ("1", "0")  # the flood did not hide the failing test
    row = corpus["rows"]["verbose"]
    assert (row["test_add"], row["test_square"]) == ("1", "2")  # nor did the note fail a passing one


def test_no_student_script_reaches_the_instructors_pages(corpus):
    notebook = json.loads((corpus["course"] / "autograded" / "scripted" / TINY / f"{TINY}.ipynb").read_text())
    rendered = [json.dumps(cell.get("outputs", [])) for cell in notebook["cells"]]  # what formgrader renders as HTML
    rendered += ["".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "markdown"]
    feedback = (corpus["out"] / "feedback" / "scripted" / f"{TINY}.html").read_text()
    for page in ("\n".join(rendered), feedback):
        assert "<script>document.title" not in page and "onerror=" not in page and "javascript:alert" not in page
        assert "application/javascript" not in page
    assert "My answer" in feedback and "$a<" in "\n".join(rendered)  # the answer is still there for the grader


def test_names_cannot_inject_formulas_or_terminal_lines(corpus):
    report = corpus["report"]
    text = corpus["report"].summary()
    assert "\x1b" not in text and "\r" not in text and "\n  student0 5/5" not in text
    markdown = report.summary_path.read_text()
    assert "\x1b" not in markdown
    row_lines = [line for line in markdown.splitlines() if line.startswith("| forger")]
    assert len(row_lines) == 1 and row_lines[0].count(" | ") == 3  # the member name broke no table row
    raw = report.csv_path.read_text(encoding="utf-8")
    assert "\n=HYPERLINK" not in raw and ",=HYPERLINK" not in raw and "'=HYPERLINK" in raw


def test_a_changed_course_package_regrades(corpus, tmp_path, monkeypatch):
    folder = tmp_path / "one"
    folder.mkdir()
    (folder / "solo.ipynb").write_text(json.dumps(student_version(corpus["solution"], "add")))
    run = dict(out=tmp_path / "out", course_dir=tmp_path / "course", source=corpus["solutions"], workers=0, limits=LIMITS,
               progress=False)
    assert grading.autograde(folder, **run).graded_now == 1
    assert grading.autograde(folder, **run).graded_now == 0
    monkeypatch.setattr(regrade_index, "course_fingerprint", lambda: "a fixed check")
    assert grading.autograde(folder, **run).graded_now == 1


def test_a_grader_failure_before_the_notebook_ran_is_tried_once_more(corpus, tmp_path, monkeypatch):
    from course_admin.grading import worker

    folder = tmp_path / "one"
    folder.mkdir()
    (folder / "solo.ipynb").write_text(json.dumps(student_version(corpus["solution"], "add", "square")))
    real, calls = worker.run_converter, []

    def flaky(converter, *args, **kwargs):
        calls.append(converter.__name__)
        if converter.__name__ == "Autograde" and calls.count("Autograde") == 1:
            return {"success": False, "log": "[AutogradeApp | ERROR] Kernel didn't respond in 60 seconds", "error": ""}
        return real(converter, *args, **kwargs)

    monkeypatch.setattr(worker, "run_converter", flaky)
    report = grading.autograde(folder, out=tmp_path / "out", course_dir=tmp_path / "course", source=corpus["solutions"],
                               workers=0, limits=LIMITS, progress=False)
    (sub,) = report.submissions
    assert calls.count("Autograde") == 2 and (sub.score, sub.problems) == (3, [])
    assert report.retried == ["solo: [AutogradeApp | ERROR] Kernel didn't respond in 60 seconds"]
    assert "second attempt" in report.summary_path.read_text()
