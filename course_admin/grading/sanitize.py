"""Making what students wrote inert before an instructor's browser shows it: whole notebooks.

Autograded notebooks are rendered by nbgrader's formgrader as HTML on the Jupyter server's
own origin, and the feedback HTML is made from them: a ``<script>``, an ``onerror=``, a
``javascript:`` link or a ``%%javascript`` output from a student would run in the
instructor's session and could call the Jupyter REST API as the instructor.

- ``sanitize_notebook(nb)`` cleans a notebook in place: markdown and raw cells, outputs,
  attachments, the widget state and the few metadata fields templates print unescaped.
- ``SanitizeNotebook`` runs it as an nbconvert preprocessor, and ``feedback_config(config)``
  makes nbgrader's ``GenerateFeedback`` do the same before it renders
  (``HTMLExporter.sanitize_html`` alone is not enough: nbgrader's feedback template renders
  markdown cells without nbconvert's ``clean_html``; formgrader's template too).

The pieces it is made of: ``html_cleaning`` (HTML outputs, raw cells, SVG), ``markdown_cleaning``
(markdown cells and outputs, grader comments, math) and ``escaping`` (names and messages in the
notes, and for a CSV file, the terminal and a markdown table).
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from nbconvert.preprocessors import Preprocessor
from traitlets import Bool

from course_admin.grading.escaping import plain_text
from course_admin.grading.html_cleaning import sanitize_html, sanitize_svg
from course_admin.grading.markdown_cleaning import BLANK_PNG, REMOVED, clean_math, sanitize_markdown

__all__ = ["SanitizeNotebook", "feedback_config", "sanitize_notebook"]

# --------------------------------------------------------------------------------------
# What may stay

KEPT_MIME = frozenset({"text/plain", "image/png", "image/jpeg", "text/latex", "application/json"})
"""Output data kept as it is: nbconvert and JupyterLab render these escaped or as images."""
CLEANED_MIME = frozenset({"text/html", "text/markdown", "image/svg+xml"})
"""Output data kept after cleaning. Every other MIME type (``application/javascript``,
``text/javascript``, widget views, ``text/vnd.mermaid``, anything unknown) is removed."""
ATTACHMENT_MIME = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp"})
"""Cell attachments kept as they are; ``image/svg+xml`` is cleaned, the rest removed."""


# --------------------------------------------------------------------------------------
# Notebooks


def _text(value: Any) -> str:
    """A notebook multiline string (str or list of str) as one str; TypeError otherwise."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(part, str) for part in value):
        return "".join(value)
    raise TypeError(f"not text: {type(value).__name__}")


def _base64(value: Any) -> bool:
    """Whether ``value`` is base64 text (what an image in a notebook is): nothing else can end
    up in the ``data:`` URL nbconvert builds from it."""
    return isinstance(value, str) and re.fullmatch(r"[A-Za-z0-9+/=\s]*", value) is not None


