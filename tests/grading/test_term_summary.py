"""The summary's term view: exercises grouped by tutorial in the notebook's order, written answers
not graded yet shown as awaiting manual grading (not as failures), the class with lateness, and
the missing students."""

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

from course_admin.grading.autograder import Report
from course_admin.grading.intake import Submission
from course_admin.grading.late import Lateness
from course_admin.grading.summary_html import summary_html

ORDER = {"02_colour_replay": ["test_replay_memory", "think_forgetting", "test_replay_actor_loss"]}


def _sub(name, grades, awaiting=(), final=None):
    sub = Submission(name, f"{name}.ipynb", "02_colour_replay", name=name)
    sub.grades = dict(grades)
    sub.grade_max = {"test_replay_actor_loss": 5.0, "test_replay_memory": 3.0, "think_forgetting": 1.0}
    sub.score, sub.max_score = sum(grades.values()), 9.0
    sub.awaiting = list(awaiting)
    sub.lateness = Lateness(final=sub.score if final is None else final, penalty_percent=0 if final is None else 10)
    return sub


def _report(tmp_path):
    subs = [_sub("ada", {"test_replay_actor_loss": 5, "test_replay_memory": 3, "think_forgetting": 0}, ["think_forgetting"]),
            _sub("bob", {"test_replay_actor_loss": 0, "test_replay_memory": 3, "think_forgetting": 0}, ["think_forgetting"],
                 final=2.7)]
    missing = Submission("cy", "", None, name="cy", problems=["no submission"], max_score=9.0,
                         missing_assignment="02_colour_replay")
    missing.display_name, missing.lateness = "Cy Young", Lateness(final=0.0)
    return Report(subs, Path(tmp_path / "grades.csv"), tmp_path, order=ORDER, missing=[missing])


def test_written_answers_not_graded_yet_are_awaiting_not_short(tmp_path):
    report = _report(tmp_path)
    table = {row["exercise"]: row for row in report.exercise_table()}
    assert [row["exercise"] for row in report.exercise_table()] == ORDER["02_colour_replay"]  # the notebook's order
    written = table["think_forgetting"]
    assert (written["n"], written["awaiting"], written["failed"]) == (0, 2, 0)
    assert table["test_replay_actor_loss"]["failed"] == 1 and table["test_replay_actor_loss"]["awaiting"] == 0
    assert "| think_forgetting | 1 | - | - | - | - | 2 |" in report.markdown()
    page = summary_html(report)
    card = page.split("<h3>think_forgetting</h3>")[1].split("</div></div>")[0]
    assert "2 awaiting manual grading" in card and "short of full marks" not in card and "mean 0.00" not in card
    assert page.index("<h3>test_replay_memory</h3>") < page.index("<h3>test_replay_actor_loss</h3>")


def test_the_class_view_shows_final_scores_lateness_and_who_is_missing(tmp_path):
    page = summary_html(_report(tmp_path))
    view = page.split("<h2>The class</h2>")[1]
    assert "<td>bob</td>" in view and "penalty 10%" in view and "<td>2.7/9<br>raw 3" in view
    assert "cy (Cy Young): 02_colour_replay" in view.split("<h3>No submission</h3>")[1]


