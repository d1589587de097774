"""Making what students wrote inert before an instructor's browser or spreadsheet shows it.

Autograded notebooks are rendered by nbgrader's formgrader as HTML on the Jupyter server's
own origin, and the feedback HTML is made from them: a ``<script>``, an ``onerror=``, a
``javascript:`` link or a ``%%javascript`` output from a student would run in the
instructor's session and could call the Jupyter REST API as the instructor.

- ``sanitize_notebook(nb)`` cleans a notebook in place: markdown and raw cells, outputs,
  attachments, the widget state and the few metadata fields templates print unescaped.
- ``feedback_config(config)`` makes nbgrader's ``GenerateFeedback`` do the same before it
  renders (``HTMLExporter.sanitize_html`` alone is not enough: nbgrader's feedback template
  renders markdown cells without nbconvert's ``clean_html``; formgrader's template too).
- ``csv_cell``, ``plain_text`` and ``markdown_cell`` neutralise names and messages for a CSV
  file opened in a spreadsheet, the terminal and a markdown table.

HTML is parsed by bleach (an nbconvert dependency, with its html5lib parser) and markdown is
rendered by nbconvert's own mistune renderer, the one formgrader and feedback use: every
cleaned markdown text is rendered and checked, and if the check fails the cell is shown as a
code block instead.
"""

from __future__ import annotations

import base64
import binascii
import html
import re
import unicodedata
from typing import Any

import bleach
from bleach import html5lib_shim
from bleach.css_sanitizer import ALLOWED_CSS_PROPERTIES, ALLOWED_SVG_PROPERTIES, CSSSanitizer
from nbconvert.preprocessors import Preprocessor
from traitlets import Bool

__all__ = [
    "SanitizeNotebook",
    "csv_cell",
    "feedback_config",
    "markdown_cell",
    "plain_text",
    "sanitize_markdown",
    "sanitize_html",
    "sanitize_notebook",
    "sanitize_svg",
]

# --------------------------------------------------------------------------------------
# What may stay

KEPT_MIME = frozenset({"text/plain", "image/png", "image/jpeg", "text/latex", "application/json"})
"""Output data kept as it is: nbconvert and JupyterLab render these escaped or as images."""
CLEANED_MIME = frozenset({"text/html", "text/markdown", "image/svg+xml"})
"""Output data kept after cleaning. Every other MIME type (``application/javascript``,
``text/javascript``, widget views, ``text/vnd.mermaid``, anything unknown) is removed."""
ATTACHMENT_MIME = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp"})
"""Cell attachments kept as they are; ``image/svg+xml`` is cleaned, the rest removed."""

TAGS = frozenset(
    "a abbr b bdi bdo blockquote br caption center cite code col colgroup dd del details dfn div dl dt em"
    " figcaption figure font h1 h2 h3 h4 h5 h6 hr i img ins kbd li mark ol p pre q rp rt ruby s samp small"
    " span strike strong sub summary sup table tbody td tfoot th thead tr tt u ul var wbr".split()
)
"""HTML elements a student's markdown or HTML output may use."""
GLOBAL_ATTRIBUTES = frozenset({"class", "title", "style", "align", "dir", "lang"})
ATTRIBUTES = {
    "a": {"href"},
    "img": {"src", "alt", "width", "height"},
    "td": {"colspan", "rowspan", "width", "valign", "scope"},
    "th": {"colspan", "rowspan", "width", "valign", "scope"},
    "table": {"border", "width", "cellpadding", "cellspacing"},
    "col": {"span", "width"},
    "colgroup": {"span", "width"},
    "ol": {"start", "type", "reversed"},
    "ul": {"type"},
    "li": {"value"},
    "details": {"open"},
    "font": {"color", "size", "face"},
}
GENERATED_ATTRIBUTES = {f"h{n}": {"id"} for n in range(1, 7)} | {"input": {"type", "disabled", "checked"}}
"""Attributes nbconvert's markdown renderer itself adds (heading anchors, task lists): allowed
in the rendered check, never kept from a student's own HTML."""
SVG_TAGS = frozenset(
    "svg g defs symbol use path rect circle ellipse line polyline polygon text tspan textpath title desc"
    " clippath mask pattern marker lineargradient radialgradient stop image style metadata switch".split()
)
"""SVG elements kept (compared lower-case); ``script``, ``foreignObject``, ``a``, ``animate``,
``set``, ``iframe``... are removed. Prefixed metadata elements (``rdf:RDF``, ``dc:title``, as
matplotlib writes) are kept too: they do nothing."""
DROPPED_WITH_CONTENT = (
    "script style iframe frame frameset object embed applet noscript noembed noframes template textarea"
    " title xmp plaintext svg math select button form base meta link".split()
)
"""Elements removed with everything inside them from markdown and HTML (their text is code
or a payload, not something to show)."""
URL_ATTRIBUTES = frozenset({"href", "src", "action", "formaction", "background", "poster", "srcset", "cite", "data", "lowsrc"})
UNSAFE_CSS = re.compile(r"expression|javascript:|vbscript:|behavior|-moz-binding|@import|url\s*\(|\\|<", re.I)
SVG_UNSAFE_CSS = re.compile(r"expression|javascript:|vbscript:|behavior|-moz-binding|@import|\\|<|url\s*\(\s*(?![\"']?#)", re.I)
DATA_IMAGE = re.compile(r"data:image/(png|jpeg|jpg|gif|webp|bmp)[;,]")
SCHEME = re.compile(r"^([a-z][a-z0-9+.\-]*):")
_CSS = CSSSanitizer(allowed_css_properties=ALLOWED_CSS_PROPERTIES)
_SVG_CSS = CSSSanitizer(allowed_css_properties=ALLOWED_CSS_PROPERTIES, allowed_svg_properties=ALLOWED_SVG_PROPERTIES)
BLANK_PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
)
"""A 1x1 PNG: stands in for an attachment that was removed or missing (nbconvert stops the
whole page on a reference to a missing attachment)."""
REMOVED = "[removed by the grader: {what}]"


