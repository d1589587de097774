"""The cheat report: what a student's code cells do that no answer needs, for the instructor to
review. It never changes a grade (the grades are judged where student code cannot reach, see
``judging``); it points at submissions that tried.

``flags(notebook, released, tutorial)`` parses (``ast``) every code cell the student wrote or
changed (cells whose source differs from every cell of the released notebook) and lists, per
hit, the cell, the line and what it does:

- assigning to, changing (``+=``) or deleting an attribute of anything an import bound, at any
  depth (``checks.check_x = ...``, ``checks.RETURNS.judge = ...``, ``np.testing.assert_allclose
  = ...``, ``CircularReplayMemory.add = ...``; the imports of every cell count, the released
  setup cell's too), or of an object's class (``type(obj).x = ...``, ``obj.__class__.x = ...``);
  ``setattr``/``delattr`` on any of these, ``object.__setattr__``;
- a method patched on an object: a function (a ``lambda``, a ``def`` or ``class`` of the
  student's, ``partial``/``MethodType``) put on an attribute of anything but ``self`` in its own
  class's method, and any assignment to a method name the drives call (``METHOD_NAMES``, every
  ``__dunder__``) on such an object, by ``=`` or by ``setattr(obj, "state_dict", ...)``;
- ``builtins`` / ``__builtins__``, ``sys.modules``, ``importlib.reload``;
- frames and the garbage collector: ``sys._getframe``, ``sys.settrace``/``setprofile``,
  ``inspect.currentframe``/``stack``, ``gc.get_objects``/``get_referrers``, ``f_back``,
  ``f_locals``, ``f_globals``, ``ctypes``;
- IPython's hooks: ``get_ipython()`` with ``showtraceback``, ``displayhook``, ``display_pub``,
  ``events``, input or AST transformers, ``set_custom_exc``; ``sys.displayhook``/``excepthook``;
- the course's internals that no answer imports: the checks (every ``checks*`` module), the
  check framework and its records, harvested solutions, the grading package, tutorial 3's
  reference, the assets' paths;
- course code not listed for this exercise: an import of ``course_utils`` code outside
  ``allowed_course_code(tutorial)`` (the tutorial's exercises' ``helpers`` and its setup
  imports) and the released notebook's own imports; any dynamic import of ``course_utils``
  (``importlib.import_module``, ``__import__``); a dotted name through a course module
  (``colour.training.discounted_returns``) that goes deeper than the released cells go, also
  spelled ``getattr(colour, "training")``; ``getattr`` on a course module with a name computed at
  run time (``getattr(harlow, "ag" + "ent")``) and ``vars()`` of one, whatever they reach;
- a copy of code carried in the cell rather than written: ``exec``/``eval``/``compile``, bytes
  decoded into code or objects (``zlib``, ``base64``, ``marshal``, ``pickle``, ``types.CodeType``
  and the like, however imported), a string literal longer than an answer could be (a compressed
  module fits in one), ``__code__``, ``sys.meta_path``: the drive apart keeps the course's files
  from an answer, not a copy of them the answer holds (the red team's way to 42 of the 51 points);
- a class that subclasses a number, container, array or tensor type, or defines its own
  comparisons or arithmetic used by comparisons (``__eq__``, ``__array_ufunc__``, ``__abs__``...).

Cells nbgrader restores from the instructor's copy before running (hidden tests, locked cells)
are not scanned: what the student wrote in them never runs.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field

from course_admin import PACKAGE as ADMIN
from course_admin.grading.cells import cell_source, nbgrader_meta
from course_utils.paths import PACKAGE

COURSE_PACKAGES = ("course_utils", "course_admin")
"""The student package and the instructor package: imports of either are the course's."""
PACKAGE_FOLDERS = {"course_utils": PACKAGE, "course_admin": ADMIN}
INTERNALS = ("course_utils.checking", "course_utils.records", "course_admin", "course_utils.lunar.expected",
             "course_utils.paths")
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
METHOD_NAMES = {
    # torch modules and tensors, as the checks and the trainers call them
    "state_dict", "load_state_dict", "parameters", "named_parameters", "forward", "zero_grad", "backward", "step",
    "item", "numpy", "detach", "train", "eval",
    # the students' trees, memories, buffers, agents and environments, as the checks drive them
    "sum", "min", "find_prefixsum_idx", "add", "sample", "update_priorities", "write", "read", "reset", "act",
    "calc_max_entropy",
}
"""Methods the checks and the course's drivers call on a student's objects: put on an object by
assignment (not defined in its class), they are a patch whatever the value. Every ``__dunder__``
counts too."""
RUN_TIME_CODE = {"exec", "eval", "compile"}
"""Builtins that run, or make, code from a string or bytes at run time."""
DECODERS = {
    "marshal": {"loads", "load"}, "pickle": {"loads", "load"}, "dill": {"loads", "load"}, "cloudpickle": {"loads"},
    "zlib": {"decompress"}, "lzma": {"decompress"}, "bz2": {"decompress"}, "gzip": {"decompress"},
    "base64": {"b64decode", "b32decode", "b16decode", "b85decode", "a85decode", "decodebytes", "urlsafe_b64decode"},
    "codecs": {"decode"}, "binascii": {"a2b_base64", "unhexlify"}, "types": {"CodeType", "FunctionType"},
}
"""Module functions that turn bytes into code or objects (by module, however the import names it):
what carries a copy of the course's code into an answer cell without its text."""
LONG_LITERAL = 2_000
"""Characters in one string literal of an answer cell past which it is an embedded payload (a
whole module, compressed and encoded, fits in one): no exercise's answer holds text this long."""
FUNCTION_FACTORIES = {"partial", "MethodType", "FunctionType"}
"""Calls whose result is a function (``functools.partial``, ``types.MethodType``...)."""


