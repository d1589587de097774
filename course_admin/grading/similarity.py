"""Answers that look copied: a similarity report over the class, with copydetect.

After grading, every exercise's answer cells (nbgrader ``solution`` code cells, by grade id)
are compared across the class with copydetect's fingerprints (k-grams of the tokenized code,
as in MOSS's winnowing, Schleimer et al. 2003; see ``K, WINDOW``). copydetect tokenizes the
code first (names become ``V``, functions ``F``, strings ``S``, comments and spacing are
dropped), so renamed variables change nothing, and a
fingerprint is a short run of tokens wherever it occurs, so reordered statements still share
theirs. What the released notebook gives in the cell (the stub, the given code) is boilerplate:
its fingerprints are removed from every answer before comparing.

A pair is listed when either answer shares at least ``threshold`` of its fingerprinted tokens
with the other (copydetect's own rule). Answers with fewer than ``MIN_TOKENS`` tokens of their
own are not compared: a one-line answer is the same in every honest notebook. The report
(``similarity.csv`` and ``similarity.html``, side by side with the shared code highlighted)
is for the instructor to look at; like the cheat report, it never changes a grade.

Each answer is also compared with the course's code (``course_pairs``): every module of the
student package and of the tutorials' instructor code (``REFERENCE``; not the model answers nor
the hidden cases), which held the course's own agents before they left the student wheel. An
answer that shares ``threshold`` of its code with one module is listed with the module as its
pair and, in the HTML, the module's definition it shares most with. That finds a readable copy of course code, renamed and
reordered, which the cheat report's flags (code carried compressed, ``exec``) do not see.
Filtering the package's 90-odd modules through pygments costs about 3 CPU-s, so the filtered
text is cached by file content (``COURSE_CACHE``); hashing it again is 0.3 s per process,
because copydetect's hashes are salted per process and cannot be cached themselves.
"""

from __future__ import annotations

import ast
import csv
import hashlib
import html
import importlib.util
import io
import itertools
import json
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

from course_admin.grading.cells import cell_source, nbgrader_meta

K, WINDOW = 25, 1
"""k-grams of 25 filtered characters (copydetect's default noise threshold), every one kept
(a winnowing window of 1). Winnowing keeps the smallest hash per window, and copydetect hashes
with Python's ``hash``, which is salted per process: with its default window of 6 the same class
scored a copied answer 0.59 to 0.73 from one run to the next. Answer cells are small, so
keeping every k-gram costs nothing and gives the same report every run."""
HTML_PAIRS = 200
"""Most pairs shown side by side in ``similarity.html`` (the highest first); the CSV has them all."""
MIN_TOKENS = 40
"""Fewest fingerprinted characters (after filtering and boilerplate) an answer needs to be compared."""
COURSE = "course package"
"""The name a course module takes as the second member of a pair (``Pair.student_b`` is
``"course package: course_utils/lunar/critic.py"``)."""
COURSE_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rl-course" / "course-code-filtered.json"
"""{module path: [sha256 of its source, copydetect's filtered text]}: plain JSON, never code. One
file per installed package folder (its path's hash joins the name), so two checkouts do not
rewrite each other's."""


@dataclass
class Pair:
    """Two students' answers to one exercise and how much each shares with the other (0-1)."""

    assignment: str
    exercise: str
    student_a: str
    student_b: str
    share_a: float
    share_b: float
    overlap: int  # characters of filtered code in common
    code_a: str = ""
    code_b: str = ""
    slices_a: object = None
    slices_b: object = None

    @property
    def score(self) -> float:
        return max(self.share_a, self.share_b)


def answer_cells(notebook: dict) -> dict[str, str]:
    """{grade id: source} of a notebook's answer code cells (nbgrader ``solution`` cells)."""
    found = {}
    for cell in notebook.get("cells", []) if isinstance(notebook, dict) else []:
        info = nbgrader_meta(cell)
        if cell.get("cell_type") == "code" and info.get("solution") and info.get("grade_id"):
            found.setdefault(info["grade_id"], cell_source(cell))
    return found


