"""The colour game's blocking mode in a real browser: JupyterLab + headless Chromium.

``ColourGame.play(block=True)`` keeps its cell running in jupyter-ui-poll's loop until the last
attempt. This test checks, in a real JupyterLab page, that clicks on the game's buttons still reach
the kernel while the cell blocks, and that the next cell runs only once the game is over.

Opt-in: runs only with ``COURSE_BROWSER_TESTS=1``, Debian's ``/usr/bin/chromium`` and the
``playwright`` Python package (no ``playwright install`` needed). ``COURSE_JUPYTER_BIN`` may name
another ``jupyter`` executable (for instance one from a venv with another ipykernel); by default the
``jupyter`` next to the Python running pytest is used.

    COURSE_BROWSER_TESTS=1 .venv/bin/python -m pytest -q tests/browser -p no:xdist
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

if os.environ.get("COURSE_BROWSER_TESTS") != "1":
    pytest.skip("browser tests are opt-in: set COURSE_BROWSER_TESTS=1", allow_module_level=True)

CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.exists():
    pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)", allow_module_level=True)

sync_api = pytest.importorskip("playwright.sync_api")

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "test-artifacts" / "screenshots"
LOGS = ROOT / "test-artifacts" / "browser"
WAIT_MS = 60_000  # every wait on the page is bounded by this
CLICK_WAIT_MS = 30_000  # how long a click may take to show up in the status line
SERVER_START_S = 60
ATTEMPTS_PER_MODE = 2
ATTEMPTS = 2 * ATTEMPTS_PER_MODE
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _cell(source: str) -> dict:
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}


NOTEBOOK = {
    "nbformat": 4,
    "nbformat_minor": 5,
    "metadata": {
        "kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"},
        "language_info": {"name": "python"},
    },
    "cells": [
        _cell('import sys, ipykernel\nprint("KERNEL", ipykernel.__version__, sys.executable)'),
        _cell(
            "from course_utils.colour_game import ColourGame\n"
            f"game = ColourGame(attempts_per_mode={ATTEMPTS_PER_MODE}, seed=0).play(block=True)"
        ),
        _cell('print("AFTER", game.attempt, game.score)'),
    ],
}


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


def _get(url: str, timeout: float = 5) -> int:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return response.status


def _stop_server(proc: subprocess.Popen, base: str, token: str) -> None:
    """Shut the kernels down through the REST API (they run in their own sessions), then the server."""
    if proc.poll() is None:
        try:
            with urllib.request.urlopen(f"{base}/api/kernels?token={token}", timeout=5) as response:
                kernels = json.load(response)
            for kernel in kernels:
                request = urllib.request.Request(f"{base}/api/kernels/{kernel['id']}?token={token}", method="DELETE")
                urllib.request.urlopen(request, timeout=15).close()
        except OSError:
            pass
        proc.terminate()  # SIGTERM: jupyter server shuts down cleanly
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


@pytest.fixture
def lab_server(tmp_path):
    """A JupyterLab server on a free local port, serving a temp dir with the game notebook."""
    root = tmp_path / "nb"
    root.mkdir()
    (root / "game.ipynb").write_text(json.dumps(NOTEBOOK, indent=1))
    home = tmp_path / "jupyter"
    for sub in ("config", "runtime", "workspaces"):
        (home / sub).mkdir(parents=True)
    port, token = _free_port(), secrets.token_hex(16)
    env = dict(os.environ)
    env.pop("CI", None)  # CI=true would make the game play itself
    env.update(
        COURSE_HEADLESS="0",
        JUPYTER_CONFIG_DIR=str(home / "config"),
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
        PYTHONUNBUFFERED="1",
    )
    cmd = [
        _jupyter_bin(),
        "lab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        f"--LabApp.workspaces_dir={home / 'workspaces'}",
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.news_url=",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    LOGS.mkdir(parents=True, exist_ok=True)
    log = open(LOGS / "jupyter-server.log", "w")  # noqa: SIM115 - closed in the teardown
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=root, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + SERVER_START_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f"jupyter lab exited with {proc.returncode}; see {LOGS / 'jupyter-server.log'}")
            try:
                if _get(f"{base}/api/status?token={token}") == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"jupyter lab did not answer within {SERVER_START_S} s; see {LOGS / 'jupyter-server.log'}")
            time.sleep(0.25)
        yield {"base": base, "token": token, "notebook": "game.ipynb"}
    finally:
        _stop_server(proc, base, token)
        log.close()


@pytest.fixture
def page():
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            context.set_default_timeout(WAIT_MS)
            pg = context.new_page()
            console: list[str] = []
            pg.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
            pg.on("pageerror", lambda e: console.append(f"pageerror: {e}"))
            yield pg
            (LOGS / "browser-console.log").write_text("\n".join(console))
        finally:
            browser.close()


KERNEL_STATUS_JS = """() => {
  const app = window.jupyterapp;
  const w = app && app.shell && app.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return k ? k.status : null;
}"""


def _outputs(page) -> list[str]:
    return [t.strip() for t in page.locator(".jp-OutputArea-output").all_inner_texts()]


def _prompt(page, cell: int) -> str:
    return page.locator(".jp-Notebook .jp-Cell").nth(cell).locator(".jp-InputPrompt").inner_text().strip()


def _status(page) -> str:
    return " ".join(page.locator(".colour-game-status").inner_text().split())


def test_clicks_reach_the_kernel_while_play_blocks(lab_server, page):
    started = time.monotonic()
    srv = lab_server
    page.goto(f"{srv['base']}/lab/tree/{srv['notebook']}?token={srv['token']}")
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=WAIT_MS)
    page.wait_for_function(f"({KERNEL_STATUS_JS})() === 'idle'", timeout=WAIT_MS)

    # Fire and forget: the command's promise resolves only when every cell has run.
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")

    kernel_line = page.locator(".jp-OutputArea-output", has_text="KERNEL").first
    kernel_line.wait_for(timeout=WAIT_MS)
    kernel_info = kernel_line.inner_text().split()
    version = kernel_info[1] if len(kernel_info) > 1 else "unknown"
    tag = f"ipykernel-{version}"
    print("kernel:", " ".join(kernel_info))

    left, right = page.locator("button.colour-game-left"), page.locator("button.colour-game-right")
    left.wait_for(state="visible", timeout=WAIT_MS)
    page.wait_for_function(
        "() => { const s = document.querySelector('.colour-game-status'); return s && /Attempt 1 of/.test(s.innerText); }",
        timeout=WAIT_MS,
    )
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"colour_game_{tag}_start.png"))
    assert _status(page).startswith(f"Attempt 1 of {ATTEMPTS}"), _status(page)
    # The kernel's status is no guide here: jupyter-ui-poll handles comm messages inside the cell,
    # each ending with an "idle" status, so the status bar reads Idle while the cell blocks.
    assert _prompt(page, 1) == "[*]:", "the game cell should be blocking"
    assert _prompt(page, 2) == "[*]:", "the next cell should be queued"
    assert not any(o.startswith("AFTER") for o in _outputs(page)), "the next cell ran before the game ended"

    for i in range(ATTEMPTS):
        last = i == ATTEMPTS - 1
        if last:
            assert not any(o.startswith("AFTER") for o in _outputs(page)), "the next cell ran before the last click"
            assert _prompt(page, 1) == "[*]:", "the game cell stopped blocking before the last click"
        (left if i % 2 == 0 else right).click()
        expected = "Game over" if last else f"Attempt {i + 2} of {ATTEMPTS}"
        try:
            page.wait_for_function(
                "(want) => { const s = document.querySelector('.colour-game-status'); return s && s.innerText.includes(want); }",
                arg=expected,
                timeout=CLICK_WAIT_MS,
            )
        except sync_api.TimeoutError:
            page.screenshot(path=str(SCREENSHOTS / f"colour_game_{tag}_stuck.png"))
            pytest.fail(
                f"click {i + 1} was not received within {CLICK_WAIT_MS / 1000:.0f} s while the cell blocks "
                f"({' '.join(kernel_info)}): status still {_status(page)!r}, kernel {page.evaluate(KERNEL_STATUS_JS)!r}"
            )
        assert expected in _status(page)
        if i == 1:
            page.screenshot(path=str(SCREENSHOTS / f"colour_game_{tag}_mid.png"))

    final = _status(page)
    match = re.search(r"Game over · total reward: (\d+) of (\d+) possible", final)
    assert match, final
    assert left.is_disabled() and right.is_disabled()

    after = page.locator(".jp-OutputArea-output", has_text="AFTER").first
    after.wait_for(timeout=WAIT_MS)
    assert after.inner_text().split() == ["AFTER", str(ATTEMPTS), match.group(1)]
    assert re.fullmatch(r"\[\d+\]:", _prompt(page, 1)) and re.fullmatch(r"\[\d+\]:", _prompt(page, 2))
    page.wait_for_function(f"({KERNEL_STATUS_JS})() === 'idle'", timeout=WAIT_MS)
    page.screenshot(path=str(SCREENSHOTS / f"colour_game_{tag}_end.png"))
    print(f"final status: {final!r}; after: {after.inner_text().strip()!r}; took {time.monotonic() - started:.1f} s")