# --------------------------------------------------------------------------------------
# URLs, CSS and attributes


def _url_kind(value: str) -> str:
    """A URL's scheme as a browser reads it (control characters and spaces dropped,
    lower-case), "" for a relative URL."""
    compact = re.sub(r"[\x00-\x20\x7f]+", "", html.unescape(value or "")).lower()
    match = SCHEME.match(compact)
    if match:
        return match.group(1)
    return ""


def _url_ok(value: str, image: bool) -> bool:
    """Whether a link (``image`` False) or image source (True) URL is harmless."""
    scheme = _url_kind(value)
    if scheme in ("", "http", "https"):
        return True
    if image:
        compact = re.sub(r"[\x00-\x20\x7f]+", "", html.unescape(value)).lower()
        return scheme == "attachment" or bool(DATA_IMAGE.match(compact))
    return scheme == "mailto"


def _attribute_ok(tag: str, name: str, value: str, generated: bool = False) -> bool:
    """Whether HTML attribute ``name`` may stay on ``tag`` (both lower-case)."""
    if name.startswith("on"):
        return False
    allowed = GLOBAL_ATTRIBUTES | ATTRIBUTES.get(tag, set())
    if generated:
        allowed = allowed | GENERATED_ATTRIBUTES.get(tag, set())
    if name not in allowed:
        return False
    if name in URL_ATTRIBUTES:
        return _url_ok(value, image=(tag == "img" and name == "src"))
    if name == "style":
        return not UNSAFE_CSS.search(value or "")
    if tag == "input":
        return name != "type" or value.lower() == "checkbox"
    return True


def _svg_attribute_ok(tag: str, name: str, value: str) -> bool:
    """Whether SVG attribute ``name`` (local name, lower-case) may stay on SVG element ``tag``."""
    value = value or ""
    if name.startswith("on") or name in ("attributename", "begin", "end", "formaction", "action"):
        return False
    if name == "href":
        target = value.strip()
        return target.startswith("#") or (tag == "image" and bool(DATA_IMAGE.match(target.lower())))
    if "javascript:" in re.sub(r"[\x00-\x20\x7f]+", "", value).lower():
        return False
    if name in URL_ATTRIBUTES:
        return False
    return not SVG_UNSAFE_CSS.search(value) if ("url" in value.lower() or name == "style" or "\\" in value) else True


def _local(name: Any) -> str:
    """Local, lower-case name of an html5lib element or attribute (``{ns}name`` -> ``name``,
    ``xlink:href`` -> ``href``)."""
    name = str(name)
    if name.startswith("{"):
        name = name.split("}", 1)[1]
    return name.lower()


