"""The similarity report (``similarity``): a copy with renamed variables and reordered statements
is found, an honest answer to the same exercise is not, and the given code is not evidence."""

import json

import pytest

from course_admin.grading.similarity import answer_cells, class_pairs, similar_pairs, write_report

STUB = '''class ReplayMemory:
    """A wrap-around memory of the last `capacity` steps."""

    def __init__(self, capacity):
        # YOUR CODE HERE
        raise NotImplementedError()

    def add(self, step):
        # YOUR CODE HERE
        raise NotImplementedError()

    def sample(self, n, rng):
        # YOUR CODE HERE
        raise NotImplementedError()
'''

ORIGINAL = '''class ReplayMemory:
    """A wrap-around memory of the last `capacity` steps."""

    def __init__(self, capacity):
        self.capacity = capacity
        self.slots = [None] * capacity
        self.position = 0
        self.count = 0

    def add(self, step):
        self.slots[self.position] = step
        self.position = (self.position + 1) % self.capacity
        self.count = min(self.count + 1, self.capacity)

    def sample(self, n, rng):
        chosen = rng.integers(0, self.count, size=n)
        return [self.slots[i] for i in chosen]
'''

COPIED = '''class ReplayMemory:
    """A wrap-around memory of the last `capacity` steps."""

    def __init__(self, capacity):
        # my own buffer
        self.n_stored = 0
        self.cap = capacity
        self.head = 0
        self.buf = [None] * capacity

    def sample(self, n, rng):
        picks = rng.integers(0, self.n_stored, size=n)
        return [self.buf[j] for j in picks]

    def add(self, step):
        self.buf[self.head] = step
        self.n_stored = min(self.n_stored + 1, self.cap)
        self.head = (self.head + 1) % self.cap
'''

HONEST = '''class ReplayMemory:
    """A wrap-around memory of the last `capacity` steps."""

    def __init__(self, capacity):
        self.capacity = capacity
        self.data = []
        self.next_index = 0

    def add(self, step):
        if len(self.data) < self.capacity:
            self.data.append(step)
        else:
            self.data[self.next_index] = step
        self.next_index = (self.next_index + 1) % self.capacity

    def sample(self, n, rng):
        idx = rng.integers(len(self.data), size=n)
        return [self.data[i] for i in idx]
'''
"""Written alone: the same ring with the same modulo step and list comprehension, but its own way."""


def test_a_renamed_and_reordered_copy_is_found_and_an_honest_answer_is_not():
    answers = {"alice": {"replay_memory": ORIGINAL}, "bob": {"replay_memory": COPIED},
               "carol": {"replay_memory": HONEST}, "dave": {"replay_memory": STUB}}
    pairs = similar_pairs(answers, {"replay_memory": STUB}, "02_colour_replay", threshold=0.65)
    assert [(p.student_a, p.student_b) for p in pairs] == [("alice", "bob")]
    assert pairs[0].share_a >= 0.65 and pairs[0].share_b >= 0.65
    everything = similar_pairs(answers, {"replay_memory": STUB}, "02_colour_replay", threshold=0.0)
    scores = {(p.student_a, p.student_b): p.score for p in everything}
    assert scores[("alice", "carol")] > 0.3  # the honest answer does share code: the threshold is what tells them apart
    assert scores.get(("alice", "carol"), 0) < 0.65 and scores.get(("bob", "carol"), 0) < 0.65  # honest: below


def test_the_given_code_is_boilerplate_not_evidence():
    given = STUB.replace("        # YOUR CODE HERE\n        raise NotImplementedError()\n\n    def sample",
                         "        self.slots.append(step)\n        self.slots = self.slots[-self.capacity:]\n\n    def sample")
    one = given.replace("    def __init__(self, capacity):\n        # YOUR CODE HERE\n        raise NotImplementedError()",
                        "    def __init__(self, capacity):\n        self.capacity = capacity\n        self.slots = []")
    other = given.replace("    def __init__(self, capacity):\n        # YOUR CODE HERE\n        raise NotImplementedError()",
                          "    def __init__(self, size):\n        self.slots, self.capacity = [], size")
    answers = {"erin": {"replay_memory": one}, "frank": {"replay_memory": other}}
    with_given = similar_pairs(answers, {"replay_memory": given}, "t", threshold=0.0)
    without = similar_pairs(answers, {"replay_memory": STUB}, "t", threshold=0.0)
    assert max((p.score for p in with_given), default=0) < max((p.score for p in without), default=0)


def test_class_report_reads_answer_cells_and_writes_csv_and_html(tmp_path):
    from course_admin.grading.intake import Submission

    def notebook(code):
        meta = {"nbgrader": {"solution": True, "grade": False, "grade_id": "replay_memory", "locked": False}}
        return {"cells": [{"cell_type": "markdown", "metadata": {}, "source": "Exercise 2"},
                          {"cell_type": "code", "metadata": meta, "source": code, "outputs": []}]}

    subs = [Submission(name, "x", "02_colour_replay", json.dumps(notebook(code)).encode(), name=name)
            for name, code in (("alice", ORIGINAL), ("<b>bob</b>", COPIED), ("carol", HONEST))]
    assert answer_cells(notebook(ORIGINAL)) == {"replay_memory": ORIGINAL}
    pairs = class_pairs(subs, {"02_colour_replay": notebook(STUB)}, threshold=0.65)
    table, page = write_report(pairs, tmp_path, 0.65)
    rows = table.read_text().splitlines()
    assert rows[0].startswith("assignment,exercise,student_a") and len(rows) == 2
    text = page.read_text()
    assert "&lt;b&gt;bob&lt;/b&gt;" in text and "<b>bob</b>" not in text  # student names escaped
    assert "<mark>" in text and "<script" not in text