def _answer_print(code: str, given: frozenset):
    """``_fingerprint(code, given)``, once per answer: the class comparison and the comparison
    with the course package read the same answers."""
    key = (code, given)
    if key not in _PRINTS:
        if len(_PRINTS) > 4096:
            _PRINTS.clear()
        _PRINTS[key] = _fingerprint(code, list(given))
    return _PRINTS[key]


_PRINTS: dict = {}


def _fingerprint(code: str, boilerplate=None):
    from copydetect import CodeFingerprint

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return CodeFingerprint("answer.py", K, WINDOW, boilerplate=boilerplate, language="python", fp=io.StringIO(code))


def share_of(fingerprint, shared: set) -> float:
    """The share of ``fingerprint``'s code covered by the k-grams whose hashes are in ``shared``:
    copydetect's ``compare_files`` similarity (the union of the k-long spans at every position of
    a shared hash, over its token coverage), without its arrays and slices: about 700 times
    cheaper per pair, so only pairs at the threshold pay for ``compare_files``."""
    positions = sorted(p for h in shared for p in fingerprint.hash_idx[h])
    covered, end = 0, -1
    for p in positions:
        covered += min(K, p + K - end) if p < end else K
        end = max(end, p + K)
    return covered / fingerprint.token_coverage if fingerprint.token_coverage else 0.0


def similar_pairs(answers: dict[str, dict[str, str]], released: dict[str, str], assignment: str,
                  threshold: float) -> list[Pair]:
    """Pairs of students whose answers to an exercise share at least ``threshold``.

    answers: {student: {grade id: answer source}}; released: {grade id: the released cell's
    source} (its fingerprints are boilerplate)."""
    from copydetect import compare_files

    pairs = []
    exercises = sorted({grade_id for cells in answers.values() for grade_id in cells})
    for exercise in exercises:
        given = frozenset(_fingerprint(released.get(exercise, "")).hashes)
        prints = {}
        for student in sorted(answers):
            code = answers[student].get(exercise)
            if code is None or code.strip() == released.get(exercise, "").strip():
                continue  # not answered: the stub is the same for everyone
            try:
                found = _answer_print(code, given)
            except Exception:  # code pygments or copydetect cannot read: nothing to compare
                continue
            if found.token_coverage >= MIN_TOKENS:
                prints[student] = (code, found)
        for (a, (code_a, fa)), (b, (code_b, fb)) in itertools.combinations(sorted(prints.items()), 2):
            shared = fa.hashes & fb.hashes
            if not shared or max(share_of(fa, shared), share_of(fb, shared)) < threshold:
                continue  # below the threshold: no need for copydetect's slices (most pairs of a class)
            overlap, (share_a, share_b), (slices_a, slices_b) = compare_files(fa, fb)
            if max(share_a, share_b) >= threshold:
                pairs.append(Pair(assignment, exercise, a, b, float(share_a), float(share_b), int(overlap),
                                  code_a, code_b, slices_a, slices_b))
    return sorted(pairs, key=lambda p: (-p.score, p.assignment, p.exercise, p.student_a, p.student_b))


def _filtered(code: str) -> str:
    from copydetect.utils import filter_code

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return filter_code(code, "module.py", "python")[0]


REFERENCE = ("course_utils", "course_admin.harlow", "course_admin.colour", "course_admin.lunar", "course_admin.replay")
"""Where the course's code is: the student package, and the tutorials' instructor code, which held
the course's own agents before they left the student wheel (a student who installed an older
wheel has them)."""
NOT_REFERENCE = frozenset({"solutions.py", "hidden_cases.py"})
"""Instructor modules an answer is expected to resemble: the model answers, the hidden cases."""


