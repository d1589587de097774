"""A student's HTML and JavaScript must not run in the instructor's browser: nbgrader's formgrader
view of an autograded submission, and the feedback HTML, opened in Chromium.

One hostile submission is graded by the real pipeline (``grading.autograde``, which stores the
autograded notebook through ``sanitize.sanitize_notebook`` and renders feedback with
``sanitize.feedback_config``). Its payloads (markdown ``<img onerror>``, ``<script>``, an
``<iframe srcdoc>``, a ``javascript:`` link, ``%%html``, ``%%javascript``, an HTML display, a
markdown display, an SVG with ``onload`` and ``<script>``) would each, if they ran, mark the
page (``window.__pwned``, the title) and call the Jupyter REST API as the instructor: create
``PWNED_<student>_<payload>.txt`` through the contents API and start a kernel. The test opens
the submission in formgrader, served by JupyterLab from the course folder, and the feedback
file, records every request the pages make, and checks that nothing ran, nothing reached the
API, no marker file exists, and the safe content (text, bold, table, math, images, a PNG
output, the student's code) is still shown.

A control makes the test mean something: the same notebook, graded for another student with
``sanitize_notebook`` and ``feedback_config`` switched off, must run its payloads in the same
pages, so a pass is not just a browser or a formgrader that runs nothing.

External requests (MathJax's CDN) are refused, so math is checked as the TeX that MathJax
would typeset.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell

from browser.conftest import LOGS, SCREENSHOTS, jupyter_server
from course_admin import grading
from course_admin.grading import sanitize
from course_admin.grading.synthetic import TINY, student_version, synthetic_assignment

pytestmark = pytest.mark.browser

STUDENT = "mallory"  # graded by the real pipeline
CONTROL = "control"  # the same notebook, graded with sanitisation switched off
MARK = "PWNED"
PAGE_MS = 30_000
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAYAAAAGCAIAAABvrngfAAAAEUlEQVR4nGM4o6SEhhhoKwQAnRImQQyZUMYAAAAASUVORK5CYII="
"""A 6x6 red PNG: the safe images must load (naturalWidth > 0), not just be in the page."""
FORMGRADER_PAYLOADS = {"md_img", "md_script", "md_iframe", "html_magic", "js_magic", "display_html", "display_md"}
"""The payloads that run in formgrader when nothing is sanitised (the control checks it). The SVG
ones do not: nbconvert shows SVG outputs as <img src="data:...">, where scripts never run; the
``javascript:`` link runs only when clicked."""
FEEDBACK_PAYLOADS = FORMGRADER_PAYLOADS - {"js_magic", "md_iframe"}
"""In the feedback page ``%%javascript`` output is wrapped in code that needs jQuery, which the
feedback template does not load: it fails before the payload. Jupyter serves /files/ with a
``sandbox allow-scripts`` CSP (a unique origin): scripts run, but the srcdoc iframe may not
touch its parent's window, and the API calls go out cross-origin, without the login cookie."""


def payload(student: str, name: str) -> str:
    """JavaScript that marks the page and calls the Jupyter API as whoever is logged in; no
    double quotes (it goes in HTML attributes) and no '<' (it goes in srcdoc)."""
    tag = f"{student}_{name}"
    return (
        "(function(n){var w=window.top||window;w.__pwned=(w.__pwned||[]).concat([n]);"
        f"w.document.title+=' {MARK}-'+n;"
        "var x='';try{x=(document.cookie.match(/_xsrf=([^;]+)/)||[])[1]||'';}catch(e){}"
        "var h={'Content-Type':'application/json','X-XSRFToken':x};"
        f"fetch('/api/contents/{MARK}_'+n+'.txt',{{method:'PUT',headers:h,"
        "body:JSON.stringify({type:'file',format:'text',content:n})}).catch(function(){});"
        "fetch('/api/kernels',{method:'POST',headers:h,body:'{}'}).catch(function(){});"
        f"}})('{tag}')"
    )


