"""Reading a folder of submissions: what ``course autograde`` grades, and why not the rest.

``collect(folder, known)`` turns a folder as an instructor downloads it from an LMS or a hub
into ``Submission`` records: ``<student>.ipynb``, ``<student>.zip`` (holding notebooks) or
``<student>/.../*.ipynb``. It reads only regular files inside the folder (a symbolic link,
a hard link, a named pipe, a device or a folder named ``x.ipynb`` is named, never opened or
followed),
checks sizes before reading, and reads zips member by member in memory (never extracted)
with limits on member size, total size and compression ratio. Anything it cannot read
becomes a ``Submission`` with a reason; nothing one entry holds can stop the others.

Student ids are kept as the instructor's export gives them (Unicode, dots and spaces
included: ``Иван``, ``jane.doe``, ``a b``). ``gradebook_id`` maps each to a name safe for
nbgrader and the file system by a reversible escape (``%XX`` for anything else), so two
different ids never become one; when two submissions still claim one student and tutorial,
both are graded and the report says so.

Each notebook read is then made gradable by ``notebook_repair.repair``.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import stat
import struct
import unicodedata
import warnings
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from course_admin.grading.cells import nbgrader_meta

NOTEBOOK_SUFFIX, ZIP_SUFFIX = ".ipynb", ".zip"


@dataclass(frozen=True)
class IntakeLimits:
    """What ``collect`` reads at most, per submission.

    notebook_mb: largest notebook, on disk or uncompressed in a zip (a tutorial saved with
        all its outputs and animations is under 20 MB).
    zip_mb: largest zip file opened.
    zip_total_mb: uncompressed notebooks read from one zip, all members together.
    zip_ratio: largest uncompressed/compressed ratio of a zip member (notebooks compress
        about 3-10x; a zip bomb 1000x or more).
    notebooks: most notebooks read from one student's folder or zip.
    zip_entries: most files a zip may list at all (each costs memory before any is read).
    """

    notebook_mb: float = 50.0
    zip_mb: float = 200.0
    zip_total_mb: float = 200.0
    zip_ratio: float = 200.0
    notebooks: int = 20
    zip_entries: int = 10_000


@dataclass
class Submission:
    """One student's notebook for one assignment, or the reason it cannot be graded.

    ``name`` is the student id as the instructor gave it (file or folder name), ``student``
    the id it has in the gradebook and the course folder (``gradebook_id``, unique per
    assignment in a run)."""

    student: str
    source: str
    assignment: str | None = None
    content: bytes | None = None
    problems: list[str] = field(default_factory=list)
    score: float = 0.0
    max_score: float = 0.0
    grades: dict[str, float] = field(default_factory=dict)
    feedback: Path | None = None
    grade_max: dict[str, float] = field(default_factory=dict)
    status: str = ""  # "graded" (this run), "unchanged" (kept from an earlier run) or "not graded"
    key: str | None = None
    name: str = ""
    flags: list[str] = field(default_factory=list)  # what its code does that no answer needs (``flags``)
    entry: str = ""  # the entry of the submissions folder it came from (file or folder name)
    mtime: float = 0.0  # the notebook file's modification time (0 in a zip): orders one student's own uploads
    display_name: str = ""  # the student's name: the roster's, else what the LMS file name says
    matched_by: str = ""  # how it was matched to the roster (``roster.match``); "" without a roster
    section: str = ""
    late_flag: bool = False  # the LMS marked it late (Canvas's ``_LATE_``)
    superseded: list[str] = field(default_factory=list)  # earlier uploads of the same student and tutorial, not graded
    lateness: object = None  # ``late.Lateness`` once a term is applied
    missing_assignment: str = ""  # a roster student's row for a tutorial they did not hand in
    awaiting: list[str] = field(default_factory=list)  # graded cells (written answers) formgrader has not scored yet

    def __post_init__(self):
        self.name = self.name or self.student

    @property
    def final(self) -> float:
        """The score after the late policy (``lateness.final``); the raw score before one is applied."""
        return self.lateness.final if self.lateness is not None else self.score

    @property
    def score_text(self) -> str:
        """The score as the reports show it: ``score/max``, "not graded" for a submission that
        could not be, ``0/max`` for a roster student's row with no submission."""
        if self.missing_assignment:
            return f"0/{self.max_score:g}"
        return f"{self.score:g}/{self.max_score:g}" if self.assignment else "not graded"


