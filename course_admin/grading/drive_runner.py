"""The process that drives a submission's answers on the hidden cases, one exercise at a time,
where only the course code that exercise gives its answer exists (``drive_apart`` starts it).

Run as a script: ``python drive_runner.py SPEC.json < JOB.json > RESULTS.json``. ``SPEC`` is the
sandbox spec of the submission (``sandbox.launch_kernel``'s: limits, process tree); ``JOB`` is
``{"exercises": [{"grade_id", "header", "answers", "hidden", "hidden_cases", "check_modules", "package_files",
"workdir", "timed"}...]}`` (``hidden_cases``: the exercise's hidden cases, which only the grader holds, pickled;
``timed``: the module of an exercise's check when it has a speed part, else None).
The runner joins the submission's process tree, takes its rlimits, drops root's capabilities,
imports the libraries every answer may use (NumPy, torch, IPython's cell transformer), and then,
for each exercise, forks a child that:

1. restricts itself with Landlock to the Python installation and the course files in
   ``package_files`` (the exercise's own check, the check framework, and the modules its header
   imports; computed by ``drive_apart.package_files``), writing only in a folder of its own
   (removed after it): any other course module, however the answer reaches for it (an import, a
   re-export, ``importlib``, reading the file), is not there to be used; and with seccomp
   (``restrict_syscalls``, ``restrict_alone``) it starts no process and opens no socket, message
   queue or shared memory, so that nothing it computes reaches the child of another exercise
   (every answer cell runs in every child, where other twins may be readable) and no process the
   notebook's run left behind can compute for it;
2. registers the course's subpackages without running their ``__init__`` (which would import the
   whole tutorial), so that ``import course_utils.replay.checks`` loads that module alone;
3. runs the exercise's header (the imports its answer is given), every answer cell of the
   notebook (the student's own code: later answers build on earlier ones), then the hidden-test
   cell, whose ``Exercise.submit`` hands its record to this process instead of displaying it;
4. writes one JSON line: the hidden cell's record, and notes on what the answer reached for and
   could not have (a course module outside its list, a name of the notebook's setup cell).

An exercise with a speed part (``timed`` in the job: ``checking.Timed``) has a second child, set
up the same way, whose hidden cell runs only that part: it builds what is timed, says it is ready,
and answers steps the runner hands over one at a time (``timed_steps``; each only once the previous one
is answered). The runner reads that child's CPU time from the kernel (its CPU-time clock) around
every block of steps, and adds to the exercise's result what it measured (``measured``: the
answers, how many, their CPU seconds by part): figures no process of the answer's wrote.

The runner itself never runs student code, and holds nothing a child could use: the children
see the runner's memory (``fork``), which holds the libraries, this file and the job. Standard
library only at import time, like ``sandbox.py``: the course package is imported only inside the
children, after Landlock.
"""

from __future__ import annotations

import base64
import io
import json
import os
import pickle
import select
import shutil
import signal
import sys
import tempfile
import time
import traceback
import types
from pathlib import Path

if __package__:
    from course_admin.grading import course_state
    from course_admin.grading.kernel_restrictions import (
        PACKAGE,
        drop_capabilities,
        restrict_alone,
        restrict_self,
        restrict_syscalls,
        set_limits,
    )
    from course_admin.grading.process_tree import ProcessTree
    from course_admin.grading.timed_steps import Steps, measure, unload
else:  # run as a script: its folder is sys.path[0], and the course package stays unloaded
    import course_state
    from kernel_restrictions import PACKAGE, drop_capabilities, restrict_alone, restrict_self, restrict_syscalls, set_limits
    from process_tree import ProcessTree
    from timed_steps import Steps, measure, unload

ANSWER_CELL_SECONDS = 60.0
"""Time limit for running one answer cell (definitions, and whatever else a student put there)."""
NOT_GIVEN = "not available to this exercise's answer when it is graded"
"""How a blocked course module is named in the answer's error and in the notes."""


class _Shell:
    """What ``get_ipython()`` returns to an answer cell run here: magics do nothing."""

    def run_line_magic(self, *args, **kwargs):
        return None

    def run_cell_magic(self, *args, **kwargs):
        return None

    def system(self, *args, **kwargs):
        return None

    def __getattr__(self, name):
        raise AttributeError(f"get_ipython().{name} is not available when answers are graded")