def course_modules(packages: tuple[str, ...] = REFERENCE) -> dict[str, tuple[str, str]]:
    """{``course_utils/…/x.py``: (source, copydetect's filtered text)} of every module of
    ``packages`` (installed; a package that is not is left out), the filtered text read from
    ``COURSE_CACHE`` where the source is unchanged (the cache is rewritten when it is not; an
    unreadable cache is rebuilt)."""
    roots = []
    for package in packages:
        try:
            spec = importlib.util.find_spec(package)
        except ImportError:
            spec = None
        if spec is not None and spec.origin:
            roots.append((Path(spec.origin).parent, package.count(".") + 1))
    root = roots[0][0] if roots else Path(".")
    cache = COURSE_CACHE.with_name(f"{COURSE_CACHE.stem}-{hashlib.sha256(str(root).encode()).hexdigest()[:12]}.json")
    try:
        cached = json.loads(cache.read_text(encoding="utf-8"))
        cached = cached if isinstance(cached, dict) else {}
    except (OSError, ValueError):
        cached = {}
    modules, changed = {}, False
    paths = [(path, path.relative_to(top.parents[depth - 1]).as_posix()) for top, depth in roots
             for path in sorted(top.rglob("*.py")) if depth == 1 or path.name not in NOT_REFERENCE]
    for path, name in paths:
        source = path.read_text(encoding="utf-8", errors="replace")
        digest = hashlib.sha256(source.encode()).hexdigest()
        entry = cached.get(name)
        if not (isinstance(entry, list) and len(entry) == 2 and entry[0] == digest and isinstance(entry[1], str)):
            entry, changed = [digest, _filtered(source)], True
        modules[name] = (source, entry[1])
    if changed or set(cached) != set(modules):
        try:
            cache.parent.mkdir(parents=True, exist_ok=True)
            scratch = cache.with_suffix(f".{os.getpid()}.tmp")
            scratch.write_text(json.dumps({n: [hashlib.sha256(src.encode()).hexdigest(), f]
                                           for n, (src, f) in modules.items()}), encoding="utf-8")
            os.replace(scratch, cache)
        except OSError:
            pass  # a read-only home: filter again next time
    return modules


