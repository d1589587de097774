"""Print every concept check of the course as a Markdown table: where its right option stands and
how long it is against the longest wrong one, and each tutorial's numeric question with its answer.
``test_questions.py`` enforces the rules (positions spread, the right option the longest in at most a
third); this shows the figures. For closing notes and reviews, not a test:

    .venv/bin/python tests/show_questions.py
"""

from __future__ import annotations

import importlib

from course_admin.exercises import TUTORIALS
from course_utils.questions import ConceptCheck, NumericQuestion


def rows() -> list[str]:
    """The table's lines, then one line with how many checks have the longest right option."""
    lines = ["| tutorial | question | right | right's length / longest wrong (characters) |", "|---|---|---|---|"]
    checks = longest = 0
    for tutorial in TUTORIALS:
        module = importlib.import_module(f"course_utils.{tutorial}.questions")
        seen: set[int] = set()
        for name, value in vars(module).items():
            if id(value) in seen:
                continue
            seen.add(id(value))
            if isinstance(value, ConceptCheck):
                right = next(i for i, option in enumerate(value.options) if option.correct)
                lengths = [len(option.text) for option in value.options]
                wrong = max(n for i, n in enumerate(lengths) if i != right)
                checks += 1
                longest += lengths[right] >= wrong
                lines.append(f"| {tutorial} | `{name}` | {'abcd'[right]} of {len(lengths)} | {lengths[right]} / {wrong} |")
            elif isinstance(value, NumericQuestion):
                lines.append(f"| {tutorial} | `{name}` (typed) | {value.answer:g} +- {value.tolerance:g} | "
                             f"{len(value.mistakes)} named mistakes |")
    lines.append(f"\nThe right option is the longest (or tied) in {longest} of {checks} concept checks.")
    return lines


if __name__ == "__main__":
    print("\n".join(rows()))