# --------------------------------------------------------------------------------------
# Checking rendered HTML: what a browser would build from it


def html_problems(markup: str, svg: bool = False, generated: bool = False) -> list[str]:
    """Everything in ``markup`` that could run or reach out: elements outside the allowed set
    (``TAGS``, or ``SVG_TAGS`` for an SVG image), event handlers, unsafe URLs and CSS. Parsed
    as a browser parses an HTML fragment (html5lib, through bleach). Empty when harmless.
    ``generated`` allows the few attributes nbconvert's markdown renderer adds itself."""
    parser = html5lib_shim.HTMLParser(namespaceHTMLElements=False)
    try:
        tree = parser.parseFragment(markup)
    except Exception as error:  # html5lib does not fail on bad HTML; anything else is suspect
        return [f"unparsable ({type(error).__name__})"]
    problems = []
    for element in tree.iter():
        if not isinstance(element.tag, str):  # comments
            continue
        if element.tag == "DOCUMENT_FRAGMENT":
            continue
        name = _local(element.tag)
        in_svg = element.tag.startswith("{http://www.w3.org/2000/svg}")
        if svg and in_svg:
            if name not in SVG_TAGS and ":" not in name:
                problems.append(f"<{name}>")
                continue
            if name == "style" and SVG_UNSAFE_CSS.search(element.text or ""):
                problems.append("unsafe CSS in <style>")
            for key, value in element.attrib.items():
                if not _svg_attribute_ok(name, _local(key).split(":")[-1], value):
                    problems.append(f"{_local(key)} on <{name}>")
            continue
        if element.tag.startswith("{") or name not in TAGS and not (generated and name in GENERATED_ATTRIBUTES):
            problems.append(f"<{name}>")
            continue
        for key, value in element.attrib.items():
            if not _attribute_ok(name, _local(key), value, generated=generated):
                problems.append(f"{_local(key)} on <{name}>")
    return problems


_DROPPED_OPEN = re.compile(r"<(%s)\b" % "|".join(DROPPED_WITH_CONTENT), re.I)  # noqa: UP031


def _dropped_with_content(markup: str, notes: set[str], names: re.Pattern = _DROPPED_OPEN) -> str:
    """``markup`` without the elements ``names`` matches (``DROPPED_WITH_CONTENT``), tags and
    what is between them; a start tag left without its end tag goes with the tag cleaning
    after this. A few passes for split tags (``<scr<script></script>ipt>``), each linear."""
    for _ in range(4):
        out, pos, unclosed = [], 0, set()
        while True:
            match = names.search(markup, pos)
            if not match:
                break
            name = match.group(1).lower()
            stop = _drop_element(markup, match, name, unclosed)
            if stop is None:
                out.append(markup[pos : match.end()])
                pos = match.end()
                continue
            notes.add(f"<{name}> removed")
            out.append(markup[pos : match.start()])
            pos = stop
        out.append(markup[pos:])
        cleaned = "".join(out)
        if cleaned == markup:
            break
        markup = cleaned
    return markup


def _cleaner(notes: set[str], svg: bool = False) -> bleach.sanitizer.Cleaner:
    def allowed(tag: str, name: str, value: str) -> bool:
        tag, name = tag.lower(), _local(name).split(":")[-1] if svg else _local(name)
        ok = _svg_attribute_ok(tag, name, value) if svg else _attribute_ok(tag, name, value)
        if not ok:
            notes.add(f"{name}= removed from <{tag}>")
        return ok

    svg_tags = {"svg", "g", "defs", "symbol", "use", "path", "rect", "circle", "ellipse", "line", "polyline", "polygon",
                "text", "tspan", "textPath", "title", "desc", "clipPath", "mask", "pattern", "marker", "linearGradient",
                "radialGradient", "stop", "image", "style", "switch"}  # SVG_TAGS as html5lib spells them
    tags = svg_tags if svg else set(TAGS)
    return bleach.sanitizer.Cleaner(
        tags=tags,
        attributes=allowed,
        protocols={"http", "https", "mailto", "data", "attachment"},
        strip=True,
        strip_comments=True,
        css_sanitizer=_SVG_CSS if svg else _CSS,
    )


def _tag_names(markup: str) -> set[str]:
    return {m.lower() for m in re.findall(r"<([A-Za-z][A-Za-z0-9:-]*)", markup)}