def _internal(module: str) -> bool:
    parts = module.split(".")
    return module.startswith(INTERNALS) or (
        parts[0] == "course_utils" and any(p.startswith("checks") for p in parts[1:])
    )


def _course_module(dotted: str) -> bool:
    """Whether ``dotted`` names a module or package of the course (a file of the student or the
    instructor package), not a name defined in one."""
    parts = dotted.split(".")
    if parts[0] not in COURSE_PACKAGES:
        return False
    path = PACKAGE_FOLDERS[parts[0]].joinpath(*parts[1:])
    return (path / "__init__.py").is_file() or path.with_suffix(".py").is_file()


def _course_imports(tree: ast.AST) -> set[str]:
    """The ``"module:name"`` of every ``course_utils`` import in ``tree`` (``import a.b.c`` is
    ``"a.b:c"``; ``from a import *`` is ``"a:*"``)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] in COURSE_PACKAGES:
            found |= {f"{node.module}:{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            for alias in node.names:
                module, _, name = alias.name.rpartition(".")
                if module.split(".")[0] in COURSE_PACKAGES:
                    found.add(f"{module}:{name}")
    return found


def allowed_course_code(tutorial: str | None) -> set[str]:
    """The course code a tutorial's answers may use, as ``"module:name"``: every ``helpers``
    entry of its exercises in ``exercises.GRADED`` and the imports its notebook's setup cell
    gives the solution cells (``exercises.SOLUTION_IMPORTS``). Empty for an unknown tutorial."""
    from course_admin.exercises import GRADED, SOLUTION_IMPORTS

    allowed = {helper for cell in GRADED if cell.tutorial == tutorial for helper in cell.helpers}
    return allowed | _course_imports(ast.parse(SOLUTION_IMPORTS.get(tutorial, "")))


def tutorial_of(assignment: str | None) -> str | None:
    """The tutorial subpackage of an assignment (a notebook's name), None if not a tutorial."""
    from course_admin.exercises import TUTORIALS

    return next((tutorial for tutorial, notebook in TUTORIALS.items() if notebook == assignment), None)


def _dotted(node) -> list[str] | None:
    """``a.b.c`` as ``["a", "b", "c"]``; None if the chain does not start at a name."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return [node.id, *reversed(parts)] if isinstance(node, ast.Name) else None


def _root(node):
    """The expression an attribute or item chain starts from (``type(x)`` in ``type(x).a[0].b``)."""
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node


def _bindings(trees: list[ast.AST]) -> dict[str, str]:
    """Names bound by an import: {name: the dotted module or name it stands for} (a relative
    import's starts with its dots)."""
    bound = {}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    dotted = alias.name if alias.asname else alias.name.split(".")[0]
                    bound[alias.asname or dotted] = dotted
            elif isinstance(node, ast.ImportFrom):
                module = "." * node.level + (node.module or "")
                bound |= {alias.asname or alias.name: f"{module}.{alias.name}" for alias in node.names}
    return bound


def _course_bindings(trees: list[ast.AST]) -> dict[str, str]:
    """Names bound to a course module by an import: {name: dotted module}."""
    return {name: dotted for name, dotted in _bindings(trees).items() if _course_module(dotted)}


def _outer_chains(tree: ast.AST) -> list[ast.Attribute]:
    """Every attribute chain of ``tree`` taken whole (``a.b.c``, not also ``a.b``)."""
    inner = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    return [node for node in ast.walk(tree) if isinstance(node, ast.Attribute) and id(node) not in inner]


def _segments_prefix(short: str, long: str) -> bool:
    return long == short or long.startswith(short + ".")


@dataclass
class _CourseCode:
    """What course code the notebook gives: allowed ``module.name`` (and whether each is a
    module, through which nothing deeper is given), and the dotted names its released cells
    reach through course modules."""

    allowed: dict[str, bool] = field(default_factory=dict)
    released_chains: set[str] = field(default_factory=set)

    def given(self, dotted: str) -> bool:
        for name, is_module in self.allowed.items():
            if name.endswith(".*") and _segments_prefix(name[:-2], dotted):
                return True
            if _segments_prefix(dotted, name) or (not is_module and _segments_prefix(name, dotted)):
                return True
        return any(_segments_prefix(dotted, chain) for chain in self.released_chains)


@dataclass
class _Names:
    """What the scanned cells' names stand for."""

    imported: set[str]  # bound by an import in any cell (the released notebook's too)
    modules: dict[str, str]  # what each imported name stands for: {name: dotted module or name}
    functions: set[str]  # defined by a def or class in the student's cells
    course: dict[str, str]  # bound to a course module: {name: dotted module}
    code: _CourseCode


class _Scanner(ast.NodeVisitor):
    def __init__(self, names: _Names):
        self.names = names
        self.hits: list[tuple[int, str]] = []
        self.methods: set[int] = set()  # ids of functions defined directly in a class body
        self.own = [None]  # the instance parameter (``self``) of the method being scanned, if any

    def hit(self, node, what: str) -> None:
        self.hits.append((getattr(node, "lineno", 0), what))

    def scan(self, tree: ast.AST) -> None:
        self.visit(tree)
        for chain in _outer_chains(tree):
            parts = _dotted(chain)
            if parts and parts[0] in self.names.course:
                dotted = ".".join([self.names.course[parts[0]], *parts[1:]])
                self._reached(chain, dotted, f"through {'.'.join(parts)}")

    def _unlisted(self, node, dotted: str, how: str) -> None:
        self.hit(node, f"uses course code not listed for this exercise: {dotted} ({how})")

    def _reached(self, node, dotted: str, how: str) -> None:
        """``dotted``, reached through a course module, is flagged unless it is internal (flagged
        on its import) or given to this exercise."""
        if not _internal(dotted) and not self.names.code.given(dotted):
            self._unlisted(node, dotted, how)

    def visit_Import(self, node):  # noqa: N802 (ast's name)
        for alias in node.names:
            if alias.name in ("builtins", "ctypes") or _internal(alias.name):
                self.hit(node, f"imports {alias.name}")
            elif alias.name.split(".")[0] in COURSE_PACKAGES and not self.names.code.given(alias.name):
                self._unlisted(node, alias.name, "imported")
        self.generic_visit(node)

    def visit_ImportFrom(self, node):  # noqa: N802
        module = node.module or ""
        if module in ("builtins", "ctypes") or _internal(module):
            self.hit(node, f"imports from {module}")
        else:
            for alias in node.names:
                dotted = f"{module}.{alias.name}"
                if _internal(dotted):
                    self.hit(node, f"imports {dotted}")
                elif module.split(".")[0] in COURSE_PACKAGES and not node.level and not self.names.code.given(dotted):
                    self._unlisted(node, dotted, "imported")
        self.generic_visit(node)

    def visit_ClassDef(self, node):  # noqa: N802
        bases = {ast.unparse(base) for base in node.bases}
        rigged = bases & RIGGED_BASES
        if rigged:
            self.hit(node, f"subclasses {', '.join(sorted(rigged))}")
        for item in node.body:
            if isinstance(item, ast.FunctionDef) and item.name in COMPARISONS:
                self.hit(item, f"defines {item.name} in class {node.name}")
        self.methods |= {id(item) for item in node.body if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)}
        self.own.append(None)  # a class body is not its methods: no instance there
        self.generic_visit(node)
        self.own.pop()

    def visit_FunctionDef(self, node):  # noqa: N802
        params = [*node.args.posonlyargs, *node.args.args]
        if id(node) in self.methods:
            self.own.append(params[0].arg if params else None)
        else:  # a function nested in a method still sees its instance, unless it rebinds the name
            self.own.append(None if self.own[-1] in {p.arg for p in params} else self.own[-1])
        self.generic_visit(node)
        self.own.pop()

    visit_AsyncFunctionDef = visit_FunctionDef  # noqa: N815

    def _function(self, value) -> bool:
        """Whether ``value`` is, as written, a function or a class."""
        if isinstance(value, ast.Lambda):
            return True
        if isinstance(value, ast.Name):
            return value.id in self.names.functions
        if isinstance(value, ast.Call):
            func = value.func
            return (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)) in FUNCTION_FACTORIES
        return isinstance(value, ast.Attribute) and _method_name(value.attr)

    def _on_own_instance(self, obj) -> bool:
        return isinstance(obj, ast.Name) and self.own[-1] is not None and obj.id == self.own[-1]

    def _whose(self, obj) -> str | None:
        """Why changing an attribute of ``obj`` (the object before the last ``.name``) patches
        code that is not the student's: "the imported X", "an object's class", or None."""
        root = _root(obj)
        if isinstance(root, ast.Name) and root.id in self.names.imported:
            return f"the imported {root.id}"
        if isinstance(root, ast.Call) and isinstance(root.func, ast.Name) and root.func.id == "type":
            return "an object's class"
        node = obj
        while isinstance(node, ast.Attribute | ast.Subscript):
            if isinstance(node, ast.Attribute) and node.attr == "__class__":
                return "an object's class"
            node = node.value
        return None

    def _target(self, target, verb: str, value=None) -> None:
        if isinstance(target, ast.Tuple | ast.List):
            for element in target.elts:
                self._target(element, verb, None)
            return
        if isinstance(target, ast.Starred):
            self._target(target.value, verb, None)
            return
        obj = target.value if isinstance(target, ast.Attribute) else None
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Attribute) and target.value.attr == "__dict__":
            # ``mod.__dict__["name"] = ...`` is ``mod.name = ...``; other items (``plt.rcParams[...]``) are settings
            obj = target.value.value
        if obj is None:
            return
        text = ast.unparse(target)
        whose = self._whose(obj)
        if whose:
            self.hit(target, f"{verb} {text} (an attribute of {whose})")
        elif (isinstance(target, ast.Attribute) and verb == "replaces" and not self._on_own_instance(obj)
              and (_method_name(target.attr) or self._function(value))):
            self.hit(target, f"replaces {text} with {'a function' if self._function(value) else 'a value'}"
                             " (a method patched on an object)")

    def visit_Assign(self, node):  # noqa: N802
        for target in node.targets:
            self._target(target, "replaces", node.value)
        self.generic_visit(node)

    def visit_AnnAssign(self, node):  # noqa: N802
        if node.value is not None:
            self._target(node.target, "replaces", node.value)
        self.generic_visit(node)

    def visit_AugAssign(self, node):  # noqa: N802
        self._target(node.target, "changes")
        self.generic_visit(node)

    def visit_Delete(self, node):  # noqa: N802
        for target in node.targets:
            self._target(target, "deletes")
        self.generic_visit(node)

    def _setattr(self, node, name: str) -> None:
        obj = node.args[0]
        text = ast.unparse(obj)
        whose = self._whose(obj) if not isinstance(obj, ast.Name) else None
        if isinstance(obj, ast.Name) and obj.id in self.names.imported:
            self.hit(node, f"{name} on the imported {obj.id}")
        elif whose:
            self.hit(node, f"{name} on {text} (an attribute of {whose})")
        elif not self._on_own_instance(obj):
            attribute = node.args[1] if len(node.args) > 1 else None
            literal = attribute.value if isinstance(attribute, ast.Constant) and isinstance(attribute.value, str) else None
            if literal is not None and _method_name(literal):
                self.hit(node, f"{name} on {text}: its method {literal!r} (a method patched on an object)")
            elif name == "setattr" and len(node.args) > 2 and self._function(node.args[2]):
                self.hit(node, f"setattr on {text} with a function (a method patched on an object)")

    def visit_Call(self, node):  # noqa: N802
        func = node.func
        if isinstance(func, ast.Name) and func.id in ("setattr", "delattr") and node.args:
            self._setattr(node, func.id)
        if isinstance(func, ast.Attribute) and func.attr in ("__setattr__", "__delattr__"):
            self.hit(node, f"calls {func.attr} directly")
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and (func.value.id, func.attr) in FRAME_CALLS:
            self.hit(node, f"calls {func.value.id}.{func.attr}")
        if isinstance(func, ast.Name) and func.id == "get_ipython":
            self.hit(node, "uses get_ipython()")
        if isinstance(func, ast.Name) and func.id in RUN_TIME_CODE:
            self.hit(node, f"runs code built at run time ({func.id})")
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            module, attr = self.names.modules.get(func.value.id, func.value.id).split(".")[-1], func.attr
        elif isinstance(func, ast.Name) and "." in self.names.modules.get(func.id, ""):  # from zlib import decompress
            module, _, attr = self.names.modules[func.id].rpartition(".")
            module = module.split(".")[-1]
        else:
            module = attr = None
        if attr in DECODERS.get(module, ()):
            self.hit(node, f"decodes bytes into code or objects ({module}.{attr})")
        if isinstance(func, ast.Name) and func.id in ("getattr", "vars") and node.args:
            self._course_lookup(node, func.id)
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if called in ("import_module", "__import__") and node.args:
            leading = _leading_text(node.args[0])
            if leading is not None and leading.split(".")[0] in COURSE_PACKAGES:
                shown = leading if isinstance(node.args[0], ast.Constant) else ast.unparse(node.args[0])
                self._unlisted(node, shown, "imported dynamically")
        self.generic_visit(node)

    def _course_lookup(self, node: ast.Call, how: str) -> None:
        """``getattr(<course module>, name)`` is the dotted name ``module.name`` when ``name`` is
        written out, and course code found by a name computed at run time otherwise
        (``getattr(harlow, "ag" + "ent")``); ``vars(<course module>)`` hands out all of it."""
        parts = _dotted(node.args[0])
        if not parts or parts[0] not in self.names.course:
            return
        module = ".".join([self.names.course[parts[0]], *parts[1:]])
        name = node.args[1] if how == "getattr" and len(node.args) > 1 else None
        if isinstance(name, ast.Constant) and isinstance(name.value, str):
            dotted = f"{module}.{name.value}"
            self._reached(node, dotted, f"through getattr({'.'.join(parts)}, {name.value!r})")
        else:
            self.hit(node, f"reads course code by a name computed at run time ({ast.unparse(node)[:80]})")

    def visit_Attribute(self, node):  # noqa: N802
        if node.attr in FRAME_ATTRIBUTES:
            self.hit(node, f"reads frames ({node.attr})")
        if isinstance(node.value, ast.Name) and node.value.id == "sys" and node.attr in (
                "modules", "displayhook", "excepthook", "meta_path", "path_hooks"):
            self.hit(node, f"uses sys.{node.attr}")
        if node.attr == "__code__":
            self.hit(node, "reads or replaces a function's __code__")
        if node.attr in IPYTHON_HOOKS and not (isinstance(node.value, ast.Name) and node.value.id == "self"):
            self.hit(node, f"touches IPython's {node.attr}")
        self.generic_visit(node)

    def visit_Name(self, node):  # noqa: N802
        if node.id == "__builtins__":
            self.hit(node, "uses __builtins__")

    def visit_Constant(self, node):  # noqa: N802
        if isinstance(node.value, str | bytes) and len(node.value) > LONG_LITERAL:
            self.hit(node, f"holds a literal of {len(node.value):,} characters (an embedded payload, not an answer)")


