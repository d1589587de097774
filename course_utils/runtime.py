"""Run-time switches shared by every tutorial: seeding, threads, fast mode, headless mode.

Fast mode
    One switch scales the long loops of every notebook down so that a whole notebook runs
    end to end in about two minutes. It is on when ``COURSE_FAST=1``, or when ``CI`` or
    nbgrader's ``NBGRADER_EXECUTION`` is set (unless ``COURSE_FAST=0`` says otherwise).
    Full mode, the default for students, runs the real sizes.

Headless mode
    When nobody can click (CI, nbgrader, nbmake), widget games play themselves through
    their own click handlers and return at once. On when ``COURSE_HEADLESS=1``, or when
    ``CI`` or ``NBGRADER_EXECUTION`` is set (unless ``COURSE_HEADLESS=0``).

Threads
    The course's networks are tiny. On a 2-core machine torch with 2 threads was measured
    6 to 80 times slower than with 1 thread for small LSTM/MLP steps, so importing
    ``course_utils`` sets torch to 1 thread. To change it, call ``set_threads(n)`` or set
    ``COURSE_THREADS=n`` before importing the package. Importing the package does not load
    torch (grading and the command line start faster without it): if torch is not loaded
    yet, ``OMP_NUM_THREADS`` is set, which torch reads when it loads.

Processes
    ``fork_map`` runs independent jobs (one training run per seed) on every core, in processes
    forked from the kernel, so that the student's own classes reach them without pickling.

Arguments
    Every tutorial's sizes and random generators are read with one rule each:
    ``positive_int`` (a size: a positive Python or NumPy integer, never a bool) and
    ``generator`` (an ``rng`` argument: a generator, an int seed, or ``None`` for one seeded
    from NumPy's global generator, so that ``set_seed`` makes a run repeatable).
"""

from __future__ import annotations

import numbers
import os
import random
import sys

import numpy as np

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _flag(name: str) -> bool | None:
    """Return True/False for an explicit boolean environment variable, None if unset."""
    value = os.environ.get(name, "").strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    return None


def _automated() -> bool:
    """True under CI or nbgrader, where nobody is watching the notebook."""
    return bool(os.environ.get("CI")) or bool(os.environ.get("NBGRADER_EXECUTION"))


def grading() -> bool:
    """True while nbgrader runs the notebook (``NBGRADER_EXECUTION`` set): outputs are kept
    for the feedback, under the grader's output cap, so big displays shrink."""
    return bool(os.environ.get("NBGRADER_EXECUTION"))


def fast_mode() -> bool:
    """Whether long loops should be scaled down (see the module docstring)."""
    explicit = _flag("COURSE_FAST")
    return _automated() if explicit is None else explicit


def headless() -> bool:
    """Whether games should play themselves because nobody can click."""
    explicit = _flag("COURSE_HEADLESS")
    return _automated() if explicit is None else explicit


def scaled(full: int, fast: int) -> int:
    """Return ``fast`` in fast mode and ``full`` otherwise (sizes of long loops)."""
    return fast if fast_mode() else full


class Sizes:
    """Named sizes of a tutorial's long runs, each given as ``(full, fast)``.

    Reading ``SIZES.name`` gives the full size, or the fast one in fast mode, so a notebook's
    settings cell holds plain named constants (``EPISODES = SIZES.episodes``) and nothing about
    how the course tests itself.

    >>> sizes = Sizes(episodes=(3000, 48))
    >>> sizes.episodes in (3000, 48)
    True
    """

    def __init__(self, **sizes: tuple[int, int]):
        for name, pair in sizes.items():
            if not (isinstance(pair, tuple) and len(pair) == 2):
                raise ValueError(f"Size {name!r} needs a (full, fast) pair, got {pair!r}.")
        self._sizes = dict(sizes)

    def __getattr__(self, name: str):
        sizes = self.__dict__.get("_sizes", {})
        if name not in sizes:
            raise AttributeError(f"No size named {name!r}; known: {sorted(sizes)}.")
        full, fast = sizes[name]
        return fast if fast_mode() else full

    def full(self, name: str):
        """The full size of ``name``, whatever the mode."""
        return self._sizes[name][0]

    def __repr__(self) -> str:
        return "Sizes(" + ", ".join(f"{k}={getattr(self, k)}" for k in self._sizes) + ")"