def test_the_class_view_is_one_row_per_student_and_a_column_per_tutorial_in_the_course_order(tmp_path):
    """Tutorials as the course numbers them (``Report.order``, the released notebooks), not by
    name; every student once, each tutorial's final score, lateness, written answers awaiting
    manual grading, flags, "no submission" and the total in their row."""
    report = _report(tmp_path)
    order = {"10_later": ["test_later"], **ORDER}  # a course order that is not the alphabetical one
    report.order = order
    late = Submission("ada", "ada_later.ipynb", "10_later", name="ada", flags=["patches a module"])
    late.score, late.max_score, late.grades, late.grade_max = 1.0, 2.0, {"test_later": 1.0}, {"test_later": 2.0}
    late.lateness = Lateness(final=0.5, penalty_percent=50, late_by=timedelta(days=2, hours=1),
                             due=datetime(2026, 10, 20, tzinfo=UTC))
    report.submissions.append(late)
    page = summary_html(report)
    view = page.split("<h2>The class</h2>")[1].split("<h3>No submission</h3>")[0]
    head = re.findall(r"<th>([^<]*)</th>", view)
    assert head == ["student", "name", "10_later", "02_colour_replay", "total", "matched by"]
    rows = {re.findall(r"<td>([^<]*)</td>", row)[0]: re.findall(r"<td>(.*?)</td>", row)
            for row in re.findall(r"<tr><td>.*?</tr>", view)}
    assert sorted(rows) == ["ada", "bob", "cy"]  # one row each
    assert rows["ada"][2] == "0.5/2<br>raw 1<br>late 2 d 1 h<br>penalty 50%<br>flagged (1)"
    assert rows["ada"][3] == "8/9<br>1 awaiting manual grading" and rows["ada"][4] == "8.5/11"
    assert rows["bob"][2] == "" and rows["bob"][4] == "2.7/9"
    assert rows["cy"][3] == "0/9<br>no submission" and rows["cy"][4] == "0/9"
    exercises = [re.search(r"<h3>(\w+)</h3>", card).group(1) for card in page.split('<div class="card">')[1:]]
    assert exercises == ["test_later", *ORDER["02_colour_replay"]]  # tutorials in the course's order too


def test_a_written_answer_is_awaiting_manual_grading_end_to_end(tmp_path):
    """The synthetic assignment with a written answer, graded by ``course autograde``: the answer
    formgrader has not graded yet is counted as awaiting manual grading, in the exercise table,
    on its card and in each student's cell of the class view, never as short of full marks."""
    import json

    from course_admin import grading
    from course_admin.grading.synthetic import student_version, synthetic_assignment

    source = tmp_path / "source"
    path = synthetic_assignment(source)
    solution = json.loads(path.read_text())
    info = {"grade": True, "solution": True, "locked": False, "grade_id": "think_why", "points": 2, "schema_version": 3,
            "task": False}
    solution["cells"].append({"cell_type": "markdown", "metadata": {"nbgrader": info}, "id": "think-why",
                              "source": "Why does `square` need no test of negative numbers?\n\n"
                                        "=== BEGIN MARK SCHEME ===\nIt squares.\n=== END MARK SCHEME ==="})
    path.write_text(json.dumps(solution))
    folder = tmp_path / "subs"
    folder.mkdir()
    for name, answered in (("ada", ("add", "square")), ("bob", ("add",))):
        notebook = student_version(solution, *answered)
        notebook["cells"][-1]["source"] = f"{name}'s written answer."
        (folder / f"{name}.ipynb").write_text(json.dumps(notebook))
    report = grading.autograde(folder, out=tmp_path / "out", course_dir=tmp_path / "course", source=source, workers=0,
                               progress=False)
    table = {row["exercise"]: row for row in report.exercise_table()}
    assert list(table) == ["test_add", "test_square", "think_why"]  # the notebook's order
    assert (table["think_why"]["awaiting"], table["think_why"]["n"], table["think_why"]["failed"]) == (2, 0, 0)
    page = (tmp_path / "out" / "summary.html").read_text()
    card = page.split("<h3>think_why</h3>")[1].split("</div></div>")[0]
    assert "2 awaiting manual grading" in card and "short of full marks" not in card
    view = page.split("<h2>The class</h2>")[1].split("<h3>No submission</h3>")[0]
    assert "<td>3/5<br>1 awaiting manual grading</td>" in view and "<td>1/5<br>1 awaiting manual grading</td>" in view


def test_two_notebooks_of_one_student_for_one_tutorial_are_both_shown(tmp_path):
    """A plain folder's student with two notebooks for a tutorial has both graded (no upload order
    to trust): the class view shows both, by file, and leaves the total to the instructor."""
    report = _report(tmp_path)
    again = _sub("bob", {"test_replay_actor_loss": 5, "test_replay_memory": 3, "think_forgetting": 0})
    again.student, again.source = "bob~2", "bob/second.ipynb"
    report.submissions.append(again)
    view = summary_html(report).split("<h2>The class</h2>")[1].split("<h3>No submission</h3>")[0]
    bob = next(row for row in view.split("<tr>") if row.startswith("<td>bob</td>"))
    assert "bob.ipynb:<br>2.7/9" in bob and "<hr>bob/second.ipynb:<br>8/9" in bob
    assert "several notebooks for one tutorial" in bob
