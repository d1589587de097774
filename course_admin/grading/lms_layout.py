"""Which student an LMS bulk download's entry stands for: Canvas's and Moodle's file and folder names.

Canvas names each downloaded file ``<lastfirst>[_LATE]_<user id>_<attachment id>_<original name>``
(the name part lower-cased and stripped of most punctuation; ``_late_`` in older versions;
``anon_<id>`` in place of the name and user id under anonymous grading; a file uploaded again
under the same name gets ``-1``, ``-2`` before its extension). Moodle puts each student in a
folder ``<Full Name>_<participant number>_assignsubmission_file_`` (``..._file`` without the
trailing ``_`` in older versions), or, without folders, prefixes each file with the same.

``parse_entry(name, is_dir)`` reads one entry of the submissions folder into an ``LmsEntry``
with nbgrader's own ``zip collect`` file-name reader (``FileNameCollectorPlugin``, a named
regular expression per layout); an entry no layout reads is ``plain`` (``alice.ipynb``,
``bob/``), as ``course autograde`` always read them. The name part of a Canvas file is kept for
the report only: students are matched by the ids (``roster.match``), never by re-deriving a
display name (two students may share one, and Canvas keeps letters that ``\\w`` drops).
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass

from course_admin.grading.intake import display

CANVAS = "canvas"
MOODLE = "moodle"
PLAIN = "plain"

# nbgrader's collector needs ``student_id`` and ``file_id``; the other groups are ours.
CANVAS_REGEXP = (
    r"^(?:anon_(?P<anon>[A-Za-z0-9]+)|(?P<name>[^_]*?)(?:_(?P<late>LATE|late))?_(?P<student_id>\d+))"
    r"(?(anon)(?:_(?P<anon_late>LATE|late))?)_(?P<attachment>\d+)_(?P<file_id>.+)$"
)
"""A Canvas bulk-download file name. ``student_id`` is Canvas's user id (the gradebook's ``ID``),
``attachment`` the uploaded file's id (Canvas numbers files in upload order), ``file_id`` the
name the student uploaded, with Canvas's ``-N`` for a re-upload."""

MOODLE_REGEXP = r"^(?P<name>.+?)_(?P<student_id>\d+)_assignsubmission_(?P<plugin>[a-z]+)(?:_(?P<file_id>.*))?$"
"""A Moodle bulk-download folder (``file_id`` empty or absent) or file name. ``student_id`` is
the participant number, which Moodle's grading worksheet writes as ``Participant <number>``."""

REUPLOAD = re.compile(r"^(?P<stem>.+)-(?P<n>\d{1,3})(?P<ext>\.[A-Za-z0-9]+)$")


@dataclass(frozen=True)
class LmsEntry:
    """What an entry's name says about its student.

    layout: ``canvas``, ``moodle`` or ``plain``.
    lms_id: Canvas user id, Moodle participant number, or Canvas's anonymous id ("" when plain).
    name: the name part of the entry (Canvas's ``lastfirst``, Moodle's full name, the plain stem).
    late: Canvas marked the submission late (``_LATE_``); how late is not in the name.
    attachment: Canvas's attachment id (-1 when none): later uploads have larger ids.
    reupload: Canvas's ``-N`` on a file uploaded again under the same name (0 when none).
    original: the file name the student uploaded ("" for a Moodle folder).
    anonymous: the id is Canvas's anonymous-grading id, not a user id.
    """

    layout: str
    lms_id: str = ""
    name: str = ""
    late: bool = False
    attachment: int = -1
    reupload: int = 0
    original: str = ""
    anonymous: bool = False


def _collect(regexp: str, name: str, is_dir: bool) -> dict | None:
    """The named groups of ``regexp`` in ``name``, read by nbgrader's ``zip collect`` file-name
    collector for a file; a folder (which that collector does not take) by the same expression."""
    if is_dir:
        found = re.match(regexp, name)
        return found.groupdict() if found else None
    from nbgrader.plugins.zipcollect import FileNameCollectorPlugin

    # The collector skips files whose extension it is not told to take: give it this one's
    # (a notebook, a zip, or whatever else a student uploaded, which then gets its reason on the
    # right student's row).
    plugin = FileNameCollectorPlugin(named_regexp=regexp, valid_ext=[os.path.splitext(name)[1]])
    plugin.log = _QUIET  # a name no layout reads is a plain submission, not a warning
    return plugin.collect(name)


_QUIET = logging.getLogger("course_utils.lms_layout")
_QUIET.setLevel(logging.ERROR)


def parse_entry(entry_name: str, is_dir: bool) -> LmsEntry:
    """The ``LmsEntry`` for one entry (file or folder name) of a submissions folder."""
    groups = _collect(MOODLE_REGEXP, entry_name, is_dir)
    if groups and is_dir and not groups.get("file_id"):
        return LmsEntry(MOODLE, groups["student_id"], groups["name"])
    if groups and not is_dir and groups.get("file_id"):
        return LmsEntry(MOODLE, groups["student_id"], groups["name"], original=groups["file_id"])
    groups = None if is_dir else _collect(CANVAS_REGEXP, entry_name, is_dir)
    if groups:
        original = groups["file_id"]
        again = REUPLOAD.match(original)
        anonymous = groups.get("anon") is not None
        return LmsEntry(
            CANVAS,
            lms_id=groups["anon"] if anonymous else groups["student_id"],
            name="" if anonymous else groups["name"],
            late=bool(groups.get("late") or groups.get("anon_late")),
            attachment=int(groups["attachment"]),
            reupload=int(again["n"]) if again else 0,
            original=original,
            anonymous=anonymous,
        )
    return LmsEntry(PLAIN, name=entry_name)


def submission_entry(sub) -> LmsEntry:
    """The ``LmsEntry`` of an ``intake.Submission``: the name of the entry of the submissions
    folder it was read from (``sub.entry``), a folder when ``sub.source`` is a notebook below it
    (a zip's member is ``name.zip:path``); plain when it has no entry."""
    if not sub.entry:
        return LmsEntry(PLAIN, name=sub.name)
    return parse_entry(sub.entry, sub.source.startswith(display(sub.entry) + "/"))


def upload_order(entry: LmsEntry, mtime: float = 0.0) -> tuple:
    """Sort key of one student's uploads for one tutorial, oldest first: Canvas's attachment id
    (ids grow with every upload), then its ``-N``, then the file's modification time (a plain or
    Moodle folder; only the order among one student's own files is read from it)."""
    return (entry.attachment, entry.reupload, mtime)