def set_threads(n: int) -> None:
    """Set the number of threads torch uses for its CPU kernels (default here: 1)."""
    if n < 1:
        raise ValueError(f"set_threads needs a positive number of threads, got {n}.")
    import torch

    torch.set_num_threads(n)


def apply_default_threads() -> None:
    """Give torch ``COURSE_THREADS`` threads (default 1): now if torch is loaded, otherwise
    through ``OMP_NUM_THREADS``, which torch reads when it loads (and so do child processes)."""
    n = _default_threads()
    if "torch" in sys.modules:
        set_threads(n)
    else:
        os.environ["OMP_NUM_THREADS"] = str(n)


def set_seed(seed: int) -> np.random.Generator:
    """Seed Python's ``random``, NumPy's global generator and torch.

    Returns a fresh ``numpy.random.Generator`` seeded with ``seed``, for code that prefers
    an explicit generator.
    """
    if not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"set_seed needs a non-negative integer, got {seed!r}.")
    seed = int(seed)
    random.seed(seed)
    np.random.seed(seed % 2**32)
    seed_torch(seed)
    return np.random.default_rng(seed)


def seed_torch(seed: int) -> None:
    """Seed torch's global generator, as ``torch.manual_seed`` does, in microseconds.

    ``torch.manual_seed`` also queues the seeding of every accelerator not yet in use (CUDA,
    XPU, MTIA), formatting a stack trace for each: about 0.7 ms a call, most of the time of the
    checks that re-seed for every case. The course runs on the CPU; a CUDA device already in
    use is seeded as well.
    """
    import torch

    torch.default_generator.manual_seed(int(seed))
    if torch.cuda.is_initialized():
        torch.cuda.manual_seed_all(int(seed))


def positive_int(name: str, value, error: type[Exception] = ValueError):
    """``value`` when it is a positive integer (a Python or NumPy integer; a bool is not one), else
    ``error`` saying "``name`` must be a positive integer"."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral) or value < 1:
        raise error(f"{name} must be a positive integer, got {value!r}.")
    return value


def generator(rng=None) -> np.random.Generator:
    """An ``rng`` argument as a ``numpy.random.Generator``: a generator itself, a new one seeded
    with an int, or for ``None`` a new one seeded from NumPy's global generator (``set_seed``
    seeds that, so a seeded run repeats)."""
    if rng is None:
        return np.random.default_rng(np.random.randint(2**31))
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool | np.bool_):
        return np.random.default_rng(int(rng))
    if isinstance(rng, np.random.Generator):
        return rng
    raise ValueError(f"rng must be None, an int seed or a numpy.random.Generator, got {type(rng).__name__}.")


def _default_threads() -> int:
    value = os.environ.get("COURSE_THREADS", "1")
    try:
        return max(1, int(value))
    except ValueError:
        return 1


def usable_cores() -> int:
    """The cores this process may run on (Linux's affinity mask; elsewhere ``os.cpu_count()``)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def start_forked_child() -> None:
    """What a process forked from a notebook's kernel does first (``fork_map``'s, tutorial 3's
    rollout and experiment workers): leave the stop button (SIGINT) to the parent, which stops its
    children itself, and keep what it inherited out of its garbage collections (``gc.freeze``: a
    full collection walks every object of a notebook's kernel, 0.1-0.2 s, and writes to each,
    copying the parent's memory pages)."""
    import gc
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    gc.freeze()


_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters (malloc.h)
_MMAP_THRESHOLD_MAX = 32 * 2**20  # glibc's largest on 64-bit systems
_kept_freed_memory = False


def keep_freed_memory() -> bool:
    """Let this process reuse the memory its freed arrays and tensors leave, instead of asking the
    system for fresh pages each time (glibc's ``malloc``: blocks of up to 32 MiB from its heap,
    which it then keeps; the process keeps its peak size). Called by the training loops of the
    course (tutorial 3's ``TrainerLoop.train``), whose every gradient step allocates and frees
    the same few arrays of a batch of thousands of states.

    Why: by default glibc maps a block of more than its current threshold afresh and gives it back
    when it is freed, and gives back the top of its heap beyond 128 KiB, so each gradient step on a
    batch of 4000 states took about 700 new pages from the system, each cleared by the kernel
    (a critic's step: 9.4 ms, 1.4 of them in the kernel, against 7.4 ms with this). The numbers
    computed are the same: torch aligns its tensors itself. Returns whether it was set (Linux with
    glibc; elsewhere nothing is done); once per process is enough (children forked after it inherit it).
    """
    global _kept_freed_memory
    if _kept_freed_memory:
        return True
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc (macOS, Windows, musl)
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    # both together: a trim threshold alone turns the adaptive mmap threshold off, and every
    # block over 128 KiB is then mapped afresh (4000 new pages a step)
    _kept_freed_memory = bool(mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD_MAX)) and bool(mallopt(_M_TRIM_THRESHOLD, 2**30))
    return _kept_freed_memory