def _count(value: Any) -> int | None:
    """An execution count as templates may print it (unescaped): an integer, else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _describe(notes: set[str], where: str) -> list[str]:
    return [f"{where}: {note}" for note in sorted(notes)]


def _sanitize_attachments(cell: dict, label: str, out: list[str]) -> None:
    attachments = cell.get("attachments")
    if attachments is None:
        return
    if not isinstance(attachments, dict):
        del cell["attachments"]
        out.append(f"{label}: unreadable attachments removed")
        return
    for name in list(attachments):
        bundle = attachments[name]
        if not isinstance(bundle, dict):
            attachments[name] = {"image/png": BLANK_PNG}
            out.append(f"{label}: unreadable attachment {plain_text(str(name))!r} replaced by a blank image")
            continue
        for mime in list(bundle):
            data = bundle[mime]
            if mime in ATTACHMENT_MIME and _base64(data):
                continue
            if mime == "image/svg+xml" and isinstance(data, str):
                notes: set[str] = set()
                try:
                    svg = base64.b64decode(data, validate=False).decode("utf-8")
                    cleaned = sanitize_svg(svg, notes)
                except (binascii.Error, UnicodeDecodeError, ValueError):
                    cleaned, notes = "", {"an unreadable SVG removed"}
                if cleaned == svg:
                    continue
                out += _describe(notes, f"{label}, attachment {plain_text(str(name))!r}")
                if cleaned:
                    bundle[mime] = base64.b64encode(cleaned.encode("utf-8")).decode("ascii")
                    continue
            else:
                out.append(f"{label}: {mime} attachment {plain_text(str(name))!r} removed")
            del bundle[mime]
        if not bundle:
            bundle["image/png"] = BLANK_PNG


def _missing_attachments(cell: dict, source: str, label: str, out: list[str]) -> None:
    """A reference to an attachment the cell does not have stops nbconvert (formgrader's page
    and the feedback fail): give it a blank image."""
    names = set(re.findall(r"attachment:([^\s)\"'>]+)", source))
    if not names:
        return
    attachments = cell.setdefault("attachments", {})
    for name in sorted(names - set(attachments)):
        attachments[name] = {"image/png": BLANK_PNG}
        out.append(f"{label}: missing attachment {plain_text(name)!r} replaced by a blank image")


def _sanitize_output(output: Any, label: str, out: list[str]) -> Any:
    """The output cleaned, or None to drop it."""
    if not isinstance(output, dict):
        out.append(f"{label}: an unreadable output removed")
        return None
    kind = output.get("output_type")
    if kind == "stream":
        output["text"] = _text(output.get("text", ""))
        if output.get("name") not in ("stdout", "stderr"):
            output["name"] = "stdout"
        return output
    if kind == "error":
        output["ename"] = str(output.get("ename", ""))
        output["evalue"] = str(output.get("evalue", ""))
        trace = output.get("traceback", [])
        output["traceback"] = [str(line) for line in trace] if isinstance(trace, list) else [str(trace)]
        return output
    if kind not in ("display_data", "execute_result"):
        out.append(f"{label}: an output of unknown type removed")
        return None
    if kind == "execute_result":
        output["execution_count"] = _count(output.get("execution_count"))
    if not isinstance(output.get("metadata"), dict):
        output["metadata"] = {}
    data = output.get("data")
    if not isinstance(data, dict):
        data = output["data"] = {}
    removed = []
    for mime in list(data):
        notes: set[str] = set()
        try:
            if mime in KEPT_MIME:
                if mime == "text/latex":
                    data[mime] = clean_math(_text(data[mime]), notes)
                elif mime in ("image/png", "image/jpeg"):
                    data[mime] = _text(data[mime])
                    if not _base64(data[mime]):
                        removed.append(mime)
                elif mime != "application/json":
                    data[mime] = _text(data[mime])
            elif mime == "text/html":
                data[mime] = sanitize_html(_text(data[mime]), notes)
            elif mime == "text/markdown":
                data[mime] = sanitize_markdown(_text(data[mime]), notes)
            elif mime == "image/svg+xml":
                data[mime] = sanitize_svg(_text(data[mime]), notes)
            else:
                removed.append(mime)
        except (TypeError, ValueError):
            removed.append(mime)
        out += _describe(notes, f"{label}, {mime} output")
        if mime in data and mime not in removed and data[mime] == "" and mime in CLEANED_MIME and notes:
            removed.append(mime)
    for mime in removed:
        del data[mime]
        if isinstance(output.get("metadata"), dict):
            output["metadata"].pop(mime, None)
    if removed:
        out.append(f"{label}: {', '.join(plain_text(str(m)) for m in removed)} output removed")
        if not data:
            data["text/plain"] = REMOVED.format(what=", ".join(plain_text(str(m)) for m in removed))
    return output


def _sanitize_nbgrader(cell: dict, label: str, out: list[str]) -> None:
    """nbgrader's templates print ``grade_id`` unescaped (formgrader puts it in an ``id=""``)
    and render ``comment`` as markdown: a grade id with HTML characters is not nbgrader's."""
    metadata = cell.get("metadata")
    if not isinstance(metadata, dict):
        cell["metadata"] = {}
        return
    info = metadata.get("nbgrader")
    if info is None:
        return
    grade_id = info.get("grade_id") if isinstance(info, dict) else None
    if not isinstance(info, dict) or (grade_id is not None and not re.fullmatch(r"[^<>\"'&`\s\x00-\x1f\x7f]+", str(grade_id))):
        del metadata["nbgrader"]
        out.append(f"{label}: nbgrader metadata with HTML in it removed")
        return
    if "comment" in info:
        if isinstance(info["comment"], str):
            notes: set[str] = set()
            info["comment"] = sanitize_markdown(info["comment"], notes)
            out += _describe(notes, f"{label}, grader comment")
        elif info["comment"] is not None:
            info["comment"] = None


def _sanitize_cell(cell: Any, label: str, out: list[str]) -> None:
    if not isinstance(cell, dict):
        raise TypeError("not a cell")
    _sanitize_nbgrader(cell, label, out)
    kind = cell.get("cell_type")
    if kind in ("markdown", "raw"):
        source = _text(cell.get("source", ""))
        _sanitize_attachments(cell, label, out)
        notes: set[str] = set()
        if kind == "markdown":
            _missing_attachments(cell, source, label, out)
            cell["source"] = sanitize_markdown(source, notes, cell.get("attachments"))
        else:
            cell["source"] = sanitize_html(source, notes)
        out += _describe(notes, f"{label} ({kind})")
    elif kind == "code":
        cell["source"] = _text(cell.get("source", ""))
        cell["execution_count"] = _count(cell.get("execution_count"))
        outputs = cell.get("outputs", [])
        if not isinstance(outputs, list):
            outputs = []
            out.append(f"{label}: unreadable outputs removed")
        kept = []
        for output in outputs:
            try:
                cleaned = _sanitize_output(output, label, out)
            except Exception as error:  # never stop on one odd output: drop it
                cleaned = None
                out.append(f"{label}: an output that could not be cleaned removed ({type(error).__name__})")
            if cleaned is not None:
                kept.append(cleaned)
        cell["outputs"] = kept
        if "attachments" in cell:
            del cell["attachments"]
            out.append(f"{label}: attachments on a code cell removed")
    else:
        raise TypeError(f"unknown cell type {kind!r}")


