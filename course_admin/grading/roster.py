"""The class list: who should have submitted, and which roster student each submission is.

``read_roster(path)`` reads the CSV an LMS exports of a class: Canvas's gradebook export
(``Student, ID, SIS User ID, SIS Login ID, Section``, its ``Points Possible`` row skipped),
Moodle's grading worksheet (``Identifier`` = ``Participant <number>``, ``Full name``,
``ID number``, ``Email address``, and ``Last modified (submission)``, kept as the submission
times), Moodle's participants export (``First name``, ``Last name``/``Surname``, ``ID number``,
``Email address``), or a plain CSV (``id``, ``login``, ``name``, ``section``, ``email``).

``match(submissions, roster)`` gives every submission its roster student, by the LMS id its
file name carries (``lms_layout``), else by login (or SIS id, or e-mail), else by name, and says
which (``Submission.matched_by``). Ids and logins match only exactly (Unicode NFC, surrounding
spaces dropped): ``jdoe`` is not ``JDoe`` nor ``jd0e``; names match after case folding, and only
when exactly one roster student has that name. A submission that matches nobody, or several,
keeps its own id, is graded, and is listed apart: it is never merged into a roster student.

A cell a spreadsheet-safe writer protected with a leading ``'`` (``'-jdoe``, ``'=x``: see
``escaping.csv_cell``) is read as the id it protects; the protected form matches too.
"""

from __future__ import annotations

import csv
import io
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

BY_LMS_ID, BY_LOGIN, BY_NAME, UNMATCHED = "LMS id", "login", "name", "not on the roster"


class RosterError(ValueError):
    """A roster file that cannot be read; the message says what to do."""


@dataclass
class RosterEntry:
    """One student of the class list. ``key`` is the id rows and exports use: the LMS id when
    the roster has one, else the login, else the SIS id, else the e-mail."""

    lms_id: str = ""
    login: str = ""
    sis_id: str = ""
    name: str = ""
    section: str = ""
    email: str = ""
    participant: str = ""  # Moodle's participant number (``Identifier`` = ``Participant <number>``)
    extra: dict = field(default_factory=dict)  # columns kept for the exports (Moodle's maximum grade, times)

    @property
    def key(self) -> str:
        return self.lms_id or self.participant or self.login or self.sis_id or self.email or self.name


@dataclass
class Roster:
    """The class list as read, in the file's order, and which LMS wrote it."""

    entries: list[RosterEntry]
    source: str  # "canvas", "moodle" or "plain"
    path: Path | None = None

    def by_key(self) -> dict[str, RosterEntry]:
        return {entry.key: entry for entry in self.entries}


def unprotect(value: str) -> str:
    """A cell as the id it stands for: ``'-jdoe`` -> ``-jdoe`` (``escaping.csv_cell``'s guard
    against spreadsheet formulas), spaces around it dropped, Unicode in NFC."""
    value = unicodedata.normalize("NFC", (value or "").strip())
    if len(value) > 1 and value[0] == "'" and value[1] in "=+-@\t\r":
        value = value[1:]
    return value


def name_key(name: str) -> str:
    """A display name for comparison: NFC, case-folded, inner spaces collapsed."""
    return " ".join(unicodedata.normalize("NFC", name).casefold().split())


PARTICIPANT = re.compile(r"^\D*?(\d+)\s*$")

_COLUMNS = {  # our field: the headers it is read from (compared case-insensitively)
    "lms_id": ("id", "user id", "user_id", "canvas user id"),
    "login": ("sis login id", "login", "login id", "username", "user name"),
    "sis_id": ("sis user id", "id number", "sis id", "student number", "student id"),
    "name": ("student", "full name", "name"),
    "section": ("section", "sections", "group", "groups"),
    "email": ("email address", "email", "e-mail", "email_address"),
    "participant": ("identifier",),
}


def read_export(path: Path, error: type[ValueError], what: str, not_utf8: str) -> tuple[list[str], list[list[str]]]:
    """The header (NFC, lower-case, stripped) and rows of an LMS's CSV export at ``path``: UTF-8
    with or without a byte-order mark, separated by commas, or by semicolons or tabs as a
    spreadsheet in some locales saves it. ``error`` saying "cannot read {what} {path}: ...",
    "{what} {path} {not_utf8}" or "{what} {path} is empty" otherwise."""
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as problem:
        raise error(f"cannot read {what} {path}: {problem.strerror}") from None
    except UnicodeDecodeError:
        raise error(f"{what} {path} {not_utf8}") from None
    try:
        dialect = csv.Sniffer().sniff(text[:4096], delimiters=",;\t")
    except csv.Error:
        dialect = csv.excel
    rows = list(csv.reader(io.StringIO(text), dialect))
    if not rows:
        raise error(f"{what} {path} is empty")
    return [unicodedata.normalize("NFC", h).strip().lower() for h in rows[0]], rows


def column(header: list[str], names) -> int | None:
    """Where the first of ``names`` (lower-case) is in ``header``; None when none is."""
    return next((header.index(name) for name in names if name in header), None)


def participant_number(value: str) -> str:
    """Moodle's ``Participant 42`` (its worksheet's ``Identifier``) as ``42``; any other value as it is."""
    found = PARTICIPANT.match(value)
    return found.group(1) if found else value


