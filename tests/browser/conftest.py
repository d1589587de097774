"""Fixtures for the browser suite: one JupyterLab server and one headless Chromium per session.

The server serves the notebooks of a freshly built student bundle (a temporary copy, so nothing
the browser saves touches the repository), with the bundle's wheel installed first on the
kernels' path, on 127.0.0.1 with a random token. Its kernels run in fast mode (``COURSE_FAST=1``)
but NOT headless (``COURSE_HEADLESS=0``, ``CI`` removed): the games wait for real clicks.

Chromium is Debian's ``/usr/bin/chromium`` driven by Playwright (Playwright cannot download its
own browsers here). Without it the suite is skipped with the reason, unless
``COURSE_REQUIRE_BROWSER=1`` (set by ``.ci/run``), which turns a missing browser into a failure.

Every wait is bounded and waits on page state (the notebook model, widget text), never on sleeps.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
ARTIFACTS = ROOT / "test-artifacts"
SCREENSHOTS = ARTIFACTS / "screenshots"
LOGS = ARTIFACTS / "browser"
CHROMIUM = Path(os.environ.get("COURSE_CHROMIUM", "/usr/bin/chromium"))
SERVER_START_S = 90
WAIT_MS = 90_000  # the longest any single wait on the page may take
# The games give the front-end this long to answer their probe before they stop blocking; the game
# test waits longer than this before its first click, so only the probe can keep the cell blocked.
PROBE_TIMEOUT_S = 2
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _missing() -> str | None:
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is missing: install Debian's chromium (apt-get install chromium), as .ci/run does"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is missing: make install"
    return None


def _jupyter_bin() -> str:
    explicit = os.environ.get("COURSE_JUPYTER_BIN")
    if explicit:
        return explicit
    local = Path(sys.executable).parent / "jupyter"
    return str(local) if local.exists() else (shutil.which("jupyter") or "jupyter")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    """A running JupyterLab: its URL, token, the folder it serves and the environment it (and
    so each of its kernels) runs in."""

    def __init__(self, base: str, token: str, root: Path, env: dict | None = None):
        self.base, self.token, self.root, self.env = base, token, root, env or {}

    def api(self, path: str, method: str = "GET", timeout: float = 60):
        request = urllib.request.Request(f"{self.base}/api/{path}?token={self.token}", method=method)
        # 60 s: deleting a kernel waits for it to shut down, which took over 15 s once on 2 busy cores
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read()
        return json.loads(body) if body else None

    def url(self, notebook: str) -> str:
        return f"{self.base}/lab/tree/{notebook}?token={self.token}&reset"

    def shutdown_kernels(self, keep=(), timeout: float = 60) -> None:
        """Shut down every kernel but those whose ids are in ``keep``, as far as the server answers
        within ``timeout`` seconds a kernel: a kernel whose start failed and is being restarted
        (two kernels started at once drew the same random port) can make its DELETE wait until the
        server stops, which the server's own teardown does (it stops them all)."""
        try:
            kernels = self.api("kernels", timeout=timeout)
        except OSError:
            return
        for kernel in kernels:
            if kernel["id"] in keep:
                continue
            try:
                self.api(f"kernels/{kernel['id']}", method="DELETE", timeout=timeout)
            except OSError:
                pass


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the item, so the page fixture can screenshot failures."""
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)


@pytest.fixture(scope="session", autouse=True)
def _browser_available():
    reason = _missing()
    if reason and os.environ.get("COURSE_REQUIRE_BROWSER") == "1":
        pytest.fail(f"COURSE_REQUIRE_BROWSER=1 but {reason}", pytrace=False)
    if reason:
        pytest.skip(reason)


@pytest.fixture(scope="session")
def lab(tmp_path_factory):
    # What a student gets: the notebooks of the student bundle, and its wheel's package first on
    # the kernels' path (no solutions, no grader: `test_the_lab_runs_the_student_package`).
    import student_bundle

    bundle = student_bundle.installed(tmp_path_factory)
    site, path = bundle["site"], bundle["pythonpath"]
    root = tmp_path_factory.mktemp("served")
    for notebook in sorted((bundle["folder"] / "notebooks").glob("*.ipynb")):
        shutil.copy(notebook, root / notebook.name)
    home = tmp_path_factory.mktemp("jupyter-home")
    # JupyterLab settings for the test user: render every cell (no windowing, so widgets of cells
    # scrolled out of view stay in the page) and no news pop-up over the notebook.
    settings = home / "settings"
    (settings / "@jupyterlab" / "notebook-extension").mkdir(parents=True)
    (settings / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings").write_text(
        json.dumps({"windowingMode": "none"})
    )
    (settings / "@jupyterlab" / "apputils-extension").mkdir(parents=True)
    (settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False})
    )
    # Kernels in fast mode but NOT headless: the games wait for real clicks.
    yield from jupyter_server(
        root,
        home,
        "jupyter-server",
        extra_args=("--LabApp.expose_app_in_browser=True",),
        env_extra={
            "PYTHONPATH": path,
            "COURSE_STUDENT_SITE": str(site),  # for the tests: where the student package is
            "COURSE_FAST": "1",
            "COURSE_HEADLESS": "0",
            "COURSE_PROBE_TIMEOUT": str(PROBE_TIMEOUT_S),
            "MPLBACKEND": "module://matplotlib_inline.backend_inline",
        },
    )


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser, lab, request):
    """A fresh browser page; its console goes to test-artifacts/browser/<test>.console.log.
    Kernels started by the test are shut down afterwards."""
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    context.set_default_timeout(WAIT_MS)
    pg = context.new_page()
    console: list[str] = []
    pg.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
    pg.on("pageerror", lambda e: console.append(f"pageerror: {e}"))
    name = request.node.name.replace("/", "_").replace("[", "_").replace("]", "")
    try:
        yield pg
    finally:
        report = getattr(request.node, "rep_call", None)
        if report is not None and report.failed:
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            pg.screenshot(path=str(SCREENSHOTS / f"FAILED_{name}.png"))
        (LOGS / f"{name}.console.log").write_text("\n".join(console))
        context.close()
        lab.shutdown_kernels()


def jupyter_server(
    root: Path, home: Path, log_name: str, app: str = "lab", extra_args: tuple[str, ...] = (), env_extra: dict | None = None
):
    """A Jupyter server (``jupyter lab`` by default) serving ``root`` and started in it (so
    nbgrader reads ``root/nbgrader_config.py``), on 127.0.0.1 with a random token, its
    configuration and runtime files under ``home``; yields one ``Lab``. A generator: a fixture
    delegates to it (``yield from jupyter_server(...)``), or wrap it in
    ``contextlib.contextmanager``. Its log goes to ``test-artifacts/browser/<log_name>.log``;
    kernels are shut down and the server stopped at exit. ``env_extra`` is added to the server's
    (and so its kernels') environment. The ``lab`` fixture and tests that need a server of their
    own both start theirs with it."""
    for sub in ("config", "runtime", "workspaces", "settings"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    port, token = _free_port(), secrets.token_hex(16)
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "NBGRADER_EXECUTION", "PYTEST_XDIST_WORKER")}
    env.update(
        JUPYTER_CONFIG_DIR=str(home / "config"),
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
        JUPYTERLAB_SETTINGS_DIR=str(home / "settings"),
        PYTHONUNBUFFERED="1",
        **(env_extra or {}),
    )
    cmd = [
        _jupyter_bin(),
        app,
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--ContentsManager.allow_hidden=False",
        *([f"--LabApp.workspaces_dir={home / 'workspaces'}", "--LabApp.news_url="] if app == "lab" else []),
        *extra_args,
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    LOGS.mkdir(parents=True, exist_ok=True)
    log_path = LOGS / f"{log_name}.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=root, start_new_session=True)
        server = Lab(f"http://127.0.0.1:{port}", token, root, env)
        try:
            deadline = time.monotonic() + SERVER_START_S
            while True:
                if proc.poll() is not None:
                    pytest.fail(f"jupyter {app} exited with {proc.returncode}; see {log_path}")
                try:
                    server.api("status")
                    break
                except OSError:
                    pass
                if time.monotonic() > deadline:
                    pytest.fail(f"jupyter {app} did not answer within {SERVER_START_S} s; see {log_path}")
                time.sleep(0.25)
            yield server
        finally:
            if proc.poll() is None:
                server.shutdown_kernels(timeout=20)  # then terminated: it stops whatever is left
                proc.terminate()
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=5)
