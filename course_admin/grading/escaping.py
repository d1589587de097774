"""Names and messages from students (file names, student ids, error messages) made safe to
show outside a notebook: ``csv_cell`` for a CSV file opened in a spreadsheet, ``plain_text``
for a terminal, ``markdown_cell`` for a markdown table.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["csv_cell", "markdown_cell", "plain_text"]


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
