"""Markdown from students made inert, formatting kept: ``sanitize_markdown``, for markdown
cells, ``text/markdown`` outputs and grader comments.

HTML tags in markdown are kept, cleaned or removed with ``html_cleaning``'s allow-list; code
and math are kept as written. Markdown is rendered by nbconvert's own mistune renderer
(``render_markdown``), the one formgrader and feedback use: every cleaned markdown text is
rendered and checked (``html_cleaning.html_problems``), and if the check fails it is shown as
a code block instead.
"""

from __future__ import annotations

import re

from course_admin.grading.escaping import plain_text
from course_admin.grading.html_cleaning import (
    DROPPED_WITH_CONTENT,
    TAGS,
    bleach_cleaner,
    drop_element,
    html_problems,
    url_kind,
    url_ok,
)

__all__ = ["render_markdown", "sanitize_markdown"]

BLANK_PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
)
"""A 1x1 PNG: stands in for an attachment that was removed or missing (nbconvert stops the
whole page on a reference to a missing attachment)."""
REMOVED = "[removed by the grader: {what}]"


_FENCE = re.compile(r"^( {0,3})(`{3,}(?=[^`\n]*(?:\n|$))|~{3,})")
"""A fenced code block's opening line (a backtick fence's info string has no backtick)."""
_OPENER = re.compile(r"\\\\?\[|\\\\?\(|\\begin\{([A-Za-z]*\*?)\}|\\[\\`$()\[\]]|`+|\$\$|\$")
"""What starts math or an inline code span: ``\\(``/``\\\\(`` and ``\\[``/``\\\\[``
(JupyterLab's and nbconvert's delimiters), ``\\begin{env}``, a backslash escape (skipped), a
run of backticks, ``$$``, ``$``."""
MARKDOWN_LIMIT = 100_000
"""Markdown longer than this (characters), or with many unclosed ``\\begin{...}`` (nbconvert's
renderer takes quadratic time on them), is not cleaned piece by piece: it is shown as code."""


def _segments(text: str) -> list[tuple[str, str]]:
    """Split markdown into ("text" | "code" | "math", piece): fenced code blocks, code spans
    (backslash escapes respected) and math (``$...$``, ``$$...$$``, ``\\(...\\)``,
    ``\\[...\\]``, ``\\begin{env}...\\end{env}``) as nbconvert's renderer finds them."""
    pieces: list[tuple[str, str]] = []
    lines = text.splitlines(keepends=True)
    i, block = 0, []

    def flush():
        if block:
            pieces.extend(_inline_segments("".join(block)))
            block.clear()

    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if fence:
            flush()
            marker = fence.group(2)
            closing = re.compile(r"^ {0,3}%s%s*[ \t]*(?:\n|$)" % (re.escape(marker), re.escape(marker[0])))  # noqa: UP031
            j = i + 1
            while j < len(lines) and not closing.match(lines[j]):
                j += 1
            pieces.append(("code", "".join(lines[i : j + 1])))
            i = j + 1
            continue
        block.append(lines[i])
        i += 1
    flush()
    return pieces


def _inline_segments(text: str) -> list[tuple[str, str]]:
    """Code spans and math in a run of markdown lines, in one pass: each closing delimiter is
    searched once at most (a closer not found after one opener is not after a later one)."""
    pieces, start, pos = [], 0, 0
    unclosed: set[str] = set()
    while True:
        match = _OPENER.search(text, pos)
        if not match:
            break
        opener = match.group(0)
        if opener[0] == "\\" and len(opener) == 2 and opener[1] not in "([":
            pos = match.end()  # a backslash escape: the character is literal
            continue
        if opener[0] == "`":
            kind, closer = "code", re.compile(r"(?<!`)%s(?!`)" % opener)  # noqa: UP031
        elif opener == "$":
            kind, closer = "math", re.compile(r"(?<![$\\])\$")
        else:
            kind = "math"
            close = {"$$": "$$", "\\[": "\\]", "\\\\[": "\\\\]", "\\(": "\\)", "\\\\(": "\\\\)"}.get(opener)
            closer = re.compile(re.escape(close or f"\\end{{{match.group(1)}}}"))
        key = closer.pattern
        found = None if key in unclosed else closer.search(text, match.end() + (1 if opener == "$" else 0))
        if opener == "$" and found and "$" in text[match.end() : found.start()]:
            found = None
        if found is None:
            if opener != "$":
                unclosed.add(key)
            pos = match.end()
            continue
        if match.start() > start:
            pieces.append(("text", text[start : match.start()]))
        pieces.append((kind, text[match.start() : found.end()]))
        start = pos = found.end()
    if start < len(text):
        pieces.append(("text", text[start:]))
    return pieces


