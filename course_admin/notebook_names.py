"""Which cell of a notebook makes which name: the table ``course release`` stores in
``assets/notebook_names.json`` (``course_admin.grading.student_notebooks.write_names``), from which
a student's kernel explains a ``NameError`` (``course_utils.notebook.setup_notebook``).
"""

from __future__ import annotations

import ast
import json


def _targets(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, (ast.Tuple, ast.List)):
        return [n for element in node.elts for n in _targets(element)]
    if isinstance(node, ast.Starred):
        return _targets(node.value)
    return []


def _cell_names(source: str) -> list[str]:
    """Names a cell binds at its top level (assignments, defs, classes, imports, loops, with)."""
    lines = [line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))]
    try:
        tree = ast.parse("\n".join(lines))
    except SyntaxError:
        return []
    names = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [n for target in node.targets for n in _targets(target)]
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            names += _targets(node.target)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names += [(alias.asname or alias.name).split(".")[0] for alias in node.names]
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            names += _targets(node.target)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            names += [n for item in node.items if item.optional_vars is not None for n in _targets(item.optional_vars)]
        elif isinstance(node, (ast.If, ast.Try)):  # e.g. `if passes(...): x = ... else: x = ...`
            for inner in ast.walk(node):
                if isinstance(inner, ast.Assign):
                    names += [n for target in inner.targets for n in _targets(target)]
    return names


def defined_names(nb: dict) -> dict[str, dict[str, str]]:
    """For every name a notebook's code cells bind: the first cell that binds it, as its section
    heading and its first line. ``nb`` is a notebook as JSON."""
    section, found = "the top of the notebook", {}
    for cell in nb["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            for line in source.splitlines():
                if line.startswith("## "):
                    section = line[3:].split(" *(~")[0].strip()
            continue
        if cell["cell_type"] != "code":
            continue
        first = next((line for line in source.splitlines() if line.strip() and not line.startswith(("#", "%", "!"))), "")
        for name in _cell_names(source):
            found.setdefault(name, {"section": section, "first_line": first.strip()[:80]})
    return found


def names_table() -> dict[str, dict[str, dict[str, str]]]:
    """What ``assets/notebook_names.json`` holds, from the released student notebooks (``notebooks/``:
    what students run, with no solution code to leak): {notebook: {name: where it is made}}.
    ``course release`` writes it (``course_admin.grading.student_notebooks.write_names``)."""
    from course_utils.paths import NOTEBOOKS

    return {path.stem: defined_names(json.loads(path.read_text())) for path in sorted(NOTEBOOKS.glob("*.ipynb"))}