def _method_name(name: str) -> bool:
    return name in METHOD_NAMES or (len(name) > 4 and name.startswith("__") and name.endswith("__"))


def _leading_text(node) -> str | None:
    """The text a string argument starts with, as written: a literal, or an f-string's first part."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
        return str(node.values[0].value)
    return None


def _functions_defined(trees: list[ast.AST]) -> set[str]:
    return {node.name for tree in trees for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}


def _grade_id(cell: dict):
    grade_id = nbgrader_meta(cell).get("grade_id")
    return grade_id if isinstance(grade_id, str) else None


def _restored(cell: dict) -> bool:
    """A released cell nbgrader puts back from the instructor's copy (locked, or a test)."""
    meta = nbgrader_meta(cell)
    return bool(meta.get("locked") or (meta.get("grade") and not meta.get("solution")))


def _parse(source: str) -> ast.AST | None:
    try:
        # IPython magics and shell escapes are not Python: blank them out, keep the lines.
        text = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _course_code(released_trees: list[ast.AST], tutorial: str | None) -> _CourseCode:
    allowed = allowed_course_code(tutorial)
    for tree in released_trees:
        allowed |= _course_imports(tree)
    code = _CourseCode()
    for entry in allowed:
        module, _, name = entry.partition(":")
        dotted = f"{module}.{name}"
        code.allowed[dotted] = name != "*" and _course_module(dotted)
    bound = _course_bindings(released_trees)
    for tree in released_trees:
        for chain in _outer_chains(tree):
            parts = _dotted(chain)
            if parts and parts[0] in bound:
                code.released_chains.add(".".join([bound[parts[0]], *parts[1:]]))
    return code