def read_roster(path: str | Path) -> Roster:
    """The roster at ``path``; ``RosterError`` saying what is wrong and what to do otherwise."""
    path = Path(path)
    header, rows = read_export(path, RosterError, "the roster", "is not UTF-8: export it again as CSV (UTF-8)")
    columns = {ours: at for ours, names in _COLUMNS.items() if (at := column(header, names)) is not None}
    first = column(header, ("first name", "firstname", "given name"))
    last = column(header, ("last name", "surname", "lastname", "family name"))
    if "participant" in columns:
        source = "moodle"
        columns.pop("lms_id", None)  # a worksheet's ids are participant numbers
    elif {"lms_id", "name"} <= columns.keys() and header[columns["name"]] == "student":
        source = "canvas"
    else:
        source = "plain"
    if not columns.keys() & {"lms_id", "login", "sis_id", "email", "participant", "name"} and first is None:
        raise RosterError(
            f"the roster {path} has none of the columns a class list needs (found: {', '.join(rows[0][:8])}): "
            "export the Canvas gradebook or the Moodle grading worksheet, or give a CSV with an id, login or name column"
        )
    entries, seen = [], {}
    for number, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        cell = {ours: unprotect(row[at]) if at < len(row) else "" for ours, at in columns.items()}
        if "points possible" in cell.get("name", "").lower() or "points possible" in (row[0].lower() if row else ""):
            continue  # Canvas's second row
        if source == "canvas" and cell.get("name", "") in ("Test Student", "Student, Test"):
            continue  # Canvas's Student View user
        if first is not None and not cell.get("name"):
            cell["name"] = " ".join(row[i].strip() for i in (first, last) if i is not None and i < len(row)).strip()
        if "participant" in cell:
            cell["participant"] = participant_number(cell["participant"])
        entry = RosterEntry(**cell)
        entry.extra = {rows[0][i].strip(): row[i] for i in range(min(len(row), len(rows[0])))}
        if not entry.key:
            raise RosterError(f"row {number} of the roster {path} has no id, login or name: fill it in or delete the row")
        if entry.key in seen:
            raise RosterError(
                f"rows {seen[entry.key]} and {number} of the roster {path} are both {entry.key!r}: "
                "a student appears twice; delete one row"
            )
        seen[entry.key] = number
        entries.append(entry)
    return Roster(entries, source, path)


# --------------------------------------------------------------------------------------
# Matching


@dataclass
class Match:
    """Who a submission is: the roster entry (None when nobody, or several, match), how it was
    matched (``BY_LMS_ID``, ``BY_LOGIN``, ``BY_NAME`` or ``UNMATCHED``) and, when unmatched, why."""

    entry: RosterEntry | None
    by: str
    note: str = ""


class Matcher:
    """Look-ups into one roster: exact ids, exact logins (SIS ids, e-mails), unique names."""

    def __init__(self, roster: Roster):
        self.roster = roster
        self.ids: dict[str, dict[str, RosterEntry]] = {"canvas": {}, "moodle": {}}
        self.logins: dict[str, list[RosterEntry]] = {}
        self.names: dict[str, list[RosterEntry]] = {}
        for entry in roster.entries:
            if entry.lms_id:
                self.ids["canvas"][entry.lms_id] = entry
            if entry.participant:
                self.ids["moodle"][entry.participant] = entry
            for value in (entry.login, entry.sis_id, entry.email):
                if value:
                    self.logins.setdefault(value, []).append(entry)
            if entry.name:
                self.names.setdefault(name_key(entry.name), []).append(entry)
                if "," in entry.name:  # Canvas's "Last, First" is also "First Last" in a plain file name
                    last, _, first = entry.name.partition(",")
                    self.names.setdefault(name_key(f"{first} {last}"), []).append(entry)

    def find(self, layout: str, lms_id: str, label: str) -> Match:
        """The roster entry for a submission in ``layout`` (``lms_layout``) whose file name
        carries ``lms_id`` (Canvas user id, Moodle participant number; may be "") and otherwise
        reads ``label`` (a plain file's stem, a Moodle folder's full name)."""
        ids = self.ids.get(layout, {})
        if lms_id:
            if lms_id in ids:
                return Match(ids[lms_id], BY_LMS_ID)
            if ids:  # the roster has this LMS's ids and this one is not among them: not enrolled
                return Match(None, UNMATCHED, f"LMS id {lms_id} is not on the roster")
            if layout == "canvas":  # a Canvas file's name part is re-derived from the name: never matched on
                return Match(None, UNMATCHED, f"Canvas user {lms_id}: the roster has no Canvas ID column to match it by")
        label = unprotect(label)
        for known in self.ids.values():
            if label in known:
                return Match(known[label], BY_LMS_ID)
        found = self.logins.get(label, [])
        if len(found) == 1:
            return Match(found[0], BY_LOGIN)
        if len(found) > 1:
            return Match(None, UNMATCHED, f"{label!r} is the login of {len(found)} roster students: not merged")
        found = _unique(self.names.get(name_key(label), []))
        if len(found) == 1:
            return Match(found[0], BY_NAME)
        if len(found) > 1:
            keys = ", ".join(entry.key for entry in found)
            return Match(None, UNMATCHED, f"{label!r} is the name of {len(found)} roster students ({keys}): not merged;"
                         " rename the file to the student's login or LMS id")
        return Match(None, UNMATCHED, f"{label!r} is not on the roster")


def _unique(entries: list[RosterEntry]) -> list[RosterEntry]:
    out = []
    for entry in entries:
        if all(entry is not other for other in out):
            out.append(entry)
    return out