def _best_definition(source: str, answer) -> str:
    """The top-level function or class of a course module that shares most with ``answer``'s
    fingerprint (what the HTML shows beside the answer); the whole module if none parses."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    best, best_share = source, -1.0
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            segment = ast.get_source_segment(source, node) or ""
            try:
                shared = answer.hashes & _fingerprint(segment).hashes
            except Exception:
                continue
            share = share_of(answer, shared) if shared else 0.0
            if share > best_share:
                best, best_share = segment, share
    return best


def course_hashes(modules: dict[str, tuple[str, str]]) -> dict[str, tuple[str, set]]:
    """{module: (source, its fingerprint's hashes)} of ``course_modules``' filtered text (0.3 s
    for the package: hash it once per class, not once per tutorial)."""
    from copydetect.utils import get_document_fingerprints

    return {name: (source, set(get_document_fingerprints(filtered, K, WINDOW)[0]))
            for name, (source, filtered) in modules.items()}


def course_pairs(answers: dict[str, dict[str, str]], released: dict[str, str], assignment: str,
                 threshold: float, course: dict[str, tuple[str, set]]) -> list[Pair]:
    """Answers that share at least ``threshold`` of their own code (the released cell removed)
    with one module of the course package (``course_hashes``): one pair per answer, with the
    module it shares most with. ``share_b`` is the module's share (small: a module is long)."""
    from copydetect import compare_files

    everything = set().union(*(h for _, h in course.values())) if course else set()
    pairs = []
    for exercise in sorted({grade_id for cells in answers.values() for grade_id in cells}):
        given = frozenset(_fingerprint(released.get(exercise, "")).hashes)
        for student in sorted(answers):
            code = answers[student].get(exercise)
            if code is None or code.strip() == released.get(exercise, "").strip():
                continue
            try:
                found = _answer_print(code, given)
            except Exception:
                continue
            if found.token_coverage < MIN_TOKENS or share_of(found, found.hashes & everything) < threshold:
                continue  # not even all of the package together reaches the threshold: most answers
            share, module = max((share_of(found, found.hashes & hashes), name) for name, (_, hashes) in course.items())
            if share < threshold:
                continue
            segment = _best_definition(course[module][0], found)
            overlap, (share_a, share_b), (slices_a, slices_b) = compare_files(found, _fingerprint(segment))
            pairs.append(Pair(assignment, exercise, student, f"{COURSE}: {module}", float(share), float(share_b),
                              int(overlap), code, segment, slices_a, slices_b))
    return pairs


def class_pairs(submissions, released: dict[str, dict], threshold: float) -> list[Pair]:
    """``similar_pairs`` and ``course_pairs`` for every tutorial of a graded class
    (``intake.Submission``s with their content; ``released``: per assignment, the released notebook)."""
    pairs, modules = [], None
    for assignment in sorted({s.assignment for s in submissions if s.assignment and s.content}):
        answers = {}
        for sub in submissions:
            if sub.assignment == assignment and sub.content:
                try:
                    answers[sub.name] = answer_cells(json.loads(sub.content))
                except (ValueError, RecursionError):
                    continue
        pairs += similar_pairs(answers, answer_cells(released[assignment]), assignment, threshold)
        if answers:
            modules = course_hashes(course_modules()) if modules is None else modules
            pairs += course_pairs(answers, answer_cells(released[assignment]), assignment, threshold, modules)
    return sorted(pairs, key=lambda p: (-p.score, p.assignment, p.exercise, p.student_a, p.student_b))


def _highlighted(code: str, slices) -> str:
    from copydetect.utils import highlight_overlap

    if slices is None or getattr(slices, "shape", (0,))[0] == 0 or slices.shape[-1] == 0:
        return html.escape(code)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        marked, _ = highlight_overlap(code, slices, "<mark>", "</mark>", escape_html=True)
    return marked


def write_report(pairs: list[Pair], out: Path, threshold: float) -> tuple[Path, Path]:
    """``similarity.csv`` (one row per pair) and ``similarity.html`` (each pair side by side,
    shared code marked; student code escaped, no script) in ``out``."""
    from course_admin.grading.escaping import csv_cell, plain_text

    out.mkdir(parents=True, exist_ok=True)
    table = out / "similarity.csv"
    with table.open("w", newline="", encoding="utf-8", errors="backslashreplace") as f:
        writer = csv.writer(f)
        writer.writerow(["assignment", "exercise", "student_a", "student_b", "share_a", "share_b", "overlap_chars"])
        for p in pairs:
            writer.writerow([p.assignment, p.exercise, csv_cell(plain_text(p.student_a)), csv_cell(plain_text(p.student_b)),
                             f"{p.share_a:.2f}", f"{p.share_b:.2f}", p.overlap])
    parts = [f"<h1>Similar answers</h1><p>Pairs whose answers to one exercise share at least {threshold:.0%} of either"
             " answer's code after the given code is removed (copydetect's winnowed fingerprints; names and spacing do"
             " not count), and answers that share as much with a module of the course package the students installed"
             f" (paired with \"{COURSE}: …\", the module's closest definition shown). This never changes a grade:"
             " look before you conclude.</p>"]
    if not pairs:
        parts.append("<p>None.</p>")
    if len(pairs) > HTML_PAIRS:
        parts.append(f"<p>{len(pairs)} pairs: the {HTML_PAIRS} highest are shown; similarity.csv lists them all.</p>")
    for p in pairs[:HTML_PAIRS]:
        a, b = html.escape(plain_text(p.student_a)), html.escape(plain_text(p.student_b))
        parts.append(
            f'<h2>{html.escape(p.assignment)} · {html.escape(p.exercise)}: {a} {p.share_a:.0%} · {b} {p.share_b:.0%}</h2>'
            f'<div class="pair"><div><h3>{a}</h3><pre>{_highlighted(p.code_a, p.slices_a)}</pre></div>'
            f'<div><h3>{b}</h3><pre>{_highlighted(p.code_b, p.slices_b)}</pre></div></div>'
        )
    style = ("body{font-family:system-ui,sans-serif;margin:2em;color:#222}.pair{display:flex;gap:1em}"
             ".pair>div{flex:1;min-width:0}pre{background:#f6f6f6;padding:.6em;overflow:auto}mark{background:#ffe08a}")
    csp = "default-src 'none'; style-src 'unsafe-inline'"
    page = out / "similarity.html"
    page.write_text(
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" '
        f'content="{csp}"><title>Similar answers</title><style>{style}</style></head><body>{"".join(parts)}</body></html>\n',
        encoding="utf-8", errors="backslashreplace")
    return table, page