def flags(notebook: bytes | dict, released: dict, tutorial: str | None = None) -> list[str]:
    """What the student's own code cells do that no answer needs: "cell N line L: what".

    ``tutorial``: the tutorial subpackage (``"colour"``, see ``tutorial_of``) whose exercises'
    course code the answers may use (``allowed_course_code``); None: only what the released
    notebook imports."""
    if isinstance(notebook, bytes | str):
        try:
            notebook = json.loads(notebook)
        except ValueError:
            return []
    released_code = [cell_source(c) for c in released.get("cells", []) if isinstance(c, dict) and c.get("cell_type") == "code"]
    given = {source.strip() for source in released_code}
    restored = {_grade_id(cell) for cell in released.get("cells", []) if _restored(cell)} - {None}
    cells = [
        (i, cell_source(c))
        for i, c in enumerate(notebook.get("cells", []))
        if isinstance(c, dict) and c.get("cell_type") == "code" and _grade_id(c) not in restored
    ]
    trees = [(index, tree) for index, source in cells if source.strip() not in given and (tree := _parse(source))]
    released_trees = [tree for source in released_code if (tree := _parse(source))]
    # Names the setup cell binds (np, checks...) are as much the kernel's as those the student binds.
    student_trees = [tree for _, tree in trees]
    every_tree = released_trees + student_trees
    bound = _bindings(every_tree)
    names = _Names(
        imported=set(bound) - {"self"},
        modules=bound,
        functions=_functions_defined(student_trees),
        course={name: dotted for name, dotted in bound.items() if _course_module(dotted)},
        code=_course_code(released_trees, tutorial),
    )
    found = []
    for index, tree in trees:
        scanner = _Scanner(names)
        try:
            scanner.scan(tree)
        except RecursionError:
            found.append(f"cell {index + 1}: nested too deeply to scan")
            continue
        found += [f"cell {index + 1} line {line}: {what}" for line, what in sorted(set(scanner.hits))]
    return found
