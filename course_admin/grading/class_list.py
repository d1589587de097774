"""Who each submission is, once it has been read: the LMS layout, the roster, resubmissions.

``identify_students(submissions, roster)`` runs between ``intake.collect`` (which reads the
folder) and grading. Each submission's entry name is read as an LMS download's
(``lms_layout``), so ``smithjohn_LATE_12345_67890_02_colour_replay.ipynb`` is Canvas user
``12345``, not a student of that long name; with a roster it is matched to a roster student
(``roster.Matcher``). One student's uploads for one tutorial in an LMS download are then told
apart: the latest (``lms_layout.upload_order``: Canvas's attachment ids grow with every upload;
in a Moodle folder, the file times) is graded and names the others, which are not graded. A
plain folder has no upload order to trust, so there every notebook is graded and
``intake.separate_claims`` gives the second ``id~2``; it keeps one gradebook id per student and
tutorial in every layout.

A roster that matches none of several submissions (not anonymous ones) is taken for another
class's and stops the run (``RosterError``) before anything is graded: graded on, its LMS import
would give every student of the roster 0.

``missing_students(roster, submissions, tutorials)`` gives the roster students with no graded
submission of a tutorial: each becomes a row with 0 and "no submission".
"""

from __future__ import annotations

from dataclasses import dataclass

from course_admin.grading.intake import Submission, display, gradebook_id, separate_claims
from course_admin.grading.lms_layout import CANVAS, MOODLE, PLAIN, submission_entry, upload_order
from course_admin.grading.roster import UNMATCHED, Matcher, Roster, RosterEntry, RosterError


@dataclass
class Superseded:
    """An upload not graded because the same student handed in a later one for the tutorial."""

    student: str
    assignment: str
    source: str
    graded: str  # the source of the upload that was graded instead


def identify_students(submissions: list[Submission], roster: Roster | None) -> tuple[list[Submission], list[Superseded]]:
    """The submissions to grade and report, each with its student id (``name``), gradebook id,
    display name, roster match and late flag set; and the uploads left out as superseded."""
    matcher = Matcher(roster) if roster else None
    roster_keys = set(roster.by_key()) if roster else set()
    named = []  # (submission, its id before matching) of those a roster could match (not anonymous)
    for sub in submissions:
        lms = submission_entry(sub)
        sub.late_flag = lms.late
        key, shown = None, sub.name  # key None: the id intake gave it stays (a plain file's own name)
        if lms.layout in (CANVAS, MOODLE):
            key, shown = lms.lms_id, lms.name or f"anonymous {lms.lms_id}"
            if lms.anonymous:
                key = f"anon_{lms.lms_id}"
        if matcher is not None:
            if not lms.anonymous and sub.assignment is not None:
                named.append((sub, key or sub.name))
            label = lms.name if lms.layout != PLAIN else sub.name
            found = matcher.find(lms.layout, "" if lms.anonymous else lms.lms_id, label)
            if lms.anonymous:
                found.note = "anonymous grading: Canvas's anonymous id names no roster student (match it once grades are posted)"
            sub.matched_by = found.by
            if found.entry is not None:
                key, shown, sub.section = found.entry.key, found.entry.name or shown, found.entry.section
            else:
                sub.problems.append(f"not on the roster ({found.note}): graded and listed apart")
                if (key or sub.name) in roster_keys:  # never share an id with a roster student it did not match
                    key = f"unmatched {key or sub.name}"
        sub.display_name = display(shown)
        if key is not None:
            sub.name, sub.student = display(key), gradebook_id(key)
    if roster and len(named) >= 2 and all(sub.matched_by == UNMATCHED for sub, _ in named):
        raise RosterError(_wrong_roster(roster, [shown for _, shown in named]))
    kept, superseded = _latest_only(submissions)
    separate_claims(kept)
    return kept, superseded


def _wrong_roster(roster: Roster, ids: list[str]) -> str:
    """Why a roster that matches none of several submissions stops the run: graded on, every
    roster student would get 0 ("no submission") in the LMS import."""
    def some(names) -> str:
        names = sorted(dict.fromkeys(names))
        return ", ".join(display(n) for n in names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")

    return (f"none of the {len(ids)} submissions matches a student of the roster {roster.path} ({roster.source} export, "
            f"{len(roster.entries)} students): the submissions are {some(ids)}; the roster's students are "
            f"{some(e.key for e in roster.entries)}. Give this class's roster (the export of the course the download "
            "came from), or no --roster")


def _latest_only(submissions: list[Submission]) -> tuple[list[Submission], list[Superseded]]:
    """Per student and tutorial, the latest upload (``upload_order``); the others named on it."""
    groups: dict[tuple[str, str], list[Submission]] = {}
    for sub in submissions:  # a plain folder has no upload order to trust: there every notebook is graded (separate_claims)
        if sub.assignment is not None and submission_entry(sub).layout in (CANVAS, MOODLE):
            groups.setdefault((sub.name, sub.assignment), []).append(sub)
    dropped: list[Superseded] = []
    left_out: set[int] = set()
    for (student, assignment), subs in groups.items():
        if len(subs) < 2:
            continue
        subs.sort(key=lambda s: (upload_order(submission_entry(s), s.mtime), s.source))
        latest = subs[-1]
        for sub in subs[:-1]:
            dropped.append(Superseded(student, assignment, sub.source, latest.source))
            latest.superseded.append(sub.source)
            left_out.add(id(sub))
        latest.problems.append(
            f"latest of {len(subs)} uploads for {assignment} graded ({latest.source}); not graded: {', '.join(latest.superseded)}"
        )
    return [s for s in submissions if id(s) not in left_out], dropped


def missing_students(roster: Roster, submissions: list[Submission], tutorials: list[str]) -> list[Submission]:
    """A row for every roster student with no submission of a tutorial in ``tutorials``: score 0,
    "no submission" (not graded, nothing to grade)."""
    handed_in = {(s.name, s.assignment) for s in submissions if s.assignment is not None}
    rows = []
    for entry in roster.entries:
        for tutorial in tutorials:
            if (entry.key, tutorial) not in handed_in:
                rows.append(_missing(entry, tutorial))
    return rows


def _missing(entry: RosterEntry, tutorial: str) -> Submission:
    sub = Submission(gradebook_id(entry.key), "", None, name=entry.key, problems=["no submission"])
    sub.display_name, sub.section, sub.status, sub.missing_assignment = entry.name, entry.section, "no submission", tutorial
    return sub


def unmatched(submissions: list[Submission]) -> list[Submission]:
    """The submissions no roster student matched, to be listed apart."""
    return [s for s in submissions if s.matched_by == UNMATCHED]
