"""The cheat report: what a student's code cells do that no answer needs, for the instructor to
review. It never changes a grade (the grades are judged where student code cannot reach, see
``judging``); it points at submissions that tried.

``flags(notebook, released)`` parses (``ast``) every code cell the student wrote or changed
(cells whose source differs from every cell of the released notebook) and lists, per hit, the
cell, the line and what it does:

- assigning to, or deleting, an attribute of an imported module (``checks.check_x = ...``),
  ``setattr``/``delattr`` on one, ``object.__setattr__``;
- ``builtins`` / ``__builtins__``, ``sys.modules``, ``importlib.reload``;
- frames and the garbage collector: ``sys._getframe``, ``sys.settrace``/``setprofile``,
  ``inspect.currentframe``/``stack``, ``gc.get_objects``/``get_referrers``, ``f_back``,
  ``f_locals``, ``f_globals``, ``ctypes``;
- IPython's hooks: ``get_ipython()`` with ``showtraceback``, ``displayhook``, ``display_pub``,
  ``events``, input or AST transformers, ``set_custom_exc``; ``sys.displayhook``/``excepthook``;
- the course's internals that no answer imports: the checks, the check framework and its
  records, harvested solutions, the grading package, tutorial 3's reference, the assets' paths;
- a class that subclasses a number, container, array or tensor type, or defines its own
  comparisons or arithmetic used by comparisons (``__eq__``, ``__array_ufunc__``, ``__abs__``...).

Cells nbgrader restores from the instructor's copy before running (hidden tests, locked cells)
are not scanned: what the student wrote in them never runs.
"""

from __future__ import annotations

import ast
import json

INTERNALS = ("course_utils.checking", "course_utils.records", "course_utils.grading", "course_utils.lunar.reference",
             "course_utils.lunar.expected", "course_utils.paths")
INTERNAL_PARTS = ("checks", "solutions")
FRAME_CALLS = {
    ("sys", "_getframe"), ("sys", "settrace"), ("sys", "setprofile"), ("inspect", "currentframe"), ("inspect", "stack"),
    ("inspect", "getouterframes"), ("gc", "get_objects"), ("gc", "get_referrers"), ("gc", "get_referents"),
    ("importlib", "reload"),
}
FRAME_ATTRIBUTES = {"f_back", "f_locals", "f_globals", "tb_frame", "gi_frame", "cr_frame"}
RIGGED_BASES = {"float", "int", "list", "tuple", "dict", "str", "np.ndarray", "numpy.ndarray", "ndarray", "np.float64",
                "torch.Tensor", "Tensor"}
COMPARISONS = {"__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__array_ufunc__", "__array_function__",
               "__torch_function__", "__abs__", "__sub__", "__rsub__", "__bool__"}
IPYTHON_HOOKS = {"showtraceback", "_showtraceback", "displayhook", "display_pub", "events", "input_transformers_post",
                 "input_transformers_cleanup", "ast_transformers", "set_custom_exc", "excepthook", "showsyntaxerror"}


def _internal(module: str) -> bool:
    parts = module.split(".")
    return module.startswith(INTERNALS) or (parts[0] == "course_utils" and any(p in INTERNAL_PARTS for p in parts[1:]))