class _CourseGate:
    """A meta-path finder that names a course module outside the exercise's list when an answer
    imports it (Landlock is what keeps it out; this only makes the error say why)."""

    def __init__(self, allowed: set[str], notes: list[str]):
        self.allowed, self.notes = allowed, notes
        self.elsewhere = ""  # while another exercise's answer cell runs: which one ("" for this exercise's code)

    def find_spec(self, name, path=None, target=None):
        course = name.split(".")[0] in ("course_utils", "course_admin")
        if course and name not in self.allowed:
            # Every answer cell runs here; a cell of another exercise that loads what this one may
            # not is that exercise's business, and must not become this exercise's reason.
            note = (f"{self.elsewhere} could not run here: it loads {name}, which this exercise does not give"
                    if self.elsewhere else f"{name} is {NOT_GIVEN}")
            if note not in self.notes:
                self.notes.append(note)
            raise ModuleNotFoundError(f"{name} is {NOT_GIVEN} (only the code the exercise gives you is)", name=name)
        return None


def _register_packages() -> None:
    """Every subpackage of the course as an empty package object (``__path__`` set, ``__init__``
    not run), so importing one module of it loads that module and what it imports, no more."""
    import importlib.machinery

    for init in sorted(PACKAGE.rglob("__init__.py")):
        folder = init.parent
        if folder == PACKAGE or "__pycache__" in folder.parts:
            continue
        name = ".".join(("course_utils", *folder.relative_to(PACKAGE).parts))
        module = types.ModuleType(name)
        module.__path__ = [str(folder)]
        module.__file__ = None
        module.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
        module.__spec__.submodule_search_locations = [str(folder)]
        module.__package__ = name
        sys.modules[name] = module
        parent, _, child = name.rpartition(".")
        setattr(sys.modules[parent], child, module)


def _allowed_modules(package_files: list[str]) -> set[str]:
    names = {"course_utils"}
    for file in package_files:
        parts = Path(file).resolve().relative_to(PACKAGE).with_suffix("").parts
        parts = parts[:-1] if parts[-1] == "__init__" else parts
        names.add(".".join(("course_utils", *parts)))
        names |= {".".join(("course_utils", *parts[:k])) for k in range(1, len(parts))}
    return names


def _undefined_names(code: types.CodeType, namespace: dict, seen: set) -> set[str]:
    """Global names an answer's code reads that nothing defined here (recursively into nested
    functions, classes, lambdas and comprehensions).

    Only the names the bytecode reads as globals count (``LOAD_GLOBAL``; ``LOAD_NAME`` in a class
    body, before the body binds that name itself): ``code.co_names`` also holds attribute names,
    so ``self.env`` would read as the setup cell's ``env``."""
    import builtins
    import dis

    if code in seen:
        return set()
    seen.add(code)
    missing, bound = set(), set()
    for instruction in dis.get_instructions(code):
        name = instruction.argval
        if instruction.opname == "STORE_NAME":
            bound.add(name)
        elif instruction.opname == "LOAD_GLOBAL" or (instruction.opname == "LOAD_NAME" and name not in bound):
            if name not in namespace and not hasattr(builtins, name):
                missing.add(name)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            missing |= _undefined_names(const, namespace, seen)
    return missing


def _run_cell(source: str, namespace: dict, transform, seconds: float | None = None) -> str | None:
    """Run one cell's source in ``namespace``: None, or what it raised (one line). ``seconds``:
    a time limit for an answer cell (the hidden cell's calls have the checks' own limits, and the
    whole child the runner's)."""
    from course_utils.checking import Timeout, time_limit

    try:
        code = compile(transform(source), "<answer cell>", "exec")
    except SyntaxError as error:
        return f"SyntaxError: {error.msg} (line {error.lineno})"
    try:
        if seconds is None:
            exec(code, namespace)
        else:
            with time_limit(seconds):
                exec(code, namespace)
    except Timeout:
        return f"it ran for more than {seconds:g} s"
    except BaseException as error:  # noqa: BLE001 (any failure of student code is a note, not a crash)
        frames = traceback.extract_tb(error.__traceback__)
        line = next((f" (line {f.lineno})" for f in reversed(frames) if f.filename == "<answer cell>"), "")
        return f"{type(error).__name__}: {str(error)[:300]}{line}"
    return None


def _import_checks(modules: list[str]) -> None:
    """Import the course modules the hidden cell imports (its check; ``drive_apart.build_job``
    lists them) before the answers run, so that ``course_state.snapshot`` keeps them as the
    course wrote them."""
    import importlib

    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 (the hidden cell reports its own failure)
            pass