class IntakeError(Exception):
    """A submission (or part of one) that cannot be read; the message is its reason."""


# --------------------------------------------------------------------------------------
# Student ids


def student_name(entry_name: str, is_dir: bool) -> str:
    """The student id an entry of the submissions folder stands for: a folder's whole name,
    a file's name without its extension (``jane.doe.ipynb`` -> ``jane.doe``, ``essay.docx``
    -> ``essay``)."""
    if not is_dir:
        for suffix in (NOTEBOOK_SUFFIX, ZIP_SUFFIX):
            if entry_name.lower().endswith(suffix) and len(entry_name) > len(suffix):
                return entry_name[: -len(suffix)]
        stem, dot, extension = entry_name.rpartition(".")
        if dot and stem and 0 < len(extension) <= 5 and extension.isalnum():
            return stem
    return entry_name


def gradebook_id(name: str) -> str:
    """``name`` made safe for nbgrader (used in folder names and file globs) and any file
    system, reversibly: letters and digits of any script, ``-``, ``_``, ``@``, inner dots and
    inner spaces stay; every other character becomes ``%XX`` per UTF-8 byte (``%`` itself
    included, so two different names never give one id). Names longer than 120 bytes keep
    their start and get a hash of the whole name. ``unescape_id`` reverses short ids."""
    out = []
    for i, ch in enumerate(name):
        edge = i == 0 or i == len(name) - 1
        if ch.isalnum() and unicodedata.category(ch)[0] in "LN" or ch in "-_@" or (ch in ". " and not edge):
            out.append(ch)
        else:
            out.extend(f"%{byte:02X}" for byte in ch.encode("utf-8", "surrogateescape"))
    ident = "".join(out) or "%"  # "%" alone: the empty name (no real name escapes to it)
    if len(ident.encode()) > 120:
        digest = hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:16]
        ident = ident.encode()[:96].decode("utf-8", "ignore") + "~" + digest
    return ident


def unescape_id(ident: str) -> str:
    """The name a short ``gradebook_id`` came from."""
    from urllib.parse import unquote

    return "" if ident == "%" else unquote(ident, errors="surrogateescape")


def display(name: str) -> str:
    """A name read from the file system as text: bytes that are not UTF-8 (a Latin-1 LMS
    export unzipped on Linux) shown as ``\\xe9`` instead of failing every later write."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _look_alike_key(name: str) -> str:
    return unicodedata.normalize("NFKC", name).casefold().strip()


# --------------------------------------------------------------------------------------
# Reading files and zips


def _mb(n: float) -> str:
    return f"{n / 2**20:.3g} MB"


HARD_LINK = "is a hard link (a second name for a file stored elsewhere): links are not followed, submit the file itself"
"""A regular file with more than one name (``st_nlink > 1``) is read as a symbolic link is: not
at all. ``O_NOFOLLOW`` does not see a hard link, and through one a submission can be the
instructor's solution notebook, the gradebook, or a file that changes after it was checked."""