class _Scanner(ast.NodeVisitor):
    def __init__(self, modules: set[str]):
        self.modules = modules  # names bound by an import in any cell
        self.hits: list[tuple[int, str]] = []

    def hit(self, node, what: str) -> None:
        self.hits.append((getattr(node, "lineno", 0), what))

    def visit_Import(self, node):  # noqa: N802 (ast's name)
        for alias in node.names:
            if alias.name in ("builtins", "ctypes") or _internal(alias.name):
                self.hit(node, f"imports {alias.name}")
        self.generic_visit(node)

    def visit_ImportFrom(self, node):  # noqa: N802
        module = node.module or ""
        if module in ("builtins", "ctypes") or _internal(module):
            self.hit(node, f"imports from {module}")
        else:
            for alias in node.names:
                if _internal(f"{module}.{alias.name}"):
                    self.hit(node, f"imports {module}.{alias.name}")
        self.generic_visit(node)

    def visit_ClassDef(self, node):  # noqa: N802
        bases = {ast.unparse(base) for base in node.bases}
        rigged = bases & RIGGED_BASES
        if rigged:
            self.hit(node, f"subclasses {', '.join(sorted(rigged))}")
        for item in node.body:
            if isinstance(item, ast.FunctionDef) and item.name in COMPARISONS:
                self.hit(item, f"defines {item.name} in class {node.name}")
        self.generic_visit(node)

    def _target(self, target, verb: str) -> None:
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id in self.modules:
            self.hit(target, f"{verb} {target.value.id}.{target.attr} (an attribute of an imported module)")

    def visit_Assign(self, node):  # noqa: N802
        for target in node.targets:
            self._target(target, "replaces")
        self.generic_visit(node)

    def visit_AugAssign(self, node):  # noqa: N802
        self._target(node.target, "changes")
        self.generic_visit(node)

    def visit_Delete(self, node):  # noqa: N802
        for target in node.targets:
            self._target(target, "deletes")
        self.generic_visit(node)

    def visit_Call(self, node):  # noqa: N802
        func = node.func
        if isinstance(func, ast.Name) and func.id in ("setattr", "delattr") and node.args:
            first = node.args[0]
            if isinstance(first, ast.Name) and first.id in self.modules:
                self.hit(node, f"{func.id} on the module {first.id}")
        if isinstance(func, ast.Attribute) and func.attr in ("__setattr__", "__delattr__"):
            self.hit(node, f"calls {func.attr} directly")
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and (func.value.id, func.attr) in FRAME_CALLS:
            self.hit(node, f"calls {func.value.id}.{func.attr}")
        if isinstance(func, ast.Name) and func.id == "get_ipython":
            self.hit(node, "uses get_ipython()")
        self.generic_visit(node)

    def visit_Attribute(self, node):  # noqa: N802
        if node.attr in FRAME_ATTRIBUTES:
            self.hit(node, f"reads frames ({node.attr})")
        if isinstance(node.value, ast.Name) and node.value.id == "sys" and node.attr in ("modules", "displayhook", "excepthook"):
            self.hit(node, f"uses sys.{node.attr}")
        if node.attr in IPYTHON_HOOKS and not (isinstance(node.value, ast.Name) and node.value.id == "self"):
            self.hit(node, f"touches IPython's {node.attr}")
        self.generic_visit(node)

    def visit_Name(self, node):  # noqa: N802
        if node.id == "__builtins__":
            self.hit(node, "uses __builtins__")


def _modules_bound(trees: list[ast.AST]) -> set[str]:
    names = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                names |= {alias.asname or alias.name for alias in node.names}
    return names


def _nbgrader(cell: dict) -> dict:
    meta = cell.get("metadata") if isinstance(cell.get("metadata"), dict) else {}
    return meta.get("nbgrader") if isinstance(meta.get("nbgrader"), dict) else {}


def _grade_id(cell: dict):
    grade_id = _nbgrader(cell).get("grade_id")
    return grade_id if isinstance(grade_id, str) else None


def _restored(cell: dict) -> bool:
    """A released cell nbgrader puts back from the instructor's copy (locked, or a test)."""
    meta = _nbgrader(cell)
    return bool(meta.get("locked") or (meta.get("grade") and not meta.get("solution")))


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def flags(notebook: bytes | dict, released: dict) -> list[str]:
    """What the student's own code cells do that no answer needs: "cell N line L: what"."""
    if isinstance(notebook, bytes | str):
        try:
            notebook = json.loads(notebook)
        except ValueError:
            return []
    given = {_source(cell).strip() for cell in released.get("cells", []) if cell.get("cell_type") == "code"}
    restored = {_grade_id(cell) for cell in released.get("cells", []) if _restored(cell)} - {None}
    cells = [
        (i, _source(c))
        for i, c in enumerate(notebook.get("cells", []))
        if isinstance(c, dict) and c.get("cell_type") == "code" and _grade_id(c) not in restored
    ]
    trees = []
    for index, source in cells:
        if source.strip() in given:
            continue
        try:
            # IPython magics and shell escapes are not Python: blank them out, keep the lines.
            text = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
            trees.append((index, ast.parse(text)))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
    modules = _modules_bound([tree for _, tree in trees]) - {"self"}
    found = []
    for index, tree in trees:
        scanner = _Scanner(modules)
        try:
            scanner.visit(tree)
        except RecursionError:
            found.append(f"cell {index + 1}: nested too deeply to scan")
            continue
        found += [f"cell {index + 1} line {line}: {what}" for line, what in sorted(set(scanner.hits))]
    return found