def _names(changed: list[str]) -> str:
    return ", ".join(changed[:4]) + (f" and {len(changed) - 4} more" if len(changed) > 4 else "")


def drive_one(exercise: dict, transform, out, steps: Steps | None = None) -> None:
    """In the forked child: restrict, run the header, the answers and the hidden cell; write the
    result as one JSON line to ``out`` (a binary file). With ``steps`` (a ``_Steps``), the hidden
    cell runs only the exercise's speed part, on the steps it hands over (``timed_steps``)."""
    notes: list[str] = []
    result = {"grade_id": exercise["grade_id"], "payload": None, "notes": notes}
    try:
        package_files = exercise["package_files"]
        workdir = Path(exercise["own_workdir"])  # this exercise's alone: nothing written here reaches another
        os.chdir(workdir)
        os.environ["TMPDIR"] = str(workdir)
        tempfile.tempdir = None
        if exercise.get("landlock", True):
            try:
                restrict_self(workdir, [Path(f) for f in package_files])
            except OSError as error:  # only the import gate below then keeps other course code out
                result["sandbox"] = f"no filesystem restriction ({error})"
        try:
            restrict_syscalls()
            restrict_alone()
        except OSError as error:  # the tests' own machine is x86-64 Linux; elsewhere say what is missing
            result["sandbox"] = f"{result.get('sandbox', '')} no system-call filter ({error})".strip()
        gate = _CourseGate(_allowed_modules(package_files), notes)
        sys.meta_path.insert(0, gate)
        from course_utils import checking

        sink: list = []
        checking.SUBMISSIONS = sink
        checking.TIMED_APART = steps
        if exercise.get("hidden_cases") is not None:
            checking.HIDDEN_CASES[exercise["grade_id"]] = pickle.loads(base64.b64decode(exercise["hidden_cases"]))  # noqa: S301
        namespace = {"__name__": "__main__", "__builtins__": __builtins__, "get_ipython": lambda: _Shell()}
        devnull = io.StringIO()
        sys.stdout = sys.stderr = devnull
        failed = _run_cell(exercise["header"], namespace, lambda s: s)
        if failed:
            notes.append(f"the exercise's own imports failed here ({failed}): tell the course's maintainers")
        _import_checks(exercise.get("check_modules", []))
        before = course_state.snapshot()
        for index, source in exercise["answers"]:
            own = index == exercise.get("own_answer")
            gate.elsewhere = "" if own else f"the answer cell {index + 1} of another exercise"
            failed = _run_cell(source, namespace, transform, ANSWER_CELL_SECONDS)
            if failed and own:
                notes.append(f"your answer cell, run on its own with the code the exercise gives, raised {failed}")
        gate.elsewhere = ""  # from here on, what loads a module is this exercise's answer, called by its test
        missing = set()
        for name in exercise.get("answer_names", ()):
            value = namespace.get(name)
            for code in _codes_of(value):
                missing |= _undefined_names(code, namespace, set())
        setup = set(exercise.get("setup_names", ()))
        for name in sorted(missing & setup):
            notes.append(f"your answer uses `{name}`, which the notebook's setup cell binds but this exercise does not "
                         "give its answer: use only the names the exercise gives you")
        changed = course_state.restore(before)
        if changed:
            notes.append(f"your answer changed the course's own code ({_names(changed)}): the grader put it back before "
                         "the hidden test, which grades what your code computes")
        failed = _run_cell(exercise["hidden"], namespace, lambda s: s)
        if failed:
            notes.append(f"the hidden test stopped at {failed}")
        changed = course_state.restore(before, objects=False)
        if changed:
            notes.append(f"your answer changed the course's own code while the hidden test ran ({_names(changed)}): "
                         "its record is not graded")
        elif len(sink) == 1 and type(sink[0]) is str:
            result["payload"] = sink[0]
        elif len(sink) > 1:
            notes.append("the hidden test submitted more than one record")
    except BaseException as error:  # noqa: BLE001 (report, never hang the runner)
        notes.append(f"the grader could not drive this exercise apart ({type(error).__name__}: {str(error)[:200]})")
    out.write((json.dumps(result) + "\n").encode())
    out.flush()


