"""Reading a submissions folder (course_admin.grading.intake) without running anything: ids,
files that are not what they claim, zips, and notebooks made gradable again."""

import json
import os
import zipfile

import pytest
from hostile_submissions import _zip_bomb, _zip_with_patched_header

from course_admin.grading.intake import (
    IntakeError,
    IntakeLimits,
    collect,
    grade_ids,
    gradebook_id,
    read_regular_file,
    read_zip,
    student_name,
    unescape_id,
)
from course_admin.grading.notebook_repair import repair
from course_admin.grading.synthetic import TINY, student_version, synthetic_assignment


@pytest.fixture(scope="module")
def solution(tmp_path_factory):
    return json.loads(synthetic_assignment(tmp_path_factory.mktemp("solutions")).read_text())


@pytest.fixture(scope="module")
def released(solution):
    return student_version(solution)


@pytest.fixture(scope="module")
def known(released):
    return {TINY: grade_ids(released)}


NAMES = ["Иван", "李雷", "jane.doe", "jane", "a b", "a_b", "a%20b", "zz_victim", "zz_victim!", ".hidden", "trailing.",
         " lead", "x" * 70 + "1", "x" * 70 + "2", "", "~2", "e\u0301", "\u00e9", "a/b", "=cmd", "*", "[ab]"]


def test_gradebook_ids_are_distinct_safe_and_reversible():
    ids = [gradebook_id(name) for name in NAMES]
    assert len(set(ids)) == len(NAMES)
    for name, ident in zip(NAMES, ids, strict=True):
        assert "/" not in ident and not ident.startswith(".") and ident == ident.strip()
        assert not set(ident) & set("*?[]~") or (len(name) > 60 and "~" in ident)
        assert len(ident.encode()) <= 120
        if len(name) < 40:
            assert unescape_id(ident) == name
    assert [gradebook_id(n) for n in ("Иван", "jane.doe", "a b")] == ["Иван", "jane.doe", "a b"]  # kept as given


def test_student_names_keep_dots_and_only_drop_the_known_suffix():
    assert student_name("jane.doe.ipynb", False) == "jane.doe"
    assert student_name("jane.doe", True) == "jane.doe"
    assert student_name("bob.ZIP", False) == "bob"
    assert student_name("essay.docx", False) == "essay" and student_name("jane.doe", True) == "jane.doe"


def test_only_regular_files_are_read(tmp_path):
    (tmp_path / "ok.ipynb").write_bytes(b"{}")
    assert read_regular_file(tmp_path / "ok.ipynb", 10) == b"{}"
    os.mkfifo(tmp_path / "pipe.ipynb")
    os.symlink("/dev/zero", tmp_path / "zero.ipynb")
    os.symlink(tmp_path / "ok.ipynb", tmp_path / "link.ipynb")
    (tmp_path / "dir.ipynb").mkdir()
    (tmp_path / "big.ipynb").write_bytes(b"x" * 11)
    reasons = {}
    for name in ("pipe", "zero", "link", "dir", "big"):
        with pytest.raises(IntakeError) as error:
            read_regular_file(tmp_path / f"{name}.ipynb", 10)
        reasons[name] = str(error.value)
    assert "not a regular file" in reasons["pipe"]  # and it returned at once instead of waiting for a writer
    assert "symbolic link" in reasons["zero"] and "symbolic link" in reasons["link"]
    assert "is a folder" in reasons["dir"]
    assert "limit" in reasons["big"]


