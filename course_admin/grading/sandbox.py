"""Limits and isolation for the kernel that runs one student's notebook during autograding,
and the launcher that starts that kernel under them.

Student code is untrusted. Without containers, a single Linux machine still allows this much,
and ``course autograde`` uses all of it (see ``Limits``):

- **a working folder of its own**: the kernel's current and home folder holds only the
  student's own notebook; no solutions, hidden tests, gradebook or other submissions;
- **a clean environment** (``clean_environment``): a minimal ``PATH``, ``HOME`` and ``TMPDIR``
  inside the working folder, ``COURSE_FAST=1``, nothing else of the grader's environment (no
  tokens, no paths);
- **resource limits** (``setrlimit``, inherited by anything the kernel starts): address space
  (``memory_mb``), CPU seconds (the wall-clock limit), size of any file written, open files
  and sockets (``kernel_restrictions.OPEN_FILES``), no core dumps;
- **a filesystem allow-list** with Linux Landlock (kernel 5.13 or later; no root needed):
  the kernel may read only the Python installation, the course package and system libraries,
  and write only in its working folder. Reading another submission, the solutions, the
  gradebook or the instructor's home fails with ``PermissionError``. Outgoing TCP connections
  are refused (Landlock ABI 4, kernel 6.7), and the kernel cannot signal processes outside its
  sandbox (ABI 6, kernel 6.12);
- **no privileges** when grading runs as root (as on CI): the kernel keeps uid 0, so the
  Python installation under ``/root`` stays readable, but loses every capability and cannot
  regain them on ``execve``; with Landlock this leaves it no more power than an ordinary user.
  (Switching to ``nobody`` was the other option; it fails where Python itself lives in a
  0700 home folder, as with pyenv under ``/root`` on CI images, and it would not stop one
  ``nobody`` kernel from reading another's folder. Landlock needs no user account at all.)
- **every process found and killed** (``process_tree.ProcessTree``, which says how, with a
  fork limit where a pids controller is available, and what each way misses).

The limits, Landlock, capabilities and seccomp are applied by ``kernel_restrictions``, in the
kernel's own process, by ``enter_sandbox`` here: in a kernel forked from the grading process's
kernel zygote (``kernel_zygote``, which imported ipykernel, NumPy, Matplotlib and torch once),
else in the launcher (``launch_kernel``), which then ``execve``s the kernel. Per-cell timeouts, the
wall-clock limit per submission and the output cap are applied by the grader around the kernel
(``course_admin.grading.worker``).

What is NOT protected: UDP traffic and DNS (Landlock filters TCP only); CPU and memory
bandwidth taken from other submissions graded at the same time; fork bombs where no pids
controller is available (the fallback, and pure cgroup v2 when the grader's cgroup cannot
pass the pids controller on, e.g. a container's root cgroup holding the grader itself):
``RLIMIT_NPROC`` does not apply to root and counts all of a user's processes otherwise; the
address-space and open-file limits are per process, so a notebook can start several
processes each up to the limits (``max_pids`` processes with ``OPEN_FILES`` sockets each can
still take every ephemeral port while the submission runs: the tree only guarantees that
they are gone afterwards); any file readable in the allow-list (the course package, which
students have anyway). On a kernel without Landlock the working folder is the only
filesystem protection: student code could then read any file the grading user can read,
and leave its process tree by writing its pid to a ``cgroup.procs`` above the tree (uid 0
without capabilities still owns those files; so does the owner of a delegated cgroup). Use
containers or a dedicated user account when that matters.

This file imports only the standard library, and so do the modules it imports
(``kernel_restrictions``, ``process_tree``, ``cgroups``, ``processes``): ``python sandbox.py
kernel SPEC -- ARGV...`` applies the limits to itself and then ``execve``s the real kernel
command, so it must start fast and must not import the course package (which imports numpy
and torch). Run that way, this folder is ``sys.path[0]`` and those modules are imported by
their own names (the ``if __package__`` imports).
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

if __package__:
    from course_admin.grading.kernel_restrictions import drop_capabilities, restrict_self, restrict_syscalls, set_limits
    from course_admin.grading.process_tree import ProcessTree
else:  # run as the launcher script: its folder is sys.path[0], and the course package (numpy, torch) stays unloaded
    from kernel_restrictions import drop_capabilities, restrict_self, restrict_syscalls, set_limits
    from process_tree import ProcessTree


@dataclass(frozen=True)
class Limits:
    """What one submission may use. Every figure is per submission.

    cell_timeout: seconds per cell before the kernel is interrupted (nbgrader's
        ``Execute.timeout``; the course's cells need under 100 s in fast mode).
    wall_timeout: seconds for the whole submission (kernel start, every cell, feedback)
        before everything it started is killed; catches loops that ignore interrupts.
    memory_mb: address space of the kernel process in MB (``RLIMIT_AS``). Importing torch,
        matplotlib and the course needs about 700 MB of address space (measured: VmPeak
        690 MB, resident 270 MB), so 4096 leaves room for the tutorials' training runs.
    output_mb: total output kept per notebook in MB; the rest is dropped with a note, so a
        print loop cannot fill the grader's memory or the feedback HTML.
    notebook_mb: largest autograded notebook, and feedback page, kept per submission in MB
        (``notebook_size.cap_notebook``: metadata, attachments, sources and cells beyond it are
        cut, with a note); above ``output_mb`` with room for a tutorial's 100 KB of sources, so
        an honest notebook is never cut.
    file_mb: largest file the kernel may write, in MB (``RLIMIT_FSIZE``).
    landlock: restrict the filesystem and network with Landlock when the kernel supports it.
    skip_given: where the hidden tests are driven apart, do not run the given cells no graded
        cell depends on (``skip_cells``); False runs every cell (for the comparison of both ways).
    """

    cell_timeout: int = 120
    wall_timeout: int = 900
    memory_mb: int = 4096
    output_mb: float = 2.0
    notebook_mb: float = 8.0
    file_mb: int = 100
    landlock: bool = True
    skip_given: bool = True

    def as_dict(self) -> dict:
        return asdict(self)


# --------------------------------------------------------------------------------------
# Environment


def clean_environment(workdir: Path, token: str, inherited: dict[str, str] | None = None) -> dict[str, str]:
    """The kernel's whole environment: nothing of the grader's besides locale and jupyter's own
    ``JPY_*`` variables. ``token`` marks every process of this sandbox (see ``processes.kill_marked``)."""
    inherited = inherited if inherited is not None else dict(os.environ)
    scripts = str(Path(sys.executable).parent)
    env = {
        "PATH": os.pathsep.join([scripts, "/usr/local/bin", "/usr/bin", "/bin"]),
        "HOME": str(workdir),
        "TMPDIR": str(workdir / ".tmp"),
        "MPLCONFIGDIR": str(workdir / ".config" / "matplotlib"),
        "IPYTHONDIR": str(workdir / ".ipython"),
        "COURSE_FAST": "1",
        "COURSE_HEADLESS": "1",
        "NBGRADER_EXECUTION": inherited.get("NBGRADER_EXECUTION", "autograde"),
        "PYTHONNOUSERSITE": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "LANG": inherited.get("LANG", "C.UTF-8"),
        "COURSE_SANDBOX": token,
    }
    for key, value in inherited.items():
        if key.startswith("JPY_") or key in ("LC_ALL", "TZ"):
            env[key] = value
    return env


# --------------------------------------------------------------------------------------
# The kernel launcher


def enter_sandbox(spec_path: str, argv: list[str]) -> list[str]:
    """Put this process in the sandbox the spec describes, before it runs anything of the
    submission: join the submission's ``ProcessTree`` (``spec["tree"]``, from
    ``ProcessTree.as_spec``), copy the connection file named after ``-f`` in ``argv`` into the
    working folder, make that folder the current one, record this pid, apply limits and
    restrictions. Returns ``argv`` with the copied connection file.

    Whatever cannot be applied (no Landlock, not root) is written to the spec's status file,
    which the grader turns into a note in the report, and the kernel starts anyway.
    """
    spec = json.loads(Path(spec_path).read_text())
    status = {"pid": os.getpid(), "started": time.time(), "applied": [], "missing": []}
    if spec.get("tree"):  # first of all: nothing has forked yet, and joining needs the capabilities
        try:
            tree = ProcessTree.from_spec(spec["tree"])
            tree.join()
            status["applied"].append(tree.description)
        except (OSError, ValueError, KeyError, TypeError) as error:
            status["missing"].append(f"not in its process tree ({error}); only the process group and the"
                                     " environment marker find what the kernel starts")
    workdir = Path(spec["workdir"])
    argv = list(argv)
    if "-f" in argv:  # the connection file lives in the grader's runtime folder: give the kernel a copy
        index = argv.index("-f") + 1
        info = json.loads(Path(argv[index]).read_text())
        local = workdir / ".kernel-connection.json"
        local.write_text(json.dumps(info))
        os.chmod(local, 0o600)
        argv[index] = str(local)
    (workdir / ".tmp").mkdir(exist_ok=True)
    os.chdir(workdir)
    report = open(spec["status"], "w")  # opened before Landlock, which checks at open time
    set_limits(spec["limits"])
    status["applied"].append(f"rlimits: {spec['limits']['memory_mb']} MB address space")
    try:
        status["applied"].append(drop_capabilities())
    except OSError as error:
        status["missing"].append(f"could not drop root's capabilities ({error})")
    if spec["limits"].get("landlock", True):
        try:
            status["applied"].append(restrict_self(workdir))
        except OSError as error:
            status["missing"].append(f"no filesystem restriction ({error}); only the working folder separates submissions")
    try:
        status["applied"].append(restrict_syscalls())
    except OSError as error:
        status["missing"].append(f"no seccomp filter ({error}); clone3 could start a child outside a cgroup v2 process tree")
    with report:
        report.write(json.dumps(status))
    return argv


def launch_kernel(spec_path: str, argv: list[str]) -> None:
    """Become the sandboxed kernel: ``enter_sandbox``, then ``execve`` ``argv``."""
    argv = enter_sandbox(spec_path, argv)
    os.execve(argv[0], argv, os.environ)


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.argv[1] == "kernel" and "--" in sys.argv:
        split = sys.argv.index("--")
        launch_kernel(sys.argv[2], sys.argv[split + 1 :])
    else:
        sys.exit("usage: python sandbox.py kernel SPEC.json -- KERNEL ARGV...")