def _codes_of(value) -> list[types.CodeType]:
    """The code objects of an answer: a function's, or every function's of a class's body."""
    if isinstance(value, types.FunctionType):
        return [value.__code__]
    if isinstance(value, type):
        found = []
        for attribute in list(vars(value).values()):
            attribute = getattr(attribute, "__func__", attribute)
            if isinstance(attribute, types.FunctionType):
                found.append(attribute.__code__)
            elif isinstance(attribute, property):
                found += [f.__code__ for f in (attribute.fget, attribute.fset) if isinstance(f, types.FunctionType)]
        return found
    return []


def _preload(job: dict) -> None:
    """Import, once and before any fork, the course modules every exercise of ``job`` may read
    (each child could load them anyway), and with them the libraries they use: a child then
    loads only what is its own. The subpackages are registered empty first (``__init__`` not run)."""
    import importlib

    __import__("course_utils")  # the root (threads, seeding) as usual
    _register_packages()
    shared = set.intersection(*(set(exercise["package_files"]) for exercise in job["exercises"])) if job["exercises"] else set()
    allowed = _allowed_modules(sorted(shared))
    # The gate holds here too: a shared module whose import would load anything outside every
    # child's list fails to load (each child then loads it under its own Landlock, or fails to).
    gate = _CourseGate(allowed, [])
    sys.meta_path.insert(0, gate)
    try:
        for name in sorted(allowed):
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001 (a module that cannot load here fails in the child, with its note)
                pass
    finally:
        sys.meta_path.remove(gate)


def run(job: dict, timeout: float) -> list[dict]:
    """Drive every exercise of ``job`` in its own forked child; the results in order."""
    from IPython.core.inputtransformer2 import TransformerManager

    transform = TransformerManager().transform_cell
    _preload(job)
    results = []
    for exercise in job["exercises"]:
        own = Path(tempfile.mkdtemp(prefix="exercise-", dir=exercise["workdir"]))
        pid, read_end = _fork_drive(exercise, transform, own)
        result = _collect(pid, read_end, exercise["grade_id"], timeout)
        result.pop("measured", None)  # what the child says it measured is never read
        shutil.rmtree(own, ignore_errors=True)
        if exercise.get("timed"):
            result["measured"] = _time_apart(exercise, transform, timeout)
        results.append(result)
    return results


def _fork_drive(exercise: dict, transform, own: Path, steps_from: int | None = None,
                runner_end: int | None = None) -> tuple[int, int]:
    """Fork a child that drives ``exercise`` in the folder ``own`` (``drive_one``) and writes its
    line to a pipe: (the child's pid, the pipe's read end). With ``steps_from`` (the read end of
    the runner's steps pipe, whose write end ``runner_end`` the child closes), the child runs only
    the speed part, on the steps it reads there (``timed_steps.Steps``)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read_end)
        if runner_end is not None:
            os.close(runner_end)
        code = 0
        try:
            with os.fdopen(write_end, "wb") as out:
                steps = None if steps_from is None else Steps(steps_from, out)
                drive_one({**exercise, "own_workdir": str(own)}, transform, out, steps)
        except BaseException:  # noqa: BLE001
            code = 1
        os._exit(code)
    os.close(write_end)
    return pid, read_end


def _time_apart(exercise: dict, transform, timeout: float) -> dict:
    """Drive the exercise's speed part in a child of its own (``drive_one`` with ``Steps``) and
    time it from here (``timed_steps.measure``). The steps are drawn here after the fork, from a fresh seed:
    the child's copy of this process's memory holds none of them."""
    import importlib

    own = Path(tempfile.mkdtemp(prefix="timed-", dir=exercise["workdir"]))
    to_child, from_runner = os.pipe()
    pid, read_end = _fork_drive(exercise, transform, own, steps_from=to_child, runner_end=from_runner)
    os.close(to_child)
    loaded = set(sys.modules)
    try:
        timed = importlib.import_module(exercise["timed"]).EXERCISES[exercise["grade_id"]].timed
        cases = pickle.loads(base64.b64decode(exercise["hidden_cases"]))  # noqa: S301 (the grader's own)
        return measure(pid, read_end, from_runner, timed, cases, timeout)
    finally:
        shutil.rmtree(own, ignore_errors=True)
        unload(set(sys.modules) - loaded)


def _collect(pid: int, read_end: int, grade_id: str, timeout: float) -> dict:
    """The child's JSON line, or a result saying why there is none; the child is reaped."""
    data, _ = _read_child(pid, read_end, timeout, limit=64 << 20)
    if data is None:
        return {"grade_id": grade_id, "payload": None,
                "notes": [f"driving this exercise took longer than {timeout:g} s"]}
    try:
        result = json.loads(data.decode())
        if result.get("grade_id") == grade_id:
            return result
    except (ValueError, UnicodeDecodeError, AttributeError):
        pass
    return {"grade_id": grade_id, "payload": None, "notes": ["the answer's run ended without a result"]}