def test_a_hard_link_is_refused_like_a_symbolic_link(tmp_path, released, known):
    elsewhere = tmp_path / "instructor"
    elsewhere.mkdir()
    (elsewhere / "solution.ipynb").write_text(json.dumps(released))
    folder = tmp_path / "submissions"
    (folder / "carol").mkdir(parents=True)
    os.link(elsewhere / "solution.ipynb", folder / "bob.ipynb")
    os.link(elsewhere / "solution.ipynb", folder / "carol" / "hw.ipynb")
    os.symlink(elsewhere / "solution.ipynb", folder / "eve.ipynb")
    (folder / "ada.ipynb").write_text(json.dumps(released))
    with pytest.raises(IntakeError, match="is a hard link"):
        read_regular_file(folder / "bob.ipynb", 2**20)
    by_name = {s.name: s for s in collect(folder, known)}
    assert by_name["ada"].assignment == TINY and by_name["ada"].problems == []
    for name, source in (("bob", "bob.ipynb"), ("carol", "carol/hw.ipynb")):
        sub = by_name[name]
        assert sub.assignment is None and sub.content is None
        assert sub.problems == [f"{source} is a hard link (a second name for a file stored elsewhere): links are not"
                                " followed, submit the file itself"]
    # the wording follows the symbolic link's
    assert by_name["eve"].problems == ["eve.ipynb is a symbolic link: links are not followed, submit the file itself"]