def hostile_notebook(solution: dict, student: str) -> dict:
    """Both exercises answered correctly, plus every payload and the safe content."""
    js = lambda name: payload(student, name)  # noqa: E731
    markdown = (
        f"Student text SAFE-VISIBLE-{student}, **bold-safe**, and math $a<b$.\n\n"
        f'<img src=x onerror="{js("md_img")}">\n\n'
        f"<script>{js('md_script')}</script>\n\n"
        f'<iframe srcdoc="{html.escape("<script>" + js("md_iframe") + "</script>")}"></iframe>\n\n'
        f"[a link](<javascript:{js('md_link')}>)\n\n"
        "| column | value |\n|---|---|\n| cell-safe | 1 |\n\n"
        f"![md-dot](data:image/png;base64,{PNG}) "
        f'<img src="data:image/png;base64,{PNG}" alt="html-dot">\n'
    )
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10" onload="{js("svg_onload")}">'
        f'<script>{js("svg_script")}</script><rect width="10" height="10" fill="red"/></svg>'
    )
    onerror = lambda name: f'<img src=x onerror="{js(name)}">'  # noqa: E731
    cells = [
        new_markdown_cell(markdown),
        new_code_cell(f"%%html\n<b>html magic</b><script>{js('html_magic')}</script>"),
        new_code_cell(f"%%javascript\n{js('js_magic')}"),
        new_code_cell(f"from IPython.display import HTML, Markdown, display\ndisplay(HTML({onerror('display_html')!r}))"),
        new_code_cell(f"display(Markdown({'markdown output ' + onerror('display_md')!r}))"),
        new_code_cell(f"display({{'image/svg+xml': {svg!r}, 'text/plain': 'an svg'}}, raw=True)"),
        new_code_cell(f"display({{'image/png': {PNG!r}, 'text/plain': 'a red square'}}, raw=True)"),
    ]
    notebook = nbformat.from_dict(student_version(solution, "add", "square"))
    notebook.cells[2:2] = cells  # after the intro and the setup cell
    return notebook