@pytest.mark.parametrize("code", ["", "def broken(:\n  pass", "\x00\x01"])
def test_odd_answers_are_skipped_not_fatal(code):
    answers = {"a": {"x": code}, "b": {"x": ORIGINAL}}
    assert similar_pairs(answers, {"x": ""}, "t", threshold=0.0) == []


def test_autograde_writes_the_report_next_to_the_grades(canvas_graded):
    report, _, out = canvas_graded
    assert (out / "similarity.csv").read_text().startswith("assignment,exercise,student_a")
    assert "Similar answers" in (out / "similarity.html").read_text() and "Similar answers" in (out / "summary.html").read_text()
    assert report.similar == []  # the fixture class's answers are one-liners: too short to be evidence


def test_the_cheap_share_is_copydetect_s_share():
    from copydetect import compare_files

    from course_admin.grading.similarity import _fingerprint, share_of

    given = list(_fingerprint(STUB).hashes)
    prints = [_fingerprint(code, given) for code in (ORIGINAL, COPIED, HONEST)]
    for a, b in ((0, 1), (0, 2), (1, 2)):
        _, (share_a, share_b), _ = compare_files(prints[a], prints[b])
        shared = prints[a].hashes & prints[b].hashes
        assert share_of(prints[a], shared) == pytest.approx(share_a) and share_of(prints[b], shared) == pytest.approx(share_b)


RING_MODULE = '''"""A ring of the last ``capacity`` steps."""


''' + ORIGINAL.replace("class ReplayMemory:", "class Ring:") + '''

def unrelated(x):
    return {"x": x, "twice": 2 * x, "square": x * x, "text": str(x).upper()}
'''
"""A course module holding the answer to the memory exercise (the shape of what the student
wheel must not ship, here to show that a readable copy of it is found)."""


def test_a_renamed_copy_of_course_code_is_paired_with_its_module_and_an_honest_answer_is_not():
    from course_admin.grading.similarity import COURSE, _filtered, course_hashes, course_pairs

    modules = course_hashes({"course_utils/replay/ring.py": (RING_MODULE, _filtered(RING_MODULE)),
                             "course_utils/other.py": (STUB, _filtered(STUB))})
    answers = {"bob": {"replay_memory": COPIED}, "carol": {"replay_memory": HONEST}, "dave": {"replay_memory": STUB}}
    pairs = course_pairs(answers, {"replay_memory": STUB}, "02_colour_replay", 0.65, modules)
    assert [(p.student_a, p.student_b) for p in pairs] == [("bob", f"{COURSE}: course_utils/replay/ring.py")]
    assert pairs[0].share_a >= 0.65
    assert pairs[0].code_b.startswith("class Ring:") and "unrelated" not in pairs[0].code_b  # the closest definition
    assert [p.student_a for p in course_pairs(answers, {"replay_memory": STUB}, "t", 0.0, modules)
            if p.score >= 0.65] == ["bob"]


def test_the_course_package_is_read_through_a_cache_of_filtered_text(tmp_path, monkeypatch):
    from course_admin.grading import similarity

    monkeypatch.setattr(similarity, "COURSE_CACHE", tmp_path / "cache" / "course.json")
    first = similarity.course_modules()
    assert "course_utils/checking.py" in first and all(f for _, f in first.values())
    assert "course_admin/lunar/aac.py" in first and "course_admin/replay/per.py" in first  # the course's own agents
    assert not [name for name in first if name.endswith(("/solutions.py", "/hidden_cases.py"))]
    assert not [name for name in first if name.startswith("course_admin/grading/")]
    [cache] = similarity.COURSE_CACHE.parent.glob("course-*.json")
    assert json.loads(cache.read_text())["course_utils/checking.py"][1] == first["course_utils/checking.py"][1]

    def no_filtering(code):
        raise AssertionError("an unchanged module was filtered again")

    monkeypatch.setattr(similarity, "_filtered", no_filtering)
    assert similarity.course_modules() == first
    cache.write_text("{not json")  # a damaged cache is rebuilt, not fatal
    monkeypatch.undo()
    monkeypatch.setattr(similarity, "COURSE_CACHE", tmp_path / "cache" / "course.json")
    assert similarity.course_modules() == first


def test_the_model_answers_share_too_little_with_the_course_package_to_be_listed():
    from course_admin.grading.similarity import course_hashes, course_modules, course_pairs
    from course_utils.paths import NOTEBOOKS, SOLUTIONS

    modules = course_hashes(course_modules())
    for solution in sorted(SOLUTIONS.glob("*.ipynb")):
        answers = {"model": answer_cells(json.loads(solution.read_text()))}
        released = answer_cells(json.loads((NOTEBOOKS / solution.name).read_text()))
        assert answers["model"], solution.name
        assert course_pairs(answers, released, solution.stem, 0.65, modules) == [], solution.name