def clean_math(text: str, notes: set[str]) -> str:
    """Math as it was, except that no ``<`` can start an HTML tag (``a<b`` becomes ``a< b``:
    spaces do not count in TeX math) and ``\\href`` keeps only http(s) and in-page links."""
    cleaned = re.sub(r"<(?=[A-Za-z/!?])", "< ", text)

    def href(match: re.Match) -> str:
        target = match.group(1)
        if url_kind(target) in ("", "http", "https", "mailto"):
            return match.group(0)
        notes.add(f"{url_kind(target)}: link in math removed")
        return r"\href{#}"

    return re.sub(r"\\href\s*\{([^{}]*)\}", href, cleaned)


_MD_HTML = re.compile(
    r"(?P<comment><!--)"
    r"|(?P<decl><[!?][^<>]*>)"
    r"|(?P<autolink><[A-Za-z][A-Za-z0-9+.\-]{1,31}:[^\s<>]*>)"
    r"|(?P<email><[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*>)"
    r"|(?P<tag></?[A-Za-z][^<>]*>)"
    r"|(?P<lt><(?=[A-Za-z/!?]))",
)
"""HTML in markdown text, linear to scan: a tag ends at the first ``>`` and never contains a
``<`` (a ``>`` inside a quoted attribute value cuts the tag short; bleach then drops the
unfinished start). Whatever ``<`` could still open a tag is escaped as ``&lt;``."""


_LINK_DESTINATION = re.compile(r"(\]\(\s*)(<[^>\n]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)")
_REFERENCE = re.compile(r"^( {0,3}\[[^\]\n]+\]:[ \t]*\n?[ \t]*)(<[^>\n]*>|\S+)", re.M)


def _clean_tag(tag: str, notes: set[str]) -> str:
    """One HTML tag from markdown: kept as written if allowed with all its attributes, else as
    bleach rewrites it, or removed."""
    end = re.match(r"</\s*([A-Za-z][A-Za-z0-9]*)\s*>$", tag)
    if tag.startswith("</"):
        name = end.group(1).lower() if end else ""
        if name in TAGS:
            return f"</{name}>"
        if name:
            notes.add(f"<{plain_text(name)[:20]}> removed")
        return ""
    name = re.match(r"<([^\s/>]*)", tag).group(1).lower()
    if name not in TAGS:
        notes.add(f"<{plain_text(name)[:20]}> removed")
        return ""
    found: set[str] = set()
    cleaned = bleach_cleaner(found).clean(tag)
    cleaned = re.sub(r"</%s>$" % re.escape(name), "", cleaned)  # noqa: UP031 - bleach closes what it opens
    if not found and not html_problems(tag):
        return tag
    notes.update(found)
    return cleaned