# --------------------------------------------------------------------------------------
# HTML and SVG


def sanitize_html(markup: str, notes: set[str] | None = None) -> str:
    """An HTML fragment (a ``text/html`` output, a raw cell) without anything that could run:
    unchanged when it is already harmless (``html_problems``), else cleaned by bleach with the
    course's allow-list; ``""`` if even that cannot be made harmless. What was removed is
    added to ``notes`` (e.g. ``"<script> removed"``, ``"onerror= removed from <img>"``)."""
    notes = set() if notes is None else notes
    if not html_problems(markup):
        return markup
    before = _tag_names(markup)
    cleaned = _cleaner(notes).clean(_dropped_with_content(markup, notes))
    notes.update(f"<{name}> removed" for name in before - TAGS - set(DROPPED_WITH_CONTENT) if name not in _tag_names(cleaned))
    if html_problems(cleaned):
        notes.add("HTML that could not be cleaned removed")
        return ""
    return cleaned


_SVG_DROPPED_OPEN = re.compile(
    r"<(%s)\b" % "|".join([n for n in DROPPED_WITH_CONTENT if n not in ("svg", "style", "title")] + ["foreignObject"]), re.I  # noqa: UP031
)


def sanitize_svg(markup: str, notes: set[str] | None = None) -> str:
    """An SVG image without scripts, event handlers, ``foreignObject``, animations or links
    outside the image: unchanged when already harmless, else cleaned by bleach with an SVG
    allow-list (``xlink:href`` becomes ``href``); ``""`` if it cannot be made harmless."""
    notes = set() if notes is None else notes
    if not html_problems(markup, svg=True):
        return markup
    markup = _dropped_with_content(markup, notes, _SVG_DROPPED_OPEN)
    markup = _dropped_with_content(markup, set(), re.compile(r"<(metadata)\b", re.I))
    cleaned = _cleaner(notes, svg=True).clean(markup)
    if html_problems(cleaned, svg=True):
        notes.add("an SVG image that could not be cleaned removed")
        return ""
    return cleaned


# --------------------------------------------------------------------------------------
# Markdown

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


def _clean_math(text: str, notes: set[str]) -> str:
    """Math as it was, except that no ``<`` can start an HTML tag (``a<b`` becomes ``a< b``:
    spaces do not count in TeX math) and ``\\href`` keeps only http(s) and in-page links."""
    cleaned = re.sub(r"<(?=[A-Za-z/!?])", "< ", text)

    def href(match: re.Match) -> str:
        target = match.group(1)
        if _url_kind(target) in ("", "http", "https", "mailto"):
            return match.group(0)
        notes.add(f"{_url_kind(target)}: link in math removed")
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
    cleaned = _cleaner(found).clean(tag)
    cleaned = re.sub(r"</%s>$" % re.escape(name), "", cleaned)  # noqa: UP031 - bleach closes what it opens
    if not found and not html_problems(tag):
        return tag
    notes.update(found)
    return cleaned


def _drop_element(text: str, match: re.Match, name: str, unclosed: set[str]) -> int | None:
    """End of ``<name ...>...</name>`` starting at ``match``, or None if it is not closed."""
    if name in unclosed:
        return None
    closing = re.compile(r"</%s\s*>" % re.escape(name), re.I).search(text, match.end())  # noqa: UP031
    if closing is None:
        unclosed.add(name)
        return None
    return closing.end()


def _clean_markdown_text(text: str, notes: set[str]) -> str:
    def destination(match: re.Match) -> str:
        target = match.group(2)
        bare = target[1:-1] if target.startswith("<") and target.endswith(">") else target
        bare = re.sub(r"\\(.)", r"\1", bare)
        if _url_ok(bare, image=True):
            return match.group(0)
        notes.add(f"{_url_kind(bare)}: link removed")
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
            if _url_ok(piece[1:-1], image=False):
                out.append(piece)
            else:
                notes.add(f"{_url_kind(piece[1:-1])}: link removed")
                out.append("&lt;" + piece[1:])
        elif kind == "email":
            out.append(piece)
        elif kind == "tag":
            name = re.match(r"</?([^\s/>]*)", piece).group(1).lower()
            if name in DROPPED_WITH_CONTENT and not piece.startswith("</"):
                notes.add(f"<{name}> removed")
                stop = _drop_element(text, match, name, unclosed) or stop
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
            out.append(_clean_math(piece, notes))
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
        count = output.get("execution_count")
        output["execution_count"] = count if isinstance(count, int) and not isinstance(count, bool) else None
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
                    data[mime] = _clean_math(_text(data[mime]), notes)
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
        count = cell.get("execution_count")
        cell["execution_count"] = count if isinstance(count, int) and not isinstance(count, bool) else None
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


