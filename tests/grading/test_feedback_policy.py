"""Feedback that keeps hidden cases hidden (``feedback_policy``): a hidden value is planted and
the feedback HTML searched for it under each policy."""

import copy
import html
import json
import re

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output
from traitlets.config import Config

from course_admin.grading.feedback_policy import mask_values, policy_config
from course_admin.grading.sanitize import feedback_config
from course_admin.grading.synthetic import TINY, student_version, synthetic_assignment

WRONG_ADD = "def add(a, b):\n    return 3"  # right on the check cell's case only: the hidden verdict names add(-1, 1)
HIDDEN_CASE = "add(-1, 1)"
HIDDEN_VERDICT = "add(-1, 1) gave 3, expected 0"


def render(notebook, policy: str) -> str:
    """``notebook``'s feedback page as ``GenerateFeedback`` makes it under ``policy`` (its
    template and preprocessors; the gradebook's ``GetGrades`` left out, its resources by hand)."""
    from nbgrader.converters import GenerateFeedback
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.preprocessors import GetGrades

    config = policy_config(feedback_config(Config()), policy)
    converter = GenerateFeedback(coursedir=CourseDirectory(config=config), config=config)
    exporter = converter.exporter_class(parent=converter, config=converter.config)
    for preprocessor in converter.preprocessors:
        if preprocessor is not GetGrades:
            exporter.register_preprocessor(preprocessor)
    notebook = copy.deepcopy(nbformat.from_dict(notebook))
    for cell in notebook.cells:  # what GetGrades adds from the gradebook
        info = cell.metadata.get("nbgrader", {})
        if info.get("grade"):
            info["score"], info["points"] = 0.0, info.get("points", 1)
        if info.get("solution"):
            info["comment"] = None
    resources = {"nbgrader": {"notebook": TINY, "score": 1.0, "max_score": 3.0, "late_penalty": 0}}
    html, _ = exporter.from_notebook_node(notebook, resources=resources)
    return html


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The synthetic assignment judged from records, graded with no term file (the default policy)."""
    from course_admin import grading

    base = tmp_path_factory.mktemp("feedback")
    solution = json.loads(synthetic_assignment(base / "source", records=True).read_text())
    folder = base / "subs"
    folder.mkdir()
    (folder / "full.ipynb").write_text(json.dumps(student_version(solution, "add", "square")))
    wrong = student_version(solution, "add", "square")
    next(c for c in wrong["cells"] if c["metadata"]["nbgrader"]["grade_id"] == "add")["source"] = WRONG_ADD
    (folder / "wrong.ipynb").write_text(json.dumps(wrong))
    report = grading.autograde(folder, out=base / "out", course_dir=base / "course", source=base / "source", workers=0,
                               progress=False)
    autograded = json.loads((base / "course" / "autograded" / "wrong" / TINY / f"{TINY}.ipynb").read_text())
    return report, base / "out", autograded


def test_default_feedback_shows_pass_fail_and_no_hidden_case(graded):
    report, out, autograded = graded
    page = (out / "feedback" / "wrong" / f"{TINY}.html").read_text()
    assert "add: not yet" in page and "did not pass the hidden tests" in page
    assert HIDDEN_CASE not in page and "expected 0" not in page and "gave 3" not in page
    assert "square: all checks passed" in page  # a pass still says so
    assert "add: all checks passed" in (out / "feedback" / "full" / f"{TINY}.html").read_text()
    # the instructor's autograded notebook (formgrader) keeps the full verdict
    assert HIDDEN_VERDICT in json.dumps(autograded)


@pytest.mark.parametrize("policy", ["pass_fail", "hint", "full"])
def test_each_policy_on_the_graded_notebook(graded, policy):
    _, _, autograded = graded
    page = render(autograded, policy)
    assert (HIDDEN_VERDICT in page) is (policy == "full")  # the planted case shows only when the instructor says so
    assert (HIDDEN_CASE in page) is (policy == "full")
    if policy == "hint":
        assert "add: not yet (hidden tests). add… gave …, expected …." in page  # the kind of mistake, no values


def _asserts_notebook(planted: int) -> dict:
    """A test cell that judges in the kernel (nbgrader's usual way), its hidden assert holding
    ``planted``, failed with the traceback nbgrader keeps (which quotes the source line)."""
    source = f"assert add(1, 2) == 3\n### BEGIN HIDDEN TESTS\nassert add({planted}, 1) == {planted + 1}\n### END HIDDEN TESTS"
    meta = {"nbgrader": {"grade": True, "solution": False, "locked": True, "grade_id": "test_add", "points": 1,
                         "schema_version": 3, "task": False}}
    cell = new_code_cell(source, metadata=meta)
    cell.outputs = [new_output("error", ename="AssertionError", evalue="",
                               traceback=[f"----> 3 assert add({planted}, 1) == {planted + 1}", "AssertionError: "])]
    return new_notebook(cells=[cell], metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                                "language": "python"}})


@pytest.mark.parametrize("policy", ["pass_fail", "hint", "full"])
def test_hidden_asserts_and_their_traceback_stay_hidden(policy):
    page = render(_asserts_notebook(7919), policy)
    text = html.unescape(re.sub(r"<[^>]+>", "", page))  # the page's text, as the student reads it
    assert ("7919" in page) is ("7919" in text) is (policy == "full")
    assert "assert add(1, 2) == 3" in text  # the public test stays
    if policy != "full":
        assert "their cases are not shown" in text and "add: not yet" in text


def test_mask_values_leaves_words_and_masks_values():
    assert mask_values("add(-1, 1) gave -2, expected 0.") == "add… gave …, expected …."
    assert mask_values("the slots hold steps [3, [4, 5]], expected {'a': 1}. Use 'self.memory'") == (
        "the slots hold steps …, expected …. Use …")
    assert mask_values("expected a dict of tensors") == "expected a dict of tensors"


def test_a_timeout_in_a_hidden_test_is_still_said():
    notebook = _asserts_notebook(7919)
    notebook.cells[0].outputs = [new_output("error", ename="CellTimeoutError", evalue="ran over the 120 s cell time limit",
                                            traceback=["assert add(7919, 1)", "CellTimeoutError"])]
    text = html.unescape(re.sub(r"<[^>]+>", "", render(notebook, "pass_fail")))
    assert "ran over the 120 s cell time limit" in text and "7919" not in text


def test_a_note_on_course_code_the_answer_reached_for_is_still_said():
    from course_admin.grading.feedback_policy import feedback_verdict

    failure = ("add: not yet. add(-1, 1) gave 3, expected 0. "
               "Note: course_utils.lunar.rollouts is not available to this exercise's answer when it is graded.")
    outputs = [new_output("error", ename="NotYet", evalue=failure, traceback=[failure])]
    for policy in ("pass_fail", "hint"):
        [shown] = feedback_verdict("test_add", outputs, policy)
        assert "course_utils.lunar.rollouts is not available" in shown.evalue and "expected 0" not in shown.evalue


def test_an_answer_that_wraps_course_code_is_told_which_module():
    from course_admin.grading.feedback_policy import feedback_verdict

    failure = ("replay_actor_loss: not yet. checking your answer stopped at ModuleNotFoundError: course_utils.colour.agent"
               " is not available to this exercise's answer when it is graded (only the code the exercise gives you is).")
    outputs = [new_output("error", ename="NotYet", evalue=failure, traceback=[failure])]
    [shown] = feedback_verdict("test_replay_actor_loss", outputs, "pass_fail")
    assert "Note: course_utils.colour.agent is not available to this exercise's answer when it is graded." in shown.evalue


def test_the_feedback_page_gives_every_image_alternative_text_without_nbconvert_s_soup_pass():
    from nbconvert.exporters import HTMLExporter

    from course_admin.grading.feedback_page import NO_ALT, FeedbackExporter

    png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
    nb = new_notebook(cells=[
        nbformat.v4.new_markdown_cell('Mine: <img src="a.png" alt="my plot"> and the text &lt;img src=x&gt;'),
        new_code_cell("plot()", outputs=[new_output("display_data", data={"image/png": png, "text/plain": "<Figure>"})]),
        new_code_cell("print('<img src=y>')", outputs=[new_output("stream", name="stdout", text="<img src=y>\n")]),
    ])
    config = Config()
    feedback_config(config)
    ours, _ = FeedbackExporter(config=config).from_notebook_node(copy.deepcopy(nb))
    theirs, _ = HTMLExporter(config=config).from_notebook_node(copy.deepcopy(nb))
    tags = re.findall(r"<img\b[^>]*>", ours)
    assert len(tags) == 2 and all(len(re.findall(r"\balt=", t)) == 1 for t in tags)
    assert f'alt="{NO_ALT}"' in tags[1] and 'alt="my plot"' in tags[0]
    assert "&lt;img src=y&gt;" in ours  # a student's text stays text
    assert len(re.findall(r"<img\b", theirs)) == 2 and theirs.count(NO_ALT) == ours.count(NO_ALT) == 1