def read_regular_file(path: Path, limit_bytes: int) -> bytes:
    """The bytes of ``path`` if it is a regular file (not followed if a symbolic link, not read
    if a hard link) of at most ``limit_bytes``; ``IntakeError`` otherwise. Never blocks on a
    pipe or device."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except OSError as error:
        if os.path.islink(path):
            raise IntakeError("is a symbolic link: links are not followed, submit the file itself") from None
        raise IntakeError(f"cannot be opened ({error.strerror})") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IntakeError("is a folder, not a notebook")
        if not stat.S_ISREG(info.st_mode):
            raise IntakeError("is not a regular file (a pipe, device or socket)")
        if info.st_nlink > 1:
            raise IntakeError(HARD_LINK)
        if info.st_size > limit_bytes:
            raise IntakeError(f"is {_mb(info.st_size)}, over the {_mb(limit_bytes)} limit for one submission")
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read(limit_bytes + 1)
    finally:
        os.close(fd)
    if len(data) > limit_bytes:
        raise IntakeError(f"is over the {_mb(limit_bytes)} limit for one submission")
    return data


# zipfile can read these; Deflate64 (9), which Windows' built-in zip writes for large files,
# and other methods raise NotImplementedError.
_ZIP_METHODS = {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA}
_ZIP_METHOD_NAMES = {9: "Deflate64", 6: "Implode", 97: "WavPack", 98: "PPMd", 99: "AES encryption", 93: "Zstandard"}


def member_name(member: zipfile.ZipInfo) -> str:
    """A zip member's name as its author wrote it. Without the UTF-8 flag (bit 11) ``zipfile``
    decodes names as CP437, but Info-ZIP's ``zip`` on Linux and macOS's Archive Utility store
    UTF-8 without setting it: ``Ελένη/hw.ipynb`` would read ``╬ò╬╗╬¡╬╜╬╖/hw.ipynb``. Such a name
    is read as UTF-8 when its bytes are valid UTF-8, else kept as CP437 (Windows' own zips)."""
    if member.flag_bits & 0x800:
        return member.filename
    try:
        return member.filename.encode("cp437").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return member.filename


def _wanted_member(name: str) -> bool:
    parts = name.replace("\\", "/").split("/")
    return (
        name.lower().endswith(NOTEBOOK_SUFFIX)
        and "__MACOSX" not in parts
        and ".ipynb_checkpoints" not in parts
        and not parts[-1].startswith(".")
    )


def _zip_entries(raw: bytes) -> int:
    """How many entries a zip's central directory announces, read from its end record
    (zip64 included) before ``zipfile`` builds one object per entry; -1 if not found."""
    tail = raw[-(65536 + 22):]
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) < at + 22:
        return -1
    entries = struct.unpack_from("<H", tail, at + 10)[0]
    locator = tail.rfind(b"PK\x06\x07", 0, at)
    if entries == 0xFFFF and locator >= 0 and len(tail) >= locator + 20:
        offset = struct.unpack_from("<Q", tail, locator + 8)[0]
        if raw[offset:offset + 4] == b"PK\x06\x06" and len(raw) >= offset + 40:
            entries = struct.unpack_from("<Q", raw, offset + 32)[0]
    return entries


def read_zip(path: Path, limits: IntakeLimits) -> tuple[list[tuple[str, bytes]], list[str]]:
    """The notebooks in the zip at ``path`` as (member name, bytes), read in memory, and the
    problems with members that could not be read. ``IntakeError`` if the zip itself cannot."""
    raw = read_regular_file(path, int(limits.zip_mb * 2**20))
    entries = _zip_entries(raw)
    if entries > limits.zip_entries:
        raise IntakeError(f"lists {entries} files (limit {limits.zip_entries}): not read")
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError, OSError):
        raise IntakeError("is not a valid zip file") from None
    notebooks, problems = [], []
    member_limit, total_left = int(limits.notebook_mb * 2**20), int(limits.zip_total_mb * 2**20)
    with archive:
        members = [m for m in archive.infolist() if not m.is_dir() and _wanted_member(member_name(m))]
        if len(members) > limits.notebooks:
            problems.append(f"holds {len(members)} notebooks: only the first {limits.notebooks} were read")
            members = members[: limits.notebooks]
        for member in members:
            label = f"member {member_name(member)!r}"
            if member.flag_bits & 0x1:
                problems.append(f"{label} is password-protected: submit a zip without a password")
                continue
            if member.compress_type not in _ZIP_METHODS:
                method = _ZIP_METHOD_NAMES.get(member.compress_type, f"method {member.compress_type}")
                problems.append(
                    f"{label} is compressed with {method}, which the grader cannot read: submit the .ipynb itself, or a zip"
                    " made with 'zip' or 7-Zip's Deflate"
                )
                continue
            if member.file_size > min(member_limit, total_left):
                problems.append(f"{label} is {_mb(member.file_size)} uncompressed, over the {_mb(member_limit)} limit")
                continue
            if member.file_size > 2**20 and member.file_size > limits.zip_ratio * max(member.compress_size, 1):
                problems.append(f"{label} expands {member.file_size / max(member.compress_size, 1):.0f}x: not read (zip bomb?)")
                continue
            try:
                with archive.open(member) as f:  # the header may lie about the size: read at most the limit
                    data = f.read(min(member_limit, total_left) + 1)
            except Exception as error:  # BadZipFile, zlib.error, lzma.LZMAError, EOFError...: this member's reason
                problems.append(f"{label} cannot be read ({type(error).__name__}: {str(error)[:80]})")
                continue
            if len(data) > min(member_limit, total_left):
                problems.append(f"{label} is larger than its header says and over the limit: not read")
                continue
            total_left -= len(data)
            notebooks.append((member_name(member), data))
    return notebooks, problems