def _switch_off_sanitising(monkeypatch) -> None:
    """The control: the grading pipeline's calls to ``sanitize`` do nothing."""
    from course_admin.grading import autograder, worker

    for module in (sanitize, worker, autograder):
        monkeypatch.setattr(module, "sanitize_notebook", lambda nb: [], raising=False)
        monkeypatch.setattr(module, "feedback_config", lambda config: config, raising=False)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A course folder with the two graded submissions and an nbgrader_config.py for formgrader."""
    tmp = tmp_path_factory.mktemp("formgrader")
    solutions, course, out = tmp / "solutions", tmp / "course", tmp / "out"
    solution = json.loads(synthetic_assignment(solutions).read_text())
    control, real = tmp / "control-submissions", tmp / "submissions"
    for folder in (control, real):
        folder.mkdir()
    nbformat.write(hostile_notebook(solution, CONTROL), control / f"{CONTROL}.ipynb")
    nbformat.write(hostile_notebook(solution, STUDENT), real / f"{STUDENT}.ipynb")
    (real / f"{CONTROL}.ipynb").write_bytes((control / f"{CONTROL}.ipynb").read_bytes())
    # The control first: the real run then finds it unchanged and leaves it as it was; anything
    # it grades again is sanitised, so the real submission can never be graded unsanitised.
    with pytest.MonkeyPatch.context() as monkeypatch:
        _switch_off_sanitising(monkeypatch)
        grading.autograde(control, out=out, course_dir=course, source=solutions, workers=0, progress=False)
    grading.autograde(real, out=out, course_dir=course, source=solutions, workers=0, progress=False)
    (course / "nbgrader_config.py").write_text(
        "c = get_config()  # noqa: F821\n"
        f"c.CourseDirectory.root = {str(course)!r}\n"
        f"c.CourseDirectory.db_url = {'sqlite:///' + str(course / 'gradebook.db')!r}\n"
        "c.CourseDirectory.course_id = 'formgrader-test'\n"
    )
    return course


@pytest.fixture(scope="module")
def server(course, tmp_path_factory):
    yield from jupyter_server(course, tmp_path_factory.mktemp("formgrader-home"), "formgrader-server")


def submission_id(course: Path, student: str) -> str:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        return gradebook.find_submission_notebook(TINY, TINY, student).id


def open_page(browser, server, path: str, shot: str) -> dict:
    """Open ``path`` on the server as the logged-in instructor, wait until the page and its
    requests settle; what it requested, what ran, and the page for more checks."""
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    context.set_default_timeout(PAGE_MS)
    requests: list[tuple[str, str]] = []
    context.on("request", lambda r: requests.append((r.method, r.url)))
    origin = server.base
    # Only the Jupyter server and inline data: nothing from the internet (MathJax's CDN).
    context.route(
        "**/*",
        lambda route: route.continue_()
        if route.request.url.startswith((origin + "/", "data:"))
        else route.abort(),
    )
    page = context.new_page()
    console: list[str] = []
    page.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
    page.on("pageerror", lambda e: console.append(f"pageerror: {e}"))
    try:
        # The token in a URL logs the browser in (a cookie), as an instructor's session is.
        page.goto(f"{origin}/formgrader?token={server.token}")
        page.wait_for_load_state("networkidle")
        requests.clear()
        # Opened from JupyterLab (a link in the instructor's session): a same-origin Referer,
        # which Jupyter requires for /files/ when the browser is logged in by cookie.
        response = page.goto(origin + path, referer=f"{origin}/lab")
        page.wait_for_load_state("networkidle")
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"{shot}.png"), full_page=True)
        assert response is not None and response.status == 200, f"{path}: {response and response.status}"
        pwned = []
        for frame in page.frames:
            try:
                pwned += frame.evaluate("() => window.__pwned || []")
            except Exception:  # a frame that went away, or that we may not read: nothing ran there
                pass
        title = page.title()
    except BaseException:
        context.close()
        raise
    finally:
        LOGS.mkdir(parents=True, exist_ok=True)
        (LOGS / f"{shot}.requests.log").write_text("\n".join(f"{m} {u}" for m, u in requests))
        (LOGS / f"{shot}.console.log").write_text("\n".join(console))
    return {"context": context, "page": page, "requests": requests, "pwned": sorted(set(pwned)), "title": title}


def api_calls(requests: list[tuple[str, str]], server) -> list[str]:
    """The requests a payload makes: anything naming the marker, a kernel start, the contents API."""
    found = []
    for method, url in requests:
        path = url.removeprefix(server.base).split("?")[0]
        if MARK in url or (path.startswith("/api/kernels") and method == "POST") or path.startswith("/api/contents"):
            found.append(f"{method} {path}")
    return found


def markers(course: Path, student: str) -> list[str]:
    return sorted(p.name for p in course.glob(f"{MARK}_{student}_*"))


def check_safe_content(page, student: str, feedback: bool) -> None:
    """The sanitiser did not blank the page: text, bold, table, math, images and code are shown."""
    assert page.get_by_text(f"SAFE-VISIBLE-{student}").count() >= 1, "the student's text is not shown"
    assert page.locator("strong", has_text="bold-safe").count() >= 1, "bold text is gone"
    assert page.locator("td", has_text="cell-safe").count() >= 1, "the markdown table is gone"
    text = page.locator("body").inner_text()
    assert re.search(r"\$a<\s*b\$", text), "the math $a<b$ is not in the page as TeX for MathJax"
    assert "return a + b" in text and "return x * x" in text, "the student's code is not shown"
    loaded = "(img) => img.complete && img.naturalWidth > 0"
    for selector in ('img[alt="md-dot"]', 'img[alt="html-dot"]', ".output_png img"):
        image = page.locator(selector).first
        assert image.count() == 1, f"no {selector} in the {'feedback' if feedback else 'formgrader'} page"
        assert image.evaluate(loaded), f"{selector} did not load"


def test_the_autograded_notebook_holds_no_payload(course):
    """At rest: the autograded notebook formgrader renders (code cells' sources excepted: they
    are shown as highlighted, escaped code)."""
    stored = json.loads((course / "autograded" / STUDENT / TINY / f"{TINY}.ipynb").read_text())
    rendered = json.dumps(
        [cell["source"] for cell in stored["cells"] if cell["cell_type"] != "code"]
        + [{k: v for k, v in out.get("data", {}).items() if k != "text/plain"} for cell in stored["cells"]
           for out in cell.get("outputs", [])]
    )
    for fragment in ("onerror", "<script", "<iframe", "application/javascript", "onload", "javascript:"):
        assert fragment not in rendered, f"{fragment!r} is still in the autograded notebook's markdown or outputs"


def test_formgrader_and_feedback_run_nothing_from_the_student(browser, server, course):
    kernels_before = len(server.api("kernels"))
    pages = {
        "formgrader": f"/formgrader/submissions/{submission_id(course, STUDENT)}/",
        "feedback": f"/files/feedback/{STUDENT}/{TINY}/{TINY}.html",
    }
    for name, path in pages.items():
        seen = open_page(browser, server, path, f"formgrader_{name}_{STUDENT}")
        try:
            assert seen["pwned"] == [], f"{name}: student JavaScript ran: {seen['pwned']}"
            assert MARK not in seen["title"], f"{name}: the page title was changed: {seen['title']!r}"
            assert api_calls(seen["requests"], server) == [], f"{name}: the page called the Jupyter API"
            check_safe_content(seen["page"], STUDENT, feedback=name == "feedback")
        finally:
            seen["context"].close()
    assert markers(course, STUDENT) == [], "a payload wrote a file through the contents API"
    assert len(server.api("kernels")) == kernels_before, "a payload started a kernel"


def test_control_without_sanitising_the_payloads_do_run(browser, server, course):
    """Without sanitisation the same pages run the payloads and reach the API: the test above
    checks something real."""
    kernels_before = {k["id"] for k in server.api("kernels")}
    try:
        seen = open_page(
            browser, server, f"/formgrader/submissions/{submission_id(course, CONTROL)}/", f"formgrader_formgrader_{CONTROL}"
        )
        try:
            ran = {name.removeprefix(f"{CONTROL}_") for name in seen["pwned"]}
            assert FORMGRADER_PAYLOADS <= ran, f"formgrader: expected {sorted(FORMGRADER_PAYLOADS)} to run, ran {sorted(ran)}"
            calls = api_calls(seen["requests"], server)
            assert any(call.startswith("POST /api/kernels") for call in calls), calls
            assert any(call.startswith(f"PUT /api/contents/{MARK}_{CONTROL}_") for call in calls), calls
        finally:
            seen["context"].close()
        # Same origin, logged in: the API calls succeeded as the instructor.
        assert {f"{MARK}_{CONTROL}_{name}.txt" for name in FORMGRADER_PAYLOADS} <= set(markers(course, CONTROL))
        assert {k["id"] for k in server.api("kernels")} - kernels_before, "no kernel was started"

        seen = open_page(browser, server, f"/files/feedback/{CONTROL}/{TINY}/{TINY}.html", f"formgrader_feedback_{CONTROL}")
        try:
            ran = {name.removeprefix(f"{CONTROL}_") for name in seen["pwned"]}
            assert FEEDBACK_PAYLOADS <= ran, f"feedback: expected {sorted(FEEDBACK_PAYLOADS)} to run, ran {sorted(ran)}"
            assert any(MARK in call for call in api_calls(seen["requests"], server))
        finally:
            seen["context"].close()
    finally:
        # the payloads start several kernels at once; one may be restarting (a port drawn twice),
        # and its DELETE then waits until the server stops: the server fixture stops it
        server.shutdown_kernels(keep=kernels_before, timeout=20)