def _libraries() -> None:
    """What every child uses, imported once (torch alone is about 3 s of CPU on these machines,
    and torch._dynamo, which torch imports when the first optimizer is made, 3 s more: each child
    that drives an answer that trains paid it)."""
    import importlib

    os.environ.update({"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
    importlib.import_module("numpy")
    import torch

    torch.set_num_threads(1)
    importlib.import_module("torch._dynamo")
    importlib.import_module("IPython.core.inputtransformer2")


def run_job(spec: dict, job: dict) -> list[dict]:
    """In the process that drives one submission: join its process tree, take its rlimits and its
    environment, drop root's capabilities, then drive every exercise (``run``)."""
    if spec.get("tree"):
        try:
            ProcessTree.from_spec(spec["tree"]).join()
        except (OSError, ValueError, KeyError, TypeError):
            pass  # the grader kills this process by pid and by its environment marker too
    set_limits(spec["limits"])
    try:
        drop_capabilities()
    except OSError:
        pass
    os.environ.clear()
    os.environ.update(job.get("environment", {}))
    os.environ.update({"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
    return run(job, float(spec["limits"].get("cell_timeout", 120)))


def main(spec_path: str) -> None:
    """One submission: ``python drive_runner.py SPEC.json < JOB.json``, results on stdout."""
    spec = json.loads(Path(spec_path).read_text())
    job = json.loads(sys.stdin.read())
    _libraries()
    sys.stdout.write(json.dumps({"results": run_job(spec, job)}))
    sys.stdout.flush()


def serve() -> None:
    """Many submissions, one after the other (``python drive_runner.py serve``): the libraries are
    imported once, here, and each request (one line: ``{"spec": PATH, "job": JOB}``) is driven in a
    fresh child of this process, killed after the submission's wall-clock limit. One line of
    results per request on stdout; this process never runs course or student code itself, so
    nothing of one submission is left for the next. It ends when its stdin closes."""
    _libraries()
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        try:
            request = json.loads(line)
            spec = json.loads(Path(request["spec"]).read_text())
            job = request["job"]
        except (ValueError, KeyError, TypeError, OSError):
            out.write(b'{"results": null}\n')
            out.flush()
            continue
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_end)
            code = 0
            try:
                results = run_job(spec, job)
                with os.fdopen(write_end, "wb") as pipe:
                    pipe.write(json.dumps({"results": results}).encode())
            except BaseException:  # noqa: BLE001 (the server answers for it)
                code = 1
            os._exit(code)
        os.close(write_end)
        reply = _collect_reply(pid, read_end, float(spec["limits"].get("wall_timeout", 900)))
        out.write(reply + b"\n")
        out.flush()


def _read_child(pid: int, read_end: int, timeout: float, limit: int | None = None):
    """(what a forked child wrote to ``read_end``, its resource usage with its children's), the
    child reaped; the bytes are None when it ran past ``timeout`` seconds and was killed, and
    are cut at ``limit`` bytes (the child killed) when one is given."""
    chunks, deadline, timed_out = [], time.monotonic() + timeout, False
    with os.fdopen(read_end, "rb") as pipe:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([pipe], [], [], left)[0]:
                os.kill(pid, signal.SIGKILL)
                timed_out = True
                break
            chunk = os.read(pipe.fileno(), 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            if limit is not None and sum(map(len, chunks)) > limit:
                os.kill(pid, signal.SIGKILL)
                break
    _, _, usage = os.wait4(pid, 0)
    return (None if timed_out else b"".join(chunks)), usage


def _collect_reply(pid: int, read_end: int, timeout: float) -> bytes:
    data, usage = _read_child(pid, read_end, timeout)  # usage: the job child's CPU with each exercise's
    try:
        reply = json.loads(data or b"")
    except ValueError:
        reply = {"results": None}
    reply["cpu_seconds"] = usage.ru_utime + usage.ru_stime
    return json.dumps(reply).encode()


if __name__ == "__main__":
    if sys.argv[1:] == ["serve"]:
        serve()
    elif len(sys.argv) == 2:
        main(sys.argv[1])
    else:
        sys.exit("usage: python drive_runner.py SPEC.json < JOB.json, or python drive_runner.py serve")