def _clean_markdown_text(text: str, notes: set[str]) -> str:
    def destination(match: re.Match) -> str:
        target = match.group(2)
        bare = target[1:-1] if target.startswith("<") and target.endswith(">") else target
        bare = re.sub(r"\\(.)", r"\1", bare)
        if url_ok(bare, image=True):
            return match.group(0)
        notes.add(f"{url_kind(bare)}: link removed")
        return match.group(1) + "#"

    text = _LINK_DESTINATION.sub(destination, text)
    text = _REFERENCE.sub(destination, text)

    out, pos, unclosed = [], 0, set()
    while True:
        match = _MD_HTML.search(text, pos)
        if not match:
            break
        out.append(text[pos : match.start()])
        piece, kind, stop = match.group(0), match.lastgroup, match.end()
        if kind == "comment":
            if text.startswith(("<!-->", "<!--->"), match.start()):
                stop = match.start() + (5 if text.startswith("<!-->", match.start()) else 6)
            else:
                end = -1 if "-->" in unclosed else text.find("-->", match.end())
                if end < 0:
                    unclosed.add("-->")
                    out.append("&lt;")
                    pos = match.start() + 1
                    continue
                stop = end + 3
        elif kind == "decl":
            pass
        elif kind == "autolink":
            if url_ok(piece[1:-1], image=False):
                out.append(piece)
            else:
                notes.add(f"{url_kind(piece[1:-1])}: link removed")
                out.append("&lt;" + piece[1:])
        elif kind == "email":
            out.append(piece)
        elif kind == "tag":
            name = re.match(r"</?([^\s/>]*)", piece).group(1).lower()
            if name in DROPPED_WITH_CONTENT and not piece.startswith("</"):
                notes.add(f"<{name}> removed")
                stop = drop_element(text, match, name, unclosed) or stop
            else:
                out.append(_clean_tag(piece, notes))
        else:
            if re.match(r"<[A-Za-z]", text[match.start() : match.start() + 2]):
                notes.add("an unfinished HTML tag shown as text")
            out.append("&lt;")
        pos = stop
    out.append(text[pos:])
    return "".join(out)


def _clean_markdown_once(text: str, notes: set[str]) -> str:
    out = []
    for kind, piece in _segments(text):
        if kind == "text":
            out.append(_clean_markdown_text(piece, notes))
        elif kind == "math":
            out.append(clean_math(piece, notes))
        else:
            out.append(piece)
    return "".join(out)


def render_markdown(text: str, attachments: dict | None = None) -> str:
    """``text`` as nbconvert's HTML exporter renders a markdown cell (its mistune renderer with
    math), attachments replaced by a placeholder image."""
    from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath

    names = set(attachments or {}) | set(re.findall(r"attachment:([^\s)\"'>]+)", text))
    renderer = IPythonRenderer(escape=False, attachments={name: {"image/png": BLANK_PNG} for name in names})
    return MarkdownWithMath(renderer=renderer).render(text)


def _markdown_problems(text: str, attachments: dict | None = None) -> list[str]:
    try:
        rendered = render_markdown(text, attachments)
    except Exception as error:
        return [f"markdown that does not render ({type(error).__name__})"]
    return html_problems(rendered, generated=True)


def _too_complex(text: str) -> bool:
    if len(text) > MARKDOWN_LIMIT:
        return True
    begins = re.findall(r"\\begin\{([A-Za-z]*\*?)\}", text)
    return len(begins) > 20 and len(begins) - len(re.findall(r"\\end\{[A-Za-z]*\*?\}", text)) > 20


def _code_block(text: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text.rstrip()}\n{fence}\n"


def sanitize_markdown(text: str, notes: set[str] | None = None, attachments: dict | None = None) -> str:
    """Markdown without anything that could run once rendered, formatting kept: HTML tags and
    attributes outside the allow-list, comments, ``javascript:``/``vbscript:``/``data:`` links
    (markdown or HTML) are removed; code (fenced or inline) is kept as written and math too,
    except that a ``<`` in math gets a space after it when it could start a tag (TeX ignores
    it: ``$a<b$`` still renders a<b). The result is rendered with nbconvert's renderer and
    checked; if a problem remains, the text is shown as a code block instead."""
    notes = set() if notes is None else notes
    if _too_complex(text):
        notes.add("markdown too long or complex to check shown as code")
        return _code_block(text)
    cleaned, previous = text, None
    for _ in range(8):  # removing one thing can join two others: clean until nothing changes
        if cleaned == previous:
            break
        previous, cleaned = cleaned, _clean_markdown_once(cleaned, notes)
    if cleaned == previous and not _markdown_problems(cleaned, attachments):
        return cleaned
    notes.add("markdown that could not be cleaned shown as code")
    fallback = _code_block(cleaned)
    if not _markdown_problems(fallback, attachments):
        return fallback
    return REMOVED.format(what="markdown that could not be made safe")