def test_zips_are_read_with_limits(tmp_path, released):
    notebook = json.dumps(released).encode()
    with zipfile.ZipFile(tmp_path / "ok.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(f"folder/{TINY}.ipynb", notebook)
        archive.writestr(f"__MACOSX/folder/._{TINY}.ipynb", b"junk")
        archive.writestr(f"folder/.ipynb_checkpoints/{TINY}-checkpoint.ipynb", notebook)
    assert read_zip(tmp_path / "ok.zip", IntakeLimits()) == ([(f"folder/{TINY}.ipynb", notebook)], [])
    _zip_with_patched_header(tmp_path / "locked.zip", "a.ipynb", notebook, flag=1)
    _zip_with_patched_header(tmp_path / "d64.zip", "a.ipynb", notebook, method=9)
    _zip_bomb(tmp_path / "bomb.zip", "a.ipynb", 0.25)
    limits = IntakeLimits(notebook_mb=300, zip_total_mb=300, zip_ratio=100)
    for name, reason in [("locked", "password-protected"), ("d64", "Deflate64"), ("bomb", "expands")]:
        members, problems = read_zip(tmp_path / f"{name}.zip", limits)
        assert members == [] and len(problems) == 1 and reason in problems[0], (name, problems)
    members, problems = read_zip(tmp_path / "bomb.zip", IntakeLimits(notebook_mb=1))
    assert members == [] and "over the 1 MB limit" in problems[0]
    (tmp_path / "bad.zip").write_bytes(b"PK\x03\x04 broken")
    with pytest.raises(IntakeError, match="not a valid zip"):
        read_zip(tmp_path / "bad.zip", limits)


def test_collect_grades_every_claim_and_flags_look_alikes(tmp_path, released, known):
    text = json.dumps(released)
    for name in ("bob", "Bob", "twice", "Иван"):
        (tmp_path / f"{name}.ipynb").write_text(text)
    with zipfile.ZipFile(tmp_path / "twice.zip", "w") as archive:
        archive.writestr(f"{TINY}.ipynb", text)
    (tmp_path / "carol").mkdir()
    (tmp_path / "carol" / "hw.ipynb").write_text(text)
    (tmp_path / "carol" / "hw-Copy1.ipynb").write_text(text)
    (tmp_path / ".DS_Store").write_bytes(b"\0")
    subs = collect(tmp_path, known)
    by_id = {s.student: s for s in subs}
    assert sorted(by_id) == ["Bob", "bob", "carol", "carol~2", "twice", "twice~2", "Иван"]
    assert by_id["twice"].source == "twice.ipynb" and by_id["twice~2"].source == f"twice.zip:{TINY}.ipynb"
    assert all("2 notebooks for" in s.problems[0] for s in subs if s.name in ("twice", "carol"))
    assert "looks like 'bob'" in by_id["Bob"].problems[0] and by_id["Иван"].problems == []
    assert all(s.assignment == TINY for s in subs)


def test_an_entry_that_breaks_reading_becomes_a_reason(tmp_path, known, monkeypatch):
    (tmp_path / "good.ipynb").write_text("{}")
    (tmp_path / "weird.ipynb").write_text("{}")
    from course_admin.grading import intake as grading_intake

    original = grading_intake.identify

    def explode(content, filename, known):
        if filename == "weird.ipynb":
            raise ZeroDivisionError("nobody foresaw this")
        return original(content, filename, known)

    monkeypatch.setattr(grading_intake, "identify", explode)
    subs = {s.student: s for s in collect(tmp_path, known)}
    assert "ZeroDivisionError" in subs["weird"].problems[0] and "not a valid notebook" in subs["good"].problems[0]


def _cell(notebook, grade_id):
    return next(c for c in notebook["cells"] if (c["metadata"].get("nbgrader") or {}).get("grade_id") == grade_id)


def _repaired(content, released):
    data, notes = repair(json.dumps(content).encode(), released)
    return json.loads(data), notes


def test_repair_restores_metadata_and_keeps_the_answer(solution, released):
    full = student_version(solution, "add", "square")
    broken = json.loads(json.dumps(full))
    broken["cells"][0]["metadata"]["nbgrader"] = None
    broken["cells"][1]["metadata"]["nbgrader"] = {"grade_id": ["x"]}
    _cell(broken, "test_square")["metadata"]["nbgrader"]["schema_version"] = 0
    broken["metadata"]["kernelspec"] = {"name": "evil", "display_name": "x", "language": "python"}
    fixed, notes = _repaired(broken, released)
    assert _cell(fixed, "test_square")["metadata"]["nbgrader"] == _cell(released, "test_square")["metadata"]["nbgrader"]
    assert "nbgrader" not in fixed["cells"][0]["metadata"] and "nbgrader" not in fixed["cells"][1]["metadata"]
    assert fixed["metadata"]["kernelspec"]["name"] == "python3"
    assert sum("nbgrader cannot read" in n for n in notes) == 2 and any("'evil'" in n for n in notes)
    assert any("restored from the released notebook" in n for n in notes)


def test_repair_grades_the_answered_copy_of_a_copied_cell(solution, released):
    notebook = student_version(solution, "add")
    at = notebook["cells"].index(_cell(notebook, "square"))
    answered = json.loads(json.dumps(notebook["cells"][at]))
    answered["source"] = "def square(x):\n    return x * x"
    notebook["cells"].insert(at + 1, answered)
    fixed, notes = _repaired(notebook, released)
    graded = [c for c in fixed["cells"] if (c["metadata"].get("nbgrader") or {}).get("grade_id") == "square"]
    assert len(graded) == 1 and "".join(graded[0]["source"]) == answered["source"]
    assert any("appears 2 times" in n for n in notes)
    assert len({c["id"] for c in fixed["cells"]}) == len(fixed["cells"])


def test_repair_puts_deleted_tests_back_in_place(solution, released):
    notebook = student_version(solution, "add", "square")
    notebook["cells"].remove(_cell(notebook, "test_add"))
    fixed, notes = _repaired(notebook, released)
    order = [(c["metadata"].get("nbgrader") or {}).get("grade_id") for c in fixed["cells"]]
    assert order.index("test_add") == order.index("add") + 1
    assert notes == ["graded cells deleted, restored before grading: test_add"]


def test_zip_member_names_written_as_utf8_without_the_flag_are_read_as_utf8(tmp_path, released):
    """Info-ZIP's zip (Linux) and macOS store UTF-8 names without the UTF-8 flag; zipfile would
    read them as CP437 mojibake."""
    import struct

    name = f"Ελένη/{TINY}.ipynb"
    with zipfile.ZipFile(tmp_path / "Ελένη.zip", "w") as archive:
        archive.writestr(name, json.dumps(released))
    data = bytearray((tmp_path / "Ελένη.zip").read_bytes())
    for signature, flag_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):  # clear bit 11, as those tools write it
        at = data.index(signature)
        struct.pack_into("<H", data, at + flag_at, struct.unpack_from("<H", data, at + flag_at)[0] & ~0x800)
    (tmp_path / "Ελένη.zip").write_bytes(bytes(data))
    with zipfile.ZipFile(tmp_path / "Ελένη.zip") as archive:
        assert archive.infolist()[0].filename != name  # what zipfile alone makes of it
    assert [member for member, _ in read_zip(tmp_path / "Ελένη.zip", IntakeLimits())[0]] == [name]
