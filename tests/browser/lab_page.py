"""Driving a JupyterLab notebook page from Playwright, through the app's own model.

JupyterLab runs with ``expose_app_in_browser``, so ``window.jupyterapp`` is available: commands
are run with ``app.commands.execute`` and cell state (outputs, execution counts, execution state)
is read from the notebook model rather than scraped from the DOM. Every wait is bounded.
"""

from __future__ import annotations

import re
from pathlib import Path

CELLS_JS = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  return panel.content.widgets.map((w, i) => {
    const m = w.model;
    const code = m.type === 'code';
    const outputs = code ? m.outputs.toJSON().map(o => ({
      type: o.output_type,
      ename: o.ename || null,
      evalue: o.evalue || null,
      mimes: o.data ? Object.keys(o.data) : [],
      text: o.text ? (Array.isArray(o.text) ? o.text.join('') : o.text)
          : (o.data && o.data['text/plain'] ? [].concat(o.data['text/plain']).join('') : ''),
    })) : [];
    return {
      index: i, type: m.type, source: m.sharedModel.getSource(),
      count: code ? m.executionCount : null,
      state: code ? (m.executionState || 'idle') : 'idle',
      prompt: code && w.promptNode ? w.promptNode.textContent.trim() : '',
      tags: m.getMetadata('tags') || [],
      nbgrader: m.getMetadata('nbgrader') || null,
      outputs,
    };
  });
}"""

KERNEL_STATUS_JS = """() => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return k ? k.status : null;
}"""


def open_notebook(page, lab, name: str) -> None:
    """Open ``name`` in JupyterLab and wait until its kernel is idle."""
    page.goto(lab.url(name))
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget "
                           "&& window.jupyterapp.shell.currentWidget.content "
                           "&& window.jupyterapp.shell.currentWidget.content.widgets.length > 0")
    page.wait_for_function(f"({KERNEL_STATUS_JS})() === 'idle'")


def cells(page) -> list[dict]:
    return page.evaluate(CELLS_JS)


def start_run(page, command: str = "notebook:run-all-cells", from_cell: int | None = None) -> None:
    """Start a run command without waiting for it; ``run_finished`` tells when its promise settles."""
    page.evaluate(
        """([command, index]) => {
          const app = window.jupyterapp;
          const panel = app.shell.currentWidget;
          if (index !== null) { panel.content.activeCellIndex = index; }
          window.__courseRun = 'running';
          app.commands.execute(command).then(
            (ok) => { window.__courseRun = ok === false ? 'stopped' : 'done'; },
            (err) => { window.__courseRun = 'failed: ' + err; });
        }""",
        [command, from_cell],
    )


def wait_run_finished(page, timeout_ms: int) -> str:
    """Wait until the last ``start_run`` settles and the kernel is idle; return 'done' or 'stopped'
    ('stopped': JupyterLab stopped at a cell that raised)."""
    page.wait_for_function("() => window.__courseRun !== 'running'", timeout=timeout_ms)
    page.wait_for_function(f"({KERNEL_STATUS_JS})() === 'idle'", timeout=timeout_ms)
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.widgets.every("
        "w => w.model.type !== 'code' || (w.model.executionState || 'idle') === 'idle')",
        timeout=timeout_ms,
    )
    result = page.evaluate("() => window.__courseRun")
    assert not result.startswith("failed"), result
    return result


def errors(cell: dict) -> list[dict]:
    return [o for o in cell["outputs"] if o["type"] == "error"]


def is_exercise_prompt(error: dict) -> bool:
    """The intended failure of an unanswered exercise: NotImplementedError raised by the stub, or
    a hidden-test AssertionError from a check that says the exercise is not implemented yet."""
    if error["ename"] == "NotImplementedError":
        return True
    return error["ename"] == "AssertionError" and "not implemented yet" in (error["evalue"] or "")


def images(cell: dict) -> int:
    return sum(1 for o in cell["outputs"] if "image/png" in o["mimes"] or "image/svg+xml" in o["mimes"])


def text(cell: dict) -> str:
    return "".join(o["text"] for o in cell["outputs"])


def screenshot(page, folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', name)}.png"
    page.screenshot(path=str(path), full_page=False)
    return path