def sanitize_notebook(nb) -> list[str]:
    """Make a v4 notebook (``nbformat.NotebookNode`` or plain dict) inert, in place, for
    formgrader, the feedback HTML and JupyterLab; returns what was removed, one short note
    each (``"cell 4, text/html output: <script> removed"``), empty if nothing was.

    - Markdown cells: ``sanitize_markdown`` (scripts, event handlers, iframes, forms,
      ``javascript:``/``vbscript:``/``data:`` links removed; formatting, images, tables, code
      and math kept). Raw cells: ``sanitize_html``.
    - Outputs: ``text/plain``, ``image/png``, ``image/jpeg``, ``text/latex``,
      ``application/json``, stream and error outputs kept (rendered escaped); ``text/html``,
      ``text/markdown`` and ``image/svg+xml`` cleaned; every other type (JavaScript, widget
      views...) removed, with a ``text/plain`` note if nothing was left.
    - Attachments: images kept, SVG cleaned, anything else replaced by a blank image.
    - Notebook metadata: the widget state removed (it renders HTML widgets). Execution counts
      that are not integers and nbgrader grade ids with HTML characters (both printed
      unescaped by nbconvert/nbgrader templates) removed.

    Idempotent; never raises: a cell that cannot be read is replaced by a note.
    """
    out: list[str] = []
    try:
        metadata = nb.get("metadata")
        if isinstance(metadata, dict):
            if "widgets" in metadata:
                del metadata["widgets"]
                out.append("notebook: widget state removed")
        elif metadata is not None:
            nb["metadata"] = {}
        cells = nb.get("cells")
        if not isinstance(cells, list):
            nb["cells"] = cells = []
    except Exception as error:  # not even a mapping
        return [f"notebook: unreadable ({type(error).__name__})"]
    for index, cell in enumerate(cells):
        label = f"cell {index + 1}"
        try:
            _sanitize_cell(cell, label, out)
        except Exception as error:
            from nbformat.v4 import new_markdown_cell

            cells[index] = new_markdown_cell(REMOVED.format(what="a cell that could not be read"))
            out.append(f"{label}: unreadable cell replaced by a note ({type(error).__name__})")
    return out


class SanitizeNotebook(Preprocessor):
    """nbconvert preprocessor running ``sanitize_notebook`` (for ``GenerateFeedback``). Enabled
    by default: nbconvert's ``register_preprocessor``, which nbgrader's converters use, leaves
    a preprocessor off unless it says otherwise."""

    enabled = Bool(True, help="run sanitize_notebook on every notebook").tag(config=True)

    def preprocess(self, nb, resources):
        for note in sanitize_notebook(nb):
            self.log.info("sanitize: %s", note)
        return nb, resources


def feedback_preprocessors(config) -> list:
    """``GenerateFeedback``'s preprocessors as ``config`` sets them, else nbgrader's default."""
    from nbgrader.converters import GenerateFeedback

    section = config.GenerateFeedback
    return list(section["preprocessors"] if "preprocessors" in section else GenerateFeedback.preprocessors.default())


def feedback_config(config, nbconvert_sanitizer: bool = False):
    """Make nbgrader's ``GenerateFeedback`` render nothing executable from the student, on a
    traitlets ``Config`` (changed in place and returned): adds ``SanitizeNotebook`` to
    ``GenerateFeedback.preprocessors`` (after nbgrader's own ``GetGrades`` and
    ``CSSHTMLHeaderPreprocessor``, or whatever the config already lists).

    ``HTMLExporter.sanitize_html = True`` alone is NOT enough: it drops JavaScript and widget
    outputs and cleans ``text/html``/``text/markdown`` outputs, but nbgrader's ``feedback``
    template overrides nbconvert's markdown-cell block without its ``clean_html``, so a
    ``<img onerror>`` or ``<script>`` in a markdown cell reaches the HTML as written (see
    tests/grading/test_sanitize.py). It is not needed either once ``SanitizeNotebook`` has run, and it
    costs: nbconvert's ``clean_html`` escapes every tag outside bleach's short default list,
    so a markdown output shows as literal ``<p>...</p>`` and an ``<img>`` in an HTML output as
    text. ``nbconvert_sanitizer=True`` sets it anyway, as a second layer.

    The feedback page keeps the template's own scripts: MathJax, loaded from a CDN with an
    inline configuration script. A Content-Security-Policy that forbids inline scripts or
    that CDN would stop the math from rendering; none of the student's content needs scripts.
    """
    preprocessors = feedback_preprocessors(config)
    if SanitizeNotebook not in preprocessors and "course_admin.grading.sanitize.SanitizeNotebook" not in preprocessors:
        preprocessors.append(SanitizeNotebook)
    config.GenerateFeedback.preprocessors = preprocessors
    if nbconvert_sanitizer:
        config.HTMLExporter.sanitize_html = True
    return config
