"""HTML and SVG from students made inert before an instructor's browser shows them: the
allow-lists (elements, attributes, URL schemes, CSS), ``html_problems`` (what a browser would
build from some markup that could run or reach out), ``sanitize_html`` and ``sanitize_svg``.

HTML is parsed by bleach (an nbconvert dependency, with its html5lib parser), as a browser
parses an HTML fragment; markup already harmless is kept as written, the rest is cleaned by
bleach with the course's allow-list and checked again.
"""

from __future__ import annotations

import html
import re
from typing import Any

import bleach
from bleach import html5lib_shim
from bleach.css_sanitizer import ALLOWED_CSS_PROPERTIES, ALLOWED_SVG_PROPERTIES, CSSSanitizer

__all__ = ["html_problems", "sanitize_html", "sanitize_svg"]

# --------------------------------------------------------------------------------------
# What may stay

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
    "svg g defs symbol use path rect circle ellipse line polyline polygon text tspan textPath title desc"
    " clipPath mask pattern marker linearGradient radialGradient stop image style metadata switch".split()
)
"""SVG elements kept, spelled as html5lib names them for bleach (checks compare them lower-case);
``script``, ``foreignObject``, ``a``, ``animate``, ``set``, ``iframe``... are removed. Prefixed
metadata elements (``rdf:RDF``, ``dc:title``, as matplotlib writes) are kept too: they do nothing."""
_SVG_NAMES = frozenset(tag.lower() for tag in SVG_TAGS)
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


# --------------------------------------------------------------------------------------
# URLs, CSS and attributes


def _compact(url: str) -> str:
    """A URL as a browser reads its scheme: entities decoded, control characters and spaces
    dropped, lower-case."""
    return re.sub(r"[\x00-\x20\x7f]+", "", html.unescape(url or "")).lower()


def url_kind(value: str) -> str:
    """A URL's scheme as a browser reads it (``_compact``), "" for a relative URL."""
    match = SCHEME.match(_compact(value))
    return match.group(1) if match else ""


def url_ok(value: str, image: bool) -> bool:
    """Whether a link (``image`` False) or image source (True) URL is harmless."""
    scheme = url_kind(value)
    if scheme in ("", "http", "https"):
        return True
    if image:
        return scheme == "attachment" or bool(DATA_IMAGE.match(_compact(value)))
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
        return url_ok(value, image=(tag == "img" and name == "src"))
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
            if name not in _SVG_NAMES and ":" not in name:
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
            stop = drop_element(markup, match, name, unclosed)
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

def drop_element(text: str, match: re.Match, name: str, unclosed: set[str]) -> int | None:
    """End of ``<name ...>...</name>`` starting at ``match``, or None if it is not closed."""
    if name in unclosed:
        return None
    closing = re.compile(r"</%s\s*>" % re.escape(name), re.I).search(text, match.end())  # noqa: UP031
    if closing is None:
        unclosed.add(name)
        return None
    return closing.end()


def bleach_cleaner(notes: set[str], svg: bool = False) -> bleach.sanitizer.Cleaner:
    def allowed(tag: str, name: str, value: str) -> bool:
        tag, name = tag.lower(), _local(name).split(":")[-1] if svg else _local(name)
        ok = _svg_attribute_ok(tag, name, value) if svg else _attribute_ok(tag, name, value)
        if not ok:
            notes.add(f"{name}= removed from <{tag}>")
        return ok

    return bleach.sanitizer.Cleaner(
        tags=set(SVG_TAGS if svg else TAGS),
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
    cleaned = bleach_cleaner(notes).clean(_dropped_with_content(markup, notes))
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
    cleaned = bleach_cleaner(notes, svg=True).clean(markup)
    if html_problems(cleaned, svg=True):
        notes.add("an SVG image that could not be cleaned removed")
        return ""
    return cleaned