def _folder_notebooks(folder: Path, limits: IntakeLimits) -> tuple[list[tuple[str, Path]], list[str]]:
    """Notebooks under a student's folder (relative name, path), never following links."""
    found, problems = [], []
    for top, dirs, files in os.walk(folder, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__MACOSX")
        for name in sorted(files):
            if name.lower().endswith(NOTEBOOK_SUFFIX) and not name.startswith("."):
                found.append((str((Path(top) / name).relative_to(folder)), Path(top) / name))
        for name in dirs:  # a folder named like a notebook is worth a word
            if name.lower().endswith(NOTEBOOK_SUFFIX):
                problems.append(f"{(Path(top) / name).relative_to(folder)} is a folder, not a notebook")
    if len(found) > limits.notebooks:
        problems.append(f"holds {len(found)} notebooks: only the first {limits.notebooks} were read")
        found = found[: limits.notebooks]
    return found, problems


# --------------------------------------------------------------------------------------
# Recognising a notebook


def grade_ids(notebook: dict) -> set[str]:
    """The nbgrader grade ids in a notebook's cells (only well-formed ones)."""
    ids = set()
    for cell in notebook.get("cells", []) if isinstance(notebook, dict) else []:
        grade_id = nbgrader_meta(cell).get("grade_id")
        if isinstance(grade_id, str) and grade_id:
            ids.add(grade_id)
    return ids


def identify(content: bytes, filename: str, known: dict[str, set[str]]) -> str:
    """The assignment a notebook's bytes belong to, by its nbgrader cell ids, else by its
    file name; ``IntakeError`` with the reason otherwise."""
    try:
        text = content.decode("utf-8-sig")
        notebook = json.loads(text)
        if not isinstance(notebook, dict) or not isinstance(notebook.get("cells", []), list):
            raise ValueError("its JSON is not a notebook")
        with warnings.catch_warnings():  # what Jupyter opens is read; repair() normalises it
            warnings.simplefilter("ignore")
            nbformat.reads(text, as_version=4, capture_validation_error={})  # never logs student text
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise IntakeError(f"is not valid notebook JSON ({type(error).__name__}: {str(error)[:80]})") from None
    except RecursionError:
        raise IntakeError("is not a valid notebook (nested too deeply)") from None
    except Exception as error:  # nbformat validation errors and anything odd inside
        lines = str(error).splitlines() or [type(error).__name__]
        raise IntakeError(f"is not a valid notebook ({lines[0][:100]})") from None
    ids = grade_ids(notebook)
    overlap = {name: len(ids & cells) for name, cells in known.items()}
    best = max(sorted(overlap), key=overlap.get, default=None)
    if best and overlap[best] > 0:
        return best
    stem = Path(filename).name[: -len(NOTEBOOK_SUFFIX)] if filename.lower().endswith(NOTEBOOK_SUFFIX) else filename
    if stem in known:
        return stem
    raise IntakeError("could not tell which tutorial this is (no graded cells recognised)")


# --------------------------------------------------------------------------------------
# The folder


def collect(folder: Path, known: dict[str, set[str]], limits: IntakeLimits | None = None,
            separate: bool = True) -> list[Submission]:
    """Every submission in ``folder``, gradable (``assignment`` and ``content`` set) or not
    (``problems`` says why). ``known``: per assignment, its graded cells' ids.

    Gradebook ids are unique per assignment: when two notebooks claim one student and
    tutorial (``bob.ipynb`` and ``bob.zip``, two notebooks in ``bob/``), both are graded,
    the second as ``bob~2``, and both say so. Ids that differ only in case or Unicode form
    are kept apart and flagged. With ``separate`` False that is left to the caller
    (``separate_claims``), which first tells resubmissions apart (``class_list``)."""
    limits = limits or IntakeLimits()
    folder = Path(folder)
    found: list[Submission] = []
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if entry.name in SYSTEM_FILES or entry.name.startswith("._"):
            continue  # written by the operating system or Jupyter, never by a student
        try:
            found += _read_entry(entry, known, limits)
        except Exception as error:  # the boundary: an entry nobody foresaw still gets a reason
            name = student_name(entry.name, False)
            reason = error if isinstance(error, IntakeError) else f"could not be read ({type(error).__name__}: {error})"
            found.append(Submission(gradebook_id(name), display(entry.name), name=display(name), entry=entry.name,
                                    problems=[f"{display(entry.name)} {reason}"[:300]]))
    if separate:
        separate_claims(found)
    return found


SYSTEM_FILES = {".DS_Store", ".ipynb_checkpoints", ".Trashes", ".Spotlight-V100", ".fseventsd", "Thumbs.db", "desktop.ini"}
"""Entries of a submissions folder that no student wrote: skipped without a word (as are
macOS's ``._*`` resource forks). Any other hidden entry gets a row."""


def _read_entry(entry: os.DirEntry, known: dict[str, set[str]], limits: IntakeLimits) -> list[Submission]:
    is_dir = entry.is_dir(follow_symlinks=False)
    raw = student_name(entry.name, is_dir)
    ident, name, label = gradebook_id(raw), display(raw), display(entry.name)
    results: list[Submission] = []
    notes: list[str] = []  # about the entry as a whole: told with its notebooks if any was read

    def problem(text: str) -> None:
        results.append(Submission(ident, label, name=name, problems=[text], entry=entry.name))

    def add(source: str, filename: str, content: bytes, path: Path | None = None) -> None:
        try:
            assignment = identify(content, filename, known)
        except IntakeError as error:
            problem(f"{source} {error}")
            return
        try:
            mtime = os.lstat(path).st_mtime if path is not None else 0.0
        except OSError:
            mtime = 0.0
        results.append(Submission(ident, source, assignment, content, name=name, entry=entry.name, mtime=mtime))

    if entry.is_symlink():
        problem(f"{label} is a symbolic link: links are not followed, submit the file itself")
    elif not is_dir and entry.stat(follow_symlinks=False).st_nlink > 1:
        problem(f"{label} {HARD_LINK}")
    elif entry.name.startswith("."):
        problem(f"{label} is hidden (its name starts with '.'): not graded; rename it if it is a submission")
    elif is_dir:
        notebooks, found = _folder_notebooks(Path(entry.path), limits)
        notes += [f"{label}/: {display(note)}" for note in found]
        if not notebooks and not notes:
            problem(f"{label}/ holds no .ipynb notebook")
        for relative, path in notebooks:
            source = f"{label}/{display(relative)}"
            try:
                content = read_regular_file(path, int(limits.notebook_mb * 2**20))
            except IntakeError as error:
                problem(f"{source} {error}")
                continue
            add(source, path.name, content, path)
    elif entry.name.lower().endswith(NOTEBOOK_SUFFIX):
        add(label, entry.name, read_regular_file(Path(entry.path), int(limits.notebook_mb * 2**20)), Path(entry.path))
    elif entry.name.lower().endswith(ZIP_SUFFIX):
        members, found = read_zip(Path(entry.path), limits)
        notes += [f"{label}: {note}" for note in found]
        if not members and not notes:
            problem(f"{label} holds no .ipynb notebook")
        for member, content in members:
            add(f"{label}:{member}", member.replace("\\", "/").split("/")[-1], content)
    else:
        problem(f"{label} is not a notebook (.ipynb) or a zip")
    graded = [sub for sub in results if sub.assignment is not None]
    for sub in graded:
        sub.problems += notes
    if not graded:
        for note in notes:
            problem(note)
    return results


def separate_claims(submissions: list[Submission]) -> None:
    """Give every (student, assignment) pair one submission: a second claim becomes
    ``id~2`` (``~`` is escaped in real ids, so no student has that id), and both are told.
    Flag ids that look alike (same after Unicode normalisation and case folding)."""
    claims: dict[tuple[str, str], list[Submission]] = {}
    for sub in submissions:
        if sub.assignment is not None:
            claims.setdefault((sub.student, sub.assignment), []).append(sub)
    for (ident, assignment), subs in claims.items():
        if len(subs) < 2:
            continue
        subs.sort(key=lambda s: s.source)
        sources = ", ".join(s.source for s in subs)
        for n, sub in enumerate(subs, start=1):
            if n > 1:
                sub.student = f"{ident}~{n}"
            sub.problems.append(
                f"{len(subs)} notebooks for {assignment} from {sub.name} ({sources}): all graded;"
                f" this one ({sub.source}) is in the gradebook as {sub.student}"
            )
    by_look: dict[str, set[str]] = {}
    for sub in submissions:
        by_look.setdefault(_look_alike_key(sub.name), set()).add(sub.name)
    for sub in submissions:
        others = sorted(by_look[_look_alike_key(sub.name)] - {sub.name})
        if others:
            sub.problems.append(f"student id {sub.name!r} looks like {', '.join(map(repr, others))}: graded apart")