def feedback_config(config, nbconvert_sanitizer: bool = False):
    """Make nbgrader's ``GenerateFeedback`` render nothing executable from the student, on a
    traitlets ``Config`` (changed in place and returned): adds ``SanitizeNotebook`` to
    ``GenerateFeedback.preprocessors`` (after nbgrader's own ``GetGrades`` and
    ``CSSHTMLHeaderPreprocessor``, or whatever the config already lists).

    ``HTMLExporter.sanitize_html = True`` alone is NOT enough: it drops JavaScript and widget
    outputs and cleans ``text/html``/``text/markdown`` outputs, but nbgrader's ``feedback``
    template overrides nbconvert's markdown-cell block without its ``clean_html``, so a
    ``<img onerror>`` or ``<script>`` in a markdown cell reaches the HTML as written (see
    tests/test_sanitize.py). It is not needed either once ``SanitizeNotebook`` has run, and it
    costs: nbconvert's ``clean_html`` escapes every tag outside bleach's short default list,
    so a markdown output shows as literal ``<p>...</p>`` and an ``<img>`` in an HTML output as
    text. ``nbconvert_sanitizer=True`` sets it anyway, as a second layer.

    The feedback page keeps the template's own scripts: MathJax, loaded from a CDN with an
    inline configuration script. A Content-Security-Policy that forbids inline scripts or
    that CDN would stop the math from rendering; none of the student's content needs scripts.
    """
    from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
    from nbgrader.preprocessors import GetGrades

    section = config.GenerateFeedback
    preprocessors = list(section["preprocessors"]) if "preprocessors" in section else [GetGrades, CSSHTMLHeaderPreprocessor]
    if SanitizeNotebook not in preprocessors and "course_utils.grading.sanitize.SanitizeNotebook" not in preprocessors:
        preprocessors.append(SanitizeNotebook)
    section.preprocessors = preprocessors
    if nbconvert_sanitizer:
        config.HTMLExporter.sanitize_html = True
    return config


# --------------------------------------------------------------------------------------
# Names and messages in a CSV file, the terminal and markdown


def csv_cell(value: str) -> str:
    """A CSV cell a spreadsheet will not run as a formula (OWASP "CSV injection"): a value
    starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading ``'``,
    unless it is a number (``-1``, ``-0.5``, ``+3``)."""
    value = "" if value is None else str(value)
    value = "".join(_escape_char(c) if unicodedata.category(c) == "Cs" else c for c in value)  # writable as UTF-8
    if value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        try:
            float(value)
        except ValueError:
            return "'" + value
    return value


BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")
"""Bidirectional overrides, embeddings, isolates and marks: they reorder what follows."""


def _escape_char(char: str) -> str:
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte of a file name that is not UTF-8 (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


UNSAFE_CATEGORIES = ("Cc", "Cs", "Zl", "Zp")
"""Control characters, lone surrogates (undecodable bytes of a file name), line and paragraph
separators: never printed raw."""


def plain_text(value: str) -> str:
    """``value`` safe to print in a terminal or a table: control characters (C0, DEL, C1:
    ESC, CR, LF, TAB...), line/paragraph separators and bidirectional overrides/isolates are
    shown as escapes (``\\x1b``, ``\\u202e``), and so are bytes of a file name that is not
    UTF-8 (``\\xff``); letters of every script are kept."""
    value = "" if value is None else str(value)
    return "".join(
        _escape_char(char) if char in BIDI or unicodedata.category(char) in UNSAFE_CATEGORIES else char
        for char in value
    )


def markdown_cell(value: str) -> str:
    """``plain_text(value)`` for a cell of a markdown table: ``\\``, `````, ``|``, ``[`` and
    ``]`` backslash-escaped and ``<`` as ``&lt;``, so it cannot end the cell, open code, a
    link or HTML."""
    text = plain_text(value)
    text = re.sub(r"([\\`|\[\]])", r"\\\1", text)
    return text.replace("<", "&lt;")