_FORKED_JOBS: tuple = ()


def _forked_run(send, index: int) -> None:
    """A process of ``fork_map``: one call, its result (or its error) sent back on ``send``."""
    import pickle
    import traceback

    start_forked_child()
    fn, items = _FORKED_JOBS
    try:
        message = ("ok", fn(items[index]))
    except BaseException as error:  # noqa: BLE001 - raised again in the parent
        message = ("error", error)
        try:
            pickle.dumps(error)
        except Exception:  # noqa: BLE001 - an exception that cannot travel: its traceback does
            message = ("error", RuntimeError(traceback.format_exc(limit=-6)))
    send.send(message)
    send.close()


def fork_map(fn, items, workers: int | None = None) -> list:
    """``[fn(item) for item in items]``, each call in a process of its own forked from this one,
    ``workers`` at a time (default: one per usable core). ``fn`` may be a closure over the
    notebook's own classes: a forked process inherits them, and only ``fn``'s results (plain
    data: they are pickled back) cross between processes. Every call starts from this process's
    state as it is now, whatever ran before it, so the results do not depend on which process
    ran which call. With one worker, one item, no ``fork`` (not Linux) or inside a process that
    may not have children, the calls run here, one after the other; so does a call whose process
    cannot be started (a limit on processes). An exception in a call is
    raised here; a process that dies (out of memory, killed) raises a ``RuntimeError``; the stop
    button (``KeyboardInterrupt``) stops every process."""
    import multiprocessing as mp
    from multiprocessing.connection import wait

    items = list(items)
    workers = min(len(items), workers or usable_cores())
    if workers < 2 or not sys.platform.startswith("linux") or mp.current_process().daemon:
        return [fn(item) for item in items]
    global _FORKED_JOBS
    _FORKED_JOBS = (fn, items)
    context = mp.get_context("fork")
    results: list = [None] * len(items)
    waiting, running = list(range(len(items))), {}
    try:
        while waiting or running:
            while waiting and len(running) < workers:
                index = waiting.pop(0)
                receive, send = context.Pipe(duplex=False)
                process = context.Process(target=_forked_run, args=(send, index), daemon=True, name="course-fork-map")
                try:
                    process.start()
                except OSError:  # no process to be had (a limit on processes, as when graded): run it here
                    receive.close()
                    results[index] = fn(items[index])
                    continue
                finally:
                    send.close()
                running[receive] = (index, process)
            for receive in wait(list(running)) if running else ():
                index, process = running.pop(receive)
                try:
                    status, value = receive.recv()
                except EOFError:
                    process.join()
                    raise RuntimeError(f"Run {index + 1} of {len(items)} died in its process (exit code "
                                       f"{process.exitcode}: out of memory, or killed); the others were stopped. "
                                       "Run the cell again.") from None
                process.join()
                if status == "error":
                    raise value
                results[index] = value
    finally:
        for receive, (_, process) in running.items():
            process.kill()
            process.join()
            receive.close()
        _FORKED_JOBS = ()
    return results
