"""The exercise-check framework: run student code on cases, judge it, say what is wrong.

An ``Exercise`` is checked in two halves: ``drive`` runs the student's code on a list of cases
and writes down what came back as a record of plain data (``course_utils.records``); ``judge``
compares that record with the record of the course's own answer on the same cases and raises
``Problem`` with a hint at the first difference. The student's check cell runs both halves in
its own kernel, on the public cases, against records stored with the package
(``assets/check_records.json``, written by ``course release``). When a notebook is graded, the
hidden test cell runs only ``drive``, on other (hidden) cases that only the grader holds, and hands
over the record (``Exercise.submit``); the grader judges it in its own process
(``course_admin.grading.judging``), where nothing the student's code did can reach, against
the course's answer driven there. The same two functions serve both, so a verdict means the same
in the check cell and in the gradebook.

Each tutorial's ``check_*`` functions (in its ``checks`` modules, one per exercise or group of
exercises) are the check cells' entry points: ``Exercise.check`` runs both halves, and
``verdict`` prints what was expected, what came back and a hint, and returns True or False.
The judges read records with the shared vocabulary of ``course_utils.check_helpers`` (errors,
numbers, closeness, how a value is quoted); a record that lists one entry per case has its
length checked here, once, before ``judge`` runs (``Exercise.one_per_case``).

Student code runs under a time limit (``TIME_LIMIT`` seconds per call), so an infinite
loop becomes a clear message instead of a notebook that hangs.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import io
import json
import math
import signal
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from course_utils import records

TIME_LIMIT = 10.0
"""Seconds a single call into student code may take before the check gives up."""


class Problem(Exception):
    """Raised inside a check to stop at the first thing that is wrong."""


class Timeout(BaseException):
    """Raised inside student code when it runs too long (BaseException: hard to swallow)."""


def _alarm_available() -> bool:
    """SIGALRM timers exist (not on Windows) and this is the main thread (where signals arrive)."""
    return hasattr(signal, "SIGALRM") and hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def time_limit(seconds: float):
    """Raise ``Timeout`` in the code run inside this block once it has run ``seconds`` seconds.

    Where SIGALRM exists (Linux, macOS; main thread) an interval timer raises it; elsewhere
    (Windows, other threads) a watchdog thread raises it asynchronously in the calling thread.
    Either way it arrives between two Python bytecodes: a loop in Python is stopped, a single
    long call into C finishes first.
    """
    if _alarm_available():
        with _alarm(seconds):
            yield
    else:
        with _watchdog(seconds):
            yield


@contextlib.contextmanager
def _alarm(seconds: float):
    def expire(signum, frame):
        raise Timeout()

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def _watchdog(seconds: float):
    target = ctypes.c_ulong(threading.get_ident())
    finished, fired = threading.Event(), threading.Event()

    def watch():
        if not finished.wait(seconds):
            fired.set()
            ctypes.pythonapi.PyThreadState_SetAsyncExc(target, ctypes.py_object(Timeout))

    watcher = threading.Thread(target=watch, name="check time limit", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        finished.set()
        watcher.join()
        if fired.is_set():  # a Timeout raised too late to stop the code must not go off later
            ctypes.pythonapi.PyThreadState_SetAsyncExc(target, None)


class _Drive(threading.local):
    """While an ``Exercise`` drives an answer: the message of the first call that ran out of
    time, after which no further call into the answer is made (``call_student``)."""

    active = False
    timed_out: str | None = None


_DRIVE = _Drive()


@contextlib.contextmanager
def _one_time_limit():
    """One drive of an answer: once a call runs out of ``TIME_LIMIT``, every later call of the
    same drive fails at once with the same message. An answer that loops costs one time limit,
    not one per case (a check has up to a few hundred calls)."""
    _DRIVE.active, _DRIVE.timed_out = True, None
    try:
        yield
    finally:
        _DRIVE.active, _DRIVE.timed_out = False, None


def call_student(what: str, fn, *args, **kwargs):
    """Call student code, turning every way it can fail into a ``Problem`` with a hint."""
    if _DRIVE.timed_out is not None:
        raise Problem(_DRIVE.timed_out)
    try:
        with time_limit(TIME_LIMIT):
            return fn(*args, **kwargs)
    except NotImplementedError:
        raise Problem(
            f"{what} is not implemented yet. Replace the `raise NotImplementedError()` line "
            "with your code, run that cell, then run this check again."
        ) from None
    except Timeout:
        message = (
            f"{what} did not finish within {TIME_LIMIT:g} s. Look for a loop that never ends "
            "(a `while` whose condition never becomes false, or an index that never moves)."
        )
        if _DRIVE.active:
            _DRIVE.timed_out = message
        raise Problem(message) from None
    except Exception as error:
        frames = traceback.extract_tb(error.__traceback__)[1:]
        where = f" (line {frames[-1].lineno}: `{frames[-1].line}`)" if frames and frames[-1].line else ""
        raise Problem(f"{what} raised {type(error).__name__}: {error}{where}.") from None


def outcome(exercise: str, check) -> tuple[bool, str]:
    """Run ``check``: (passed, the message for the student). ``Problem``s, and anything else the
    answer made the check trip over (e.g. a class without the method the check calls), become a
    "not yet" message, never a traceback."""
    try:
        try:
            check()
        except Problem:
            raise
        except Exception as error:  # the answer lacks something the check uses (a method, an attribute...)
            raise Problem(
                f"checking your answer stopped at {type(error).__name__}: {error}. "
                "Compare your code with the names and return values the exercise asks for."
            ) from None
    except Problem as problem:
        return False, f"{exercise}: not yet. {problem}"
    return True, f"{exercise}: all checks passed. Well done!"


def verdict(exercise: str, check) -> bool:
    """``outcome`` for a notebook cell: print it with a mark and return whether it passed."""
    passed, message = outcome(exercise, check)
    print(f"{'✅' if passed else '❌'} {message}")
    return passed


def attempt(what: str, fn, *args, **kwargs):
    """``call_student``, for ``drive``: what came back, or ``records.error`` saying what went wrong."""
    try:
        return call_student(what, fn, *args, **kwargs)
    except Problem as problem:
        return records.error(str(problem))


def raise_if_error(value) -> None:
    """In ``judge``: a call into student code that failed (``attempt``) fails the check with its message."""
    if isinstance(value, records.StudentError):
        raise Problem(value.message)


def check_length(got, cases, what: str) -> None:
    """A list in a record with one entry per case, else a ``Problem`` naming the entries ``what``
    ("cases", "scripts"...)."""
    if type(got) is not list or len(got) != len(cases):
        raise Problem(f"the record holds {len(got) if type(got) is list else 'no list of'} {what} instead of {len(cases)}.")


SUBMISSIONS: list | None = None
"""Where ``Exercise.submit`` puts its record instead of displaying it: set by the grader's
``drive_runner``, which drives each exercise apart from the notebook."""

CHECK_RECORDS = "check_records.json"
"""The course's own records on every exercise's public cases (in the package's assets)."""


@functools.lru_cache(maxsize=1)
def _stored_records() -> dict:
    from course_utils.paths import ASSETS

    return json.loads((ASSETS / CHECK_RECORDS).read_text())


def stored_record(grade_id: str):
    """The course's own answer, driven on the exercise's public cases, as a decoded record."""
    try:
        data = _stored_records()[grade_id]
    except KeyError:
        raise KeyError(f"no stored record for {grade_id!r}: run `course release` to write {CHECK_RECORDS}.") from None
    return records.decode(data)


TIMED_APART = None
"""Set by the grader's ``drive_runner`` in the process that runs only an exercise's speed part
(``Timed``): the channel (``ready``, ``next``, ``answer``) to the process that hands out its steps
and measures its CPU time. None everywhere else."""


@dataclass(frozen=True)
class Timed:
    """An exercise's speed part, which the grader times from outside the answer's process.

    The answer runs in the process that drives it, so any time it reports (a clock read there,
    a flag saying it kept to the budget) it could have written itself. When an exercise is graded,
    its hidden cell runs once more in a process of its own (``drive_runner``) where ``start``
    builds what is timed and every step is handed over only once the previous one is answered;
    the runner reads that process's CPU time from the kernel around every block of steps, and the
    judge reads those figures and the answers (``entry``), never one the process wrote. The check
    cell times the same steps in the student's kernel (``measure`` with a clock of its own), and
    ``entry`` turns either measurement into the record entry the judge reads: one verdict for both.

    start: ``start(cases, *answers)``: what answers the steps (trees), built before the clock starts.
    answer: ``answer(subject, step)``: one step's answer, a float.
    steps: ``steps(cases, seed)``: (the steps as plain data in blocks ``[(part, [step, ...]), ...]``,
        the budget of every part, in CPU seconds). A part is what one figure is measured for (a tree of one size):
        its blocks alternate with the other parts', so that a change in the machine's load while
        they run falls on every part alike. The grader draws ``seed`` afresh for every submission,
        after the timed process has started, so no step can be known before it is handed over.
    entry: ``entry(cases, measured)``: the record entry the judge reads (in place of the one the
        drive wrote, when graded); ``measured`` is ``measure``'s ``{"seed", "done", "counts",
        "cpu_seconds" (by part), "answers"}`` or the runner's ``{"seed", "error"}`` (None when it has none).
    key: the name of that entry in the (dict) record.
    """

    start: Callable
    answer: Callable
    steps: Callable
    entry: Callable
    key: str

    def measure(self, cases, seed: int, ask: Callable, clock: Callable) -> dict:
        """Hand out the steps drawn from ``seed`` one at a time (``ask(step)``: its answer), reading
        ``clock`` (CPU seconds) before and after every block: ``{"seed", "done", "counts",
        "cpu_seconds", "answers"}``, the steps answered and their seconds by part, each answer a
        finite float or None. Stops once a part has spent its budget: the verdict is known then,
        and the rest would only keep the grader (or the check cell) waiting."""
        blocks, budget = self.steps(cases, seed)
        parts = 1 + max(part for part, _ in blocks)
        spent, counts, answers = [0.0] * parts, [0] * parts, []
        for part, steps in blocks:
            before, over = clock(), False
            for step in steps:
                answer = ask(step)
                answers.append(answer if type(answer) is float and math.isfinite(answer) else None)
                counts[part] += 1
                if spent[part] + clock() - before > budget:
                    over = True
                    break
            spent[part] += clock() - before
            if over:
                break
        return {"seed": seed, "done": len(answers), "counts": counts, "cpu_seconds": spent, "answers": answers}


HIDDEN_CASES: dict = {}
"""The hidden cases, by grade id: a function that returns them, or the cases themselves. Empty in
the student's package, which holds no hidden case (no answer can be fitted to them, nor a table of
their answers pasted): the grader fills it (``course_admin.grading.hidden_cases``), and hands each
process that drives an answer its exercise's cases."""

ORACLES: dict = {}
"""The grader's oracles, by grade id: a function that returns the exercise's oracle (or None).
An oracle computes what the exercise's judge needs of a case beyond the course's record of its
answer (what each typical mistake gives, for the hints; the exact gradient); for the public cases
the judge reads that from stored data. Computing it for any other case takes the exercise's
answer, so the student's package holds no oracle: the grader fills this
(``course_admin.grading.hidden_cases.install``) before it judges. Empty in the student's kernel."""


def grader_oracle(grade_id: str):
    """The oracle the grader handed in for exercise ``grade_id`` (``ORACLES``), or None."""
    loader = ORACLES.get(grade_id)
    return None if loader is None else loader()


@dataclass(frozen=True)
class Exercise:
    """One graded exercise, checked by the same two functions in the check cell and in grading.

    name: how the verdict names the exercise ("ReplayMemory").
    grade_id: the hidden-test cell that grades it.
    cases: ``cases()``: the public cases (plain data). The hidden ones, other inputs of the same
        kinds, come from ``HIDDEN_CASES`` (or ``hidden_cases``) when the exercise is graded.
    drive: ``drive(cases, *answers)``: run the answers on the cases; return what came back, as
        ``records.encode`` can write it (calls into student code go through ``attempt``).
    judge: ``judge(got, expected, cases)``: compare two decoded records; raise ``Problem``.
    reference: the names of the course's answers in ``course_admin.<tutorial>.solutions``, in the
        order ``drive`` takes them (the grader drives them to get ``expected``).
    one_per_case: what the record lists, one entry per case ("cases", "scripts"...), when it is
        such a list: ``judge_record`` checks its length before ``judge`` runs. None for a record
        of another shape (its judge checks the lists inside with ``check_length``).
    hidden_cases: ``hidden_cases()``, for an exercise that carries its own hidden cases (the
        grader's synthetic test assignment); the course's exercises leave it None.
    timed: the exercise's speed part (``Timed``), which the grader times outside the answer's process.
    """

    name: str
    grade_id: str
    cases: Callable
    drive: Callable
    judge: Callable
    reference: tuple[str, ...]
    one_per_case: str | None = None
    hidden_cases: Callable | None = None
    timed: Timed | None = None

    def cases_for(self, hidden: bool):
        """The public cases, or the hidden ones (``LookupError`` where the grader gave none)."""
        if not hidden:
            return self.cases()
        found = self._hidden()
        if found is None:
            raise LookupError(f"the hidden cases of {self.grade_id} are not in the student's package: the grader "
                              "gives them when it grades")
        return found() if callable(found) else found

    def _hidden(self):
        """Where the hidden cases come from: this exercise's own, the grader's, or None."""
        return self.hidden_cases if self.hidden_cases is not None else HIDDEN_CASES.get(self.grade_id)

    def record(self, *answers, hidden: bool) -> str:
        """Drive ``answers`` on the public or hidden cases: the record as JSON text. Once a call
        into the answers runs out of time, the calls after it are not made (``_one_time_limit``)."""
        cases = self.cases_for(hidden)
        with _one_time_limit():
            return records.dump(self.drive(cases, *answers))

    def judge_record(self, text: str, expected, hidden: bool, measured=None) -> None:
        """Read a record (``records.load``), check the length of a record of ``one_per_case``
        entries, and judge it against ``expected``; raise ``Problem``. Judging hidden cases, the
        speed part (``timed``) is judged from what the grader measured outside the answer's
        process (``measured``), whatever the record says of it."""
        try:
            got = records.load(text)
        except records.RecordError as problem:
            raise Problem(f"the record of your answer could not be read: {problem}.") from None
        cases = self.cases_for(hidden)
        if self.one_per_case is not None:
            check_length(got, cases, self.one_per_case)
        if self.timed is not None and hidden and type(got) is dict:
            got[self.timed.key] = self.timed.entry(cases, measured)
        self.judge(got, expected, cases)

    def check(self, *answers) -> bool:
        """The student's check cell: drive and judge the public cases here, with hints."""
        def check():
            self.judge_record(self.record(*answers, hidden=False), stored_record(self.grade_id), hidden=False)

        passed = verdict(self.name, check)
        for borrowed in borrowed_course_code(self.grade_id, *answers):
            print(f"⚠️ Your answer uses {borrowed}. When your notebook is graded, your answer runs where only the "
                  "code this exercise gives you exists, so this scores 0 there: write that part yourself.")
        return passed

    def submit(self, *answers) -> None:
        """The hidden test cell: drive the hidden cases and hand the record to the grader
        (``SUBMISSIONS``, set by the process that drives the answers apart from the notebook).
        Run in a notebook, where the package holds no hidden case, it only says so."""
        if SUBMISSIONS is None and self._hidden() is None:
            print(f"{self.name}: the hidden tests run when the notebook is graded.")
            return
        if TIMED_APART is not None:
            if self.timed is not None:
                self._run_timed(TIMED_APART, answers)
            return
        payload = json.dumps({"grade_id": self.grade_id, "record": self.record(*answers, hidden=True)})
        if SUBMISSIONS is not None:
            SUBMISSIONS.append(payload)
            return
        from IPython.display import display

        display({records.RECORD_MIME: payload, "text/plain": f"{self.name}: answer recorded for grading."}, raw=True)


    def _run_timed(self, channel, answers) -> None:
        """In the grader's timing process: build what is timed, say so, then answer each step the
        channel hands over until it hands over none (a failure is sent instead of an answer)."""
        try:
            subject = call_student(self.name, self.timed.start, self.cases_for(True), *answers)
        except Problem as problem:
            channel.failed(str(problem))
            return
        channel.ready()
        while (step := channel.next()) is not None:
            try:
                channel.answer(call_student(self.name, self.timed.answer, subject, step))
            except Problem as problem:
                channel.failed(str(problem))
                return


def _code_objects(answer) -> list:
    """The code objects of an answer (a function, or a class's methods and properties), nested
    functions, classes and comprehensions included."""
    import types

    found, todo = [], []
    if isinstance(answer, types.FunctionType):
        todo.append(answer.__code__)
    elif isinstance(answer, type):
        for value in vars(answer).values():
            value = getattr(value, "__func__", value)
            if isinstance(value, property):
                todo += [f.__code__ for f in (value.fget, value.fset) if isinstance(f, types.FunctionType)]
            elif isinstance(value, types.FunctionType):
                todo.append(value.__code__)
    while todo:
        code = todo.pop()
        found.append(code)
        todo += [const for const in code.co_consts if isinstance(const, types.CodeType)]
    return found


def borrowed_course_code(grade_id: str, *answers) -> list[str]:
    """What the answers use of the course's code that the grader does not give this exercise's
    answer (see ``course_admin.grading.drive_apart``): a module the notebook's setup cell binds
    (``colour``, ``lunar.aac``...), or anything from a module that computes what the exercise asks
    (``course_utils.twins``), called or subclassed. For the check cell's warning; the grade itself
    never depends on it."""
    import types

    from course_utils.twins import TWINS

    twins = TWINS.get(grade_id, ())
    found: list[str] = []

    def course(module: str | None) -> bool:
        return bool(module) and (module == "course_utils" or module.startswith("course_utils."))

    def note(text: str) -> None:
        if text not in found:
            found.append(text)

    for answer in answers:
        if isinstance(answer, type):
            for base in answer.__mro__[1:]:
                if any(base.__module__ == twin or base.__module__.startswith(twin + ".") for twin in twins):
                    note(f"{base.__module__}.{base.__qualname__} (course code that does what this exercise asks)")
        namespace = getattr(answer, "__globals__", None)
        if namespace is None and isinstance(answer, type):  # a class: the globals its methods read
            methods = [getattr(v, "__func__", v) for v in vars(answer).values()]
            namespace = next((m.__globals__ for m in methods if isinstance(m, types.FunctionType)), {})
        for code in _code_objects(answer):
            for name in code.co_names:
                value = (namespace or {}).get(name)
                if isinstance(value, types.ModuleType) and course(value.__name__):
                    note(f"`{name}` ({value.__name__}, which the setup cell binds for the notebook's demonstrations)")
                    continue
                module = getattr(value, "__module__", None)
                if course(module) and any(module == twin or module.startswith(twin + ".") for twin in twins):
                    note(f"`{name}` ({module}, course code that does what this exercise asks)")
    return found


def passes(check, *answers) -> bool:
    """Whether the student's ``answers`` pass ``check`` (run quietly), for notebook sections that
    build on an exercise: they use the student's code when it passes, and otherwise say so in one
    line and show the course's stored result instead, rather than failing deep in course code.

    >>> passes(lambda f: f(2) == 4, lambda x: x * x)
    True
    """
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            return bool(check(*answers))
        except AssertionError:
            return False


def fmt(values) -> str:
    array = np.asarray(values, dtype=float)
    return np.array2string(array, precision=4, separator=", ", threshold=8, edgeitems=3)
