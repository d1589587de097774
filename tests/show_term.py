"""Print what an instructor gets at the end of a term from the fixture classes (``lms_class``):
the rows of grades.csv, the Canvas and Moodle imports, the similarity pairs with their scores, and
one student's feedback under each policy. For closing notes and reviews, not a test:

    env -u PYTHONDONTWRITEBYTECODE .venv/bin/python tests/show_term.py [FOLDER]
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent / "grading"))

from lms_class import canvas_class, canvas_term, moodle_class, moodle_term  # noqa: E402
from test_feedback_policy import WRONG_ADD, render  # noqa: E402
from test_similarity import COPIED, HONEST, ORIGINAL, STUB  # noqa: E402

from course_admin import grading  # noqa: E402
from course_admin.grading.similarity import similar_pairs  # noqa: E402
from course_admin.grading.synthetic import TINY, student_version, synthetic_assignment  # noqa: E402


def _show(title: str, path: Path) -> None:
    print(f"\n## {title}: {path.name}\n")
    print(path.read_text(encoding="utf-8").rstrip())


def main(base: Path) -> None:
    source = base / "source"
    solution = json.loads(synthetic_assignment(source).read_text())
    for name, make, term in (("canvas", canvas_class, lambda b: canvas_term(b)), ("moodle", moodle_class, moodle_term)):
        roster = make(base / name / "subs", solution)
        made = term(base / name)
        term_file, times = made if isinstance(made, tuple) else (made, None)
        report = grading.autograde(base / name / "subs", out=base / name / "out", course_dir=base / name / "course",
                                   source=source, workers=0, progress=False, roster=roster, term=term_file,
                                   times=[str(times)] if times else None)
        _show(f"{name}: grades", report.csv_path)
        for export in sorted((base / name / "out").glob("*import*")) + sorted((base / name / "out").glob("*worksheet*")):
            _show(f"{name}: import", export)
    answers = {"alice": {"replay_memory": ORIGINAL}, "bob": {"replay_memory": COPIED},
               "carol": {"replay_memory": HONEST}, "dave": {"replay_memory": STUB}}
    print("\n## similarity pairs of tests/grading/test_similarity.py's class (every pair; the report's threshold is 0.65)\n")
    for pair in similar_pairs(answers, {"replay_memory": STUB}, "02_colour_replay", threshold=0.0):
        print(f"{pair.student_a} - {pair.student_b}: score {pair.score:.2f} (shares {pair.share_a:.2f}, {pair.share_b:.2f})")
    wrong = student_version(json.loads(synthetic_assignment(base / "records", records=True).read_text()), "add", "square")
    next(c for c in wrong["cells"] if c["metadata"]["nbgrader"]["grade_id"] == "add")["source"] = WRONG_ADD
    (base / "fb" / "subs").mkdir(parents=True)
    (base / "fb" / "subs" / "wrong.ipynb").write_text(json.dumps(wrong))
    grading.autograde(base / "fb" / "subs", out=base / "fb" / "out", course_dir=base / "fb" / "course",
                      source=base / "records", workers=0, progress=False)
    autograded = json.loads((base / "fb" / "course" / "autograded" / "wrong" / TINY / f"{TINY}.ipynb").read_text())
    for policy in ("pass_fail", "hint", "full"):
        page = render(autograded, policy)
        lines = [line.strip() for line in page.splitlines() if "not yet" in line or "all checks passed" in line]
        print(f"\n## feedback, policy {policy}\n")
        print("\n".join(dict.fromkeys(lines)))


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="term-")))
