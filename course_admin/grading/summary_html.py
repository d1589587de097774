"""``summary.html``: the autograding summary as a page an instructor would rather look at.

One histogram of scores per exercise (inline SVG, no script, no file beside it), grouped by
tutorial in the course's order and each tutorial's in its notebook's order, with the written
answers formgrader has not graded yet counted apart ("awaiting manual grading"); the class, one
row per student and one column per tutorial (final score, lateness, penalty, flags), and who
handed in nothing; the submissions flagged for review (``flags``); the similar answers; and
every problem found. Every text that comes from a student
(ids, file names, messages) is HTML-escaped, with control and bidirectional characters shown
as escapes (``escaping.plain_text``), and the page forbids scripts and remote content
with its own Content-Security-Policy.
"""

from __future__ import annotations

import html
from collections import Counter
from dataclasses import dataclass, field

from course_admin.grading.escaping import plain_text

GRADED_HERE = ("Graded in the coordinating process (the Dask cluster had no workers left, or lost its scheduler; "
               "the same grading, one submission at a time)")

BAR_W, BAR_GAP, PLOT_H = 34, 8, 90


def histogram_svg(scores: list[float], points: float) -> str:
    """Bars of how many submissions got each score (every score from 0 to ``points`` that
    occurs, and 0 and full marks always), with counts above and scores below."""
    counts = Counter(scores)
    values = sorted(set(counts) | {0.0, float(points)})
    top = max(counts.values(), default=1)
    width = len(values) * (BAR_W + BAR_GAP) + BAR_GAP
    parts = [f'<svg role="img" width="{width}" height="{PLOT_H + 40}" aria-label="histogram of scores">']
    for i, value in enumerate(values):
        n = counts.get(value, 0)
        h = round(PLOT_H * n / top)
        x, y = BAR_GAP + i * (BAR_W + BAR_GAP), 15 + PLOT_H - h
        colour = "#1f8f3a" if value == points else ("#c0392b" if value == 0 else "#e0a800")
        parts.append(f'<rect x="{x}" y="{y}" width="{BAR_W}" height="{h}" fill="{colour}"><title>{n} at {value:g}</title></rect>')
        parts.append(f'<text x="{x + BAR_W / 2}" y="{y - 3}" text-anchor="middle" font-size="11">{n}</text>')
        parts.append(f'<text x="{x + BAR_W / 2}" y="{PLOT_H + 30}" text-anchor="middle" font-size="11">{value:g}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _table(header: list[str], rows: list[list], markup: bool = False) -> str:
    """An HTML table whose cells are escaped (``plain_text``, then HTML), or, with ``markup``,
    are HTML already made of escaped text."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    shown = (lambda cell: cell) if markup else (lambda cell: html.escape(plain_text(str(cell))))
    body = "".join("<tr>" + "".join(f"<td>{shown(cell)}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


STYLE = """body{font-family:system-ui,sans-serif;margin:2em;max-width:70em;color:#222}
.grid{display:flex;flex-wrap:wrap;gap:1.5em}.card{border:1px solid #ddd;border-radius:6px;padding:.8em}
.card h3{margin:.2em 0;font-size:1em}table{border-collapse:collapse;margin:.5em 0}
td,th{border:1px solid #ddd;padding:.3em .6em;text-align:left;vertical-align:top}th{background:#f4f4f4}"""


def summary_html(report) -> str:
    """The page for ``report`` (a ``grading.autograder.Report``)."""
    graded = [s for s in report.submissions if s.assignment is not None]
    groups: dict[str, list[str]] = {}
    for row in report.exercise_table():  # tutorials in order, each exercise in its notebook's order
        scores = [s.grades[row["exercise"]] for s in graded if row["exercise"] in s.grades and row["exercise"] not in s.awaiting]
        waiting = f" · {row['awaiting']} awaiting manual grading" if row["awaiting"] else ""
        marks = (f"mean {row['mean']:.2f} · {row['failed']}/{row['n']} short of full marks" if row["n"]
                 else "not graded yet")
        groups.setdefault(row["assignment"], []).append(
            f'<div class="card"><h3>{html.escape(row["exercise"])}</h3>'
            f"<div>{row['points']:g} points · {marks}{waiting}</div>"
            f"{histogram_svg(scores, row['points']) if scores else ''}</div>"
        )
    cards = [f'<h3>{html.escape(name)}</h3><div class="grid">{"".join(group)}</div>' for name, group in groups.items()]
    ordered = sorted(report.submissions, key=lambda s: (s.name, s.assignment or "", s.student, s.source))
    flagged = [[s.name, s.assignment or "-", s.score_text, "; ".join(s.flags)] for s in ordered if s.flags]
    problems = [[s.name, s.assignment or "-", s.score_text, "; ".join(s.problems)] for s in ordered if s.problems]
    sections = [
        "<h1>Autograding summary</h1>",
        f"<p>{len(graded)} submissions graded ({report.graded_now} now, {report.unchanged} unchanged since the last run).</p>",
        *([f"<p>{html.escape(GRADED_HERE)}: {html.escape(plain_text(', '.join(report.graded_here)))}.</p>"]
          if report.graded_here else []),
        "<h2>Scores per exercise</h2>",
        "".join(cards) if cards else "<p>No graded cells.</p>",
        *_class_view(report),
        "<h2>Flagged for review</h2>",
        "<p>Code that no answer needs (patched modules or objects' methods, frames, IPython hooks, the course's "
        "internals, course code not listed for the exercise, rigged comparisons). Grades were judged outside the "
        "students' kernels; this list is for you to look at.</p>",
        _table(["student", "assignment", "score", "what the code does"], flagged) if flagged else "<p>None.</p>",
        "<h2>Similar answers</h2>",
        "<p>Pairs whose answers to one exercise share much of their code once the given code is removed; "
        "<code>similarity.html</code> shows them side by side. This never changes a grade.</p>",
        _table(["assignment", "exercise", "student", "student", "shares"],
               [[p.assignment, p.exercise, p.student_a, p.student_b, f"{p.share_a:.0%} / {p.share_b:.0%}"]
                for p in report.similar]) if report.similar else "<p>None.</p>",
        "<h2>Problems found</h2>",
        _table(["student", "assignment", "score", "problems"], problems) if problems else "<p>None.</p>",
    ]
    csp = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
        f"<title>Autograding summary</title><style>{STYLE}</style></head><body>{''.join(sections)}</body></html>\n"
    )


@dataclass
class _Student:
    """One row of the class view: the student's name, how the roster matched them, their rows
    (``intake.Submission``) by tutorial, and those of no tutorial (not gradable)."""

    name: str
    matched: str
    tutorials: dict[str, list] = field(default_factory=dict)
    other: list = field(default_factory=list)


def _class_view(report) -> list[str]:
    """The class, one row per student and one column per tutorial in the course's order: the
    final score of each tutorial (with the raw score, how late and the penalty when the late
    policy took points, the written answers awaiting manual grading, the flags, or "no
    submission"), the total, and how the roster matched; then who handed in nothing."""
    rows = report.submissions + report.missing
    if not rows:
        return []
    tutorials = _tutorials(report, rows)
    students: dict[str, _Student] = {}
    for s in rows:
        student = students.setdefault(s.name, _Student(s.display_name, s.matched_by))
        student.name = student.name or s.display_name
        tutorial = s.assignment or s.missing_assignment
        if tutorial:
            student.tutorials.setdefault(tutorial, []).append(s)
        else:
            student.other.append(s)
    other = any(student.other for student in students.values())
    head = ["student", "name", *tutorials, "total", "matched by"] + (["not gradable"] if other else [])
    body = []
    for name in sorted(students):
        student = students[name]
        cells = [html.escape(plain_text(name)), html.escape(plain_text(student.name))]
        final = possible = 0.0
        several = False  # a plain folder's student who handed in two notebooks for one tutorial: both graded
        for tutorial in tutorials:
            subs = sorted(student.tutorials.get(tutorial, []), key=lambda s: s.source)
            if len(subs) > 1:
                several = True
                cells.append("<hr>".join(f"{html.escape(plain_text(s.source))}:<br>{_tutorial_cell(s)}" for s in subs))
                continue
            if not subs:
                cells.append("")
                continue
            cells.append(_tutorial_cell(subs[0]))
            final += subs[0].final
            possible += subs[0].max_score
        cells.append("several notebooks for one tutorial: yours to choose" if several else
                     f"{final:g}/{possible:g}" if possible else "")
        cells.append(html.escape(plain_text(student.matched)))
        if other:
            cells.append("<br>".join(html.escape(plain_text(f"{s.source}: {'; '.join(s.problems)}")) for s in student.other))
        body.append(cells)
    missing = sorted({f"{s.name} ({s.display_name}): {s.missing_assignment}" for s in report.missing})
    return [
        "<h2>The class</h2>",
        "<p>Per tutorial the final score (after the late policy), then what made it: the raw score, how late, "
        "the penalty, the written answers formgrader has not graded yet (they count 0 until then), the flags.</p>",
        _table(head, body, markup=True),
        "<h3>No submission</h3>",
        ("<ul>" + "".join(f"<li>{html.escape(plain_text(m))}</li>" for m in missing) + "</ul>") if missing else "<p>None.</p>",
    ]


def _tutorials(report, rows) -> list[str]:
    """The tutorials of ``rows`` in the course's order (``report.order``: the released notebooks,
    numbered), any other after them by name."""
    seen = {s.assignment or s.missing_assignment for s in rows} - {None, ""}
    known = [name for name in report.order if name in seen]
    return known + sorted(seen - set(known))


def _tutorial_cell(s) -> str:
    """One student's tutorial in the class view, as escaped lines."""
    if s.missing_assignment:
        return f"0/{s.max_score:g}<br>no submission"
    late, final = s.lateness, s.final
    lines = [f"{final:g}/{s.max_score:g}"]
    if late is not None and final != s.score:
        lines.append(f"raw {s.score:g}")
    if late is not None and late.late_text() not in ("", "on time"):
        lines.append(f"late {late.late_text()}")
    if late is not None and late.penalty_percent:
        lines.append(f"penalty {late.penalty_percent:g}%")
    if s.awaiting:
        lines.append(f"{len(s.awaiting)} awaiting manual grading")
    if s.flags:
        lines.append(f"flagged ({len(s.flags)})")
    if s.problems:
        lines.append(f"problems ({len(s.problems)})")
    return "<br>".join(html.escape(plain_text(line)) for line in lines)

