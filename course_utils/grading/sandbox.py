"""Limits and isolation for the kernel that runs one student's notebook during autograding.

Student code is untrusted. Without containers, a single Linux machine still allows this much,
and ``course autograde`` uses all of it (see ``Limits``):

- **a working folder of its own**: the kernel's current and home folder holds only the
  student's own notebook; no solutions, hidden tests, gradebook or other submissions;
- **a clean environment**: a minimal ``PATH``, ``HOME`` and ``TMPDIR`` inside the working
  folder, ``COURSE_FAST=1``, nothing else of the grader's environment (no tokens, no paths);
- **resource limits** (``setrlimit``, inherited by anything the kernel starts): address space
  (``memory_mb``), CPU seconds (the wall-clock limit), size of any file written, open files
  and sockets (``OPEN_FILES``), no core dumps;
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
- **every process found and killed** (``ProcessTree``): the kernel joins a process tree of
  its submission before it starts anything, and the grader kills the whole tree on a timeout
  and when grading ends, whatever session, process group or environment a process gave
  itself; where a pids controller is available the tree also holds at most ``max_pids``
  processes and threads (a fork bomb gets ``BlockingIOError``). Best first:

  1. *cgroup v2* (a cgroup ``course-sandbox-TOKEN`` under the grader's own cgroup, else at
     the root of the hierarchy; needs write access there: root, or a delegated cgroup).
     Killing writes ``cgroup.kill`` (Linux 5.14), which takes new forks too, or freezes the
     cgroup, SIGKILLs every member and thaws it. A member could leave only by writing its
     pid to a ``cgroup.procs`` outside the tree, which Landlock forbids (only its working
     folder is writable), or by starting a child elsewhere with ``clone3(CLONE_INTO_CGROUP)``,
     which Landlock does not see: a seccomp filter makes ``clone3`` fail with ENOSYS (the C
     library then uses ``clone``; ``restrict_syscalls``). The fork limit needs the pids
     controller in that cgroup;
  2. *cgroup v1 pids* (``/sys/fs/cgroup/pids``, root): the same membership and escape
     argument (``CLONE_INTO_CGROUP`` does not exist in v1), ``pids.max`` for the fork limit;
     killing sets ``pids.max`` to 0 (no more forks) and SIGKILLs every member until none is
     left. On hybrid hierarchies (cgroup2 at ``/sys/fs/cgroup/unified`` without controllers,
     v1 controllers beside it) a tree uses both: v2 to kill, v1 pids for the limit;
  3. *no cgroup* (not root and nothing delegated, a read-only ``/sys/fs/cgroup`` in a
     container, macOS): the kernel's process group and session, every process whose parent
     chain leads back to the kernel, every process carrying the ``COURSE_SANDBOX`` marker
     in its environment, and orphans: ``ProcessTree.create`` makes the grader (the parent of
     the launcher) a child subreaper, so an orphan (a double fork) is handed to the grader
     instead of init, and ``join`` sets ``no_new_privs`` on the kernel, which every
     descendant inherits and none can clear: the grader's children with ``no_new_privs``
     belong to the tree (a grader process grades one submission at a time, so they are this
     submission's). What this misses: a process that left the kernel's session, cleared its
     environment and lost its parent chain (a double fork) when the grader cannot claim
     orphans: no ``prctl`` (not Linux), or a grader running with ``no_new_privs`` itself
     (systemd's ``NoNewPrivileges=``, Docker's ``no-new-privileges``), where the mark tells
     nothing apart; and everything of a grader that dies first (its orphans go to init and
     nobody kills them; with cgroups a later ``ProcessTree.from_spec(spec).close()`` still
     can). There is no fork limit: a fork bomb is killed in a loop, not prevented, and can
     starve the machine until then. On macOS (no ``/proc``) only the kernel's process group
     is killed.

Per-cell timeouts, the wall-clock limit per submission and the output cap are applied by the
grader around the kernel (``course_utils.grading.worker``).

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

This file imports only the standard library: ``python sandbox.py kernel SPEC -- ARGV...``
applies the limits to itself and then ``execve``s the real kernel command, so it must start
fast and must not import the course package (which imports torch).
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import signal
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

# course_utils (the whole package: a kernel imports it) and the folder holding it, with assets/.
# Computed here rather than taken from course_utils.paths: this file runs as a script with the
# standard library only.
PACKAGE = Path(__file__).resolve().parents[1]
ROOT = PACKAGE.parent


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
    file_mb: largest file the kernel may write, in MB (``RLIMIT_FSIZE``).
    landlock: restrict the filesystem and network with Landlock when the kernel supports it.
    """

    cell_timeout: int = 120
    wall_timeout: int = 900
    memory_mb: int = 4096
    output_mb: float = 2.0
    file_mb: int = 100
    landlock: bool = True

    def as_dict(self) -> dict:
        return asdict(self)


# --------------------------------------------------------------------------------------
# Environment


def clean_environment(workdir: Path, token: str, inherited: dict[str, str] | None = None) -> dict[str, str]:
    """The kernel's whole environment: nothing of the grader's besides locale and jupyter's own
    ``JPY_*`` variables. ``token`` marks every process of this sandbox (see ``kill_marked``)."""
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


def kill_marked(token: str, pids: list[int] = ()) -> int:
    """SIGKILL the given process groups and every process whose environment carries
    ``COURSE_SANDBOX=token``. Returns how many processes were signalled.

    The last resort, not the way to stop a submission: ``ProcessTree.kill`` finds every process
    of a submission (cgroups) and calls this as a final sweep, for a kernel whose launcher could
    not join its tree. On its own it misses a child that leaves the kernel's process group and
    clears or rewrites its environment (``Popen(..., start_new_session=True, env={})``)."""
    killed = 0
    for pid in pids:
        try:
            os.killpg(pid, signal.SIGKILL)
            killed += 1
        except (ProcessLookupError, PermissionError, OSError):
            pass
    marker = f"COURSE_SANDBOX={token}".encode()
    me = os.getpid()
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else []:
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            if marker in (entry / "environ").read_bytes().split(b"\0"):
                os.kill(int(entry.name), signal.SIGKILL)
                killed += 1
        except (OSError, ProcessLookupError):
            continue
    return killed


# --------------------------------------------------------------------------------------
# Landlock (linux/landlock.h) and capabilities, through ctypes

_LANDLOCK_CREATE_RULESET, _LANDLOCK_ADD_RULE, _LANDLOCK_RESTRICT_SELF = 444, 445, 446
_RULE_PATH_BENEATH = 1
_FS_EXECUTE, _FS_WRITE_FILE, _FS_READ_FILE, _FS_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_FS_TRUNCATE, _FS_IOCTL_DEV = 1 << 14, 1 << 15
_NET_CONNECT_TCP = 1 << 1
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1
_PR_SET_NO_NEW_PRIVS, _PR_CAPBSET_DROP, _PR_SET_SECUREBITS = 38, 24, 28
# SECBIT_NOROOT | its lock | SECBIT_NO_CAP_AMBIENT_RAISE | its lock: uid 0 gains no
# capabilities on execve, and none can be raised again.
_SECUREBITS = (1 << 0) | (1 << 1) | (1 << 6) | (1 << 7)
# /etc entries the kernel may not read even though uid 0 owns them.
_ETC_SECRETS = {"shadow", "shadow-", "gshadow", "gshadow-", "sudoers", "sudoers.d", "ssh", "ssl", "security", "krb5.keytab"}


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def landlock_abi() -> int:
    """The Landlock ABI version this kernel offers (0: none)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        version = _libc().syscall(ctypes.c_long(_LANDLOCK_CREATE_RULESET), None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    except (OSError, AttributeError):
        return 0
    return max(0, int(version))


def readable_paths() -> list[Path]:
    """What a sandboxed kernel may read: the Python installation(s) and their packages, the
    course package and its assets, system libraries, and /etc without its secrets."""
    paths = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}
    paths |= {Path(p).resolve() for p in sys.path if p and Path(p).is_dir() and "site-packages" in p}
    paths |= {PACKAGE, ROOT / "assets"}
    paths |= {Path(p) for p in ("/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/opt", "/proc", "/sys")}
    etc = Path("/etc")
    if etc.is_dir():
        paths |= {p for p in etc.iterdir() if p.name not in _ETC_SECRETS}
        paths |= {p for p in (etc / "ssl").glob("*") if p.name != "private"}
    return sorted(p for p in paths if p.exists())


def _add_path_rule(libc, ruleset: int, path: Path, access: int) -> None:
    flags = os.O_PATH | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except OSError:
        return
    try:
        if not path.is_dir():  # directory rights are invalid on a file
            access &= _FS_EXECUTE | _FS_WRITE_FILE | _FS_READ_FILE | _FS_TRUNCATE | _FS_IOCTL_DEV
        attr = _PathBeneathAttr(access, fd)
        if libc.syscall(ctypes.c_long(_LANDLOCK_ADD_RULE), ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH),
                        ctypes.byref(attr), ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), f"landlock_add_rule({path}): {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(fd)


def restrict_self(writable: Path) -> str:
    """Apply Landlock to this process and its future children: read ``readable_paths()``,
    write only under ``writable``, connect nowhere (TCP), signal nothing outside the sandbox.
    Returns a one-line description; raises OSError when unsupported."""
    abi = landlock_abi()
    if abi < 1:
        raise OSError("Landlock is not available on this kernel")
    fs_all = (1 << 13) - 1 | (1 << 13 if abi >= 2 else 0) | (_FS_TRUNCATE if abi >= 3 else 0) | (_FS_IOCTL_DEV if abi >= 5 else 0)
    # TCP connect is filtered, bind is not: ipykernel binds a pipe on a random port for the
    # output of subprocesses, and a listening socket nobody can connect to does no harm.
    net = _NET_CONNECT_TCP if abi >= 4 else 0
    scoped = _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL if abi >= 6 else 0
    attr = _RulesetAttr(fs_all, net, scoped)
    size = 8 if abi < 4 else 16 if abi < 6 else 24
    libc = _libc()
    ruleset = libc.syscall(ctypes.c_long(_LANDLOCK_CREATE_RULESET), ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), f"landlock_create_ruleset: {os.strerror(ctypes.get_errno())}")
    try:
        read = (_FS_EXECUTE | _FS_READ_FILE | _FS_READ_DIR) & fs_all
        for path in readable_paths():
            _add_path_rule(libc, ruleset, path, read)
        _add_path_rule(libc, ruleset, Path("/dev"), _FS_READ_DIR)
        for device in ("null", "zero", "full", "random", "urandom"):
            _add_path_rule(libc, ruleset, Path("/dev") / device, (_FS_READ_FILE | _FS_WRITE_FILE) & fs_all)
        _add_path_rule(libc, ruleset, writable, fs_all)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
        if libc.syscall(ctypes.c_long(_LANDLOCK_RESTRICT_SELF), ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), f"landlock_restrict_self: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(ruleset)
    parts = ["filesystem"] + (["tcp"] if net else []) + (["signals"] if scoped else [])
    return f"landlock abi {abi}: " + ", ".join(parts)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def drop_capabilities() -> str:
    """As root: keep uid 0 (the Python install may live in /root) but drop every capability,
    for this process and for anything it ``execve``s. Without root there is nothing to drop."""
    if os.geteuid() != 0:
        return "not root"
    libc = _libc()
    if libc.prctl(_PR_SET_SECUREBITS, _SECUREBITS, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECUREBITS)")
    last = int(Path("/proc/sys/kernel/cap_last_cap").read_text()) if Path("/proc/sys/kernel/cap_last_cap").exists() else 40
    for cap in range(last + 1):
        libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)
    header = _CapHeader(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3
    data = (_CapData * 2)()
    if libc.capset(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capset")
    return "root without capabilities"


OPEN_FILES = 1024
"""Open files and sockets per process (``RLIMIT_NOFILE``): a kernel needs a few dozen; one
process can no longer hold tens of thousands of sockets (every ephemeral port)."""


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter))]


_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 22, 2
_CLONE3 = 435  # the same number on every architecture (but MIPS), x32 adds bit 30
_ENOSYS = 38


def restrict_syscalls() -> str:
    """A seccomp filter for this process and everything it starts: ``clone3`` fails with
    ENOSYS, so the C library falls back to ``clone`` (as under Docker's default profile).
    ``clone3(CLONE_INTO_CGROUP)`` would start a child in any cgroup whose ``cgroup.procs``
    the uid may write, which Landlock does not check: uid 0 without capabilities could leave
    its cgroup v2 process tree that way. Raises OSError when seccomp is unavailable."""
    if not sys.platform.startswith("linux"):
        raise OSError("seccomp needs Linux")
    program = (_SockFilter * 5)(
        _SockFilter(0x20, 0, 0, 0),  # A = seccomp_data.nr
        _SockFilter(0x54, 0, 0, 0xFFFFFFFF & ~0x40000000),  # A &= ~__X32_SYSCALL_BIT
        _SockFilter(0x15, 0, 1, _CLONE3),  # A == clone3 ?
        _SockFilter(0x06, 0, 0, 0x00050000 | _ENOSYS),  # SECCOMP_RET_ERRNO | ENOSYS
        _SockFilter(0x06, 0, 0, 0x7FFF0000),  # SECCOMP_RET_ALLOW
    )
    fprog = _SockFprog(len(program), program)
    libc = _libc()
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl(PR_SET_SECCOMP): {os.strerror(ctypes.get_errno())}")
    return "seccomp: clone3 refused (no CLONE_INTO_CGROUP)"


def set_limits(limits: dict) -> None:
    """rlimits for this process and its children (see ``Limits``; ``open_files`` is optional,
    default ``OPEN_FILES``)."""
    mb = 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (int(limits["memory_mb"]) * mb,) * 2)
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(limits["file_mb"]) * mb,) * 2)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    files = int(limits.get("open_files", OPEN_FILES))
    files = files if hard == resource.RLIM_INFINITY else min(files, hard)
    resource.setrlimit(resource.RLIMIT_NOFILE, (files, files))
    cpu = int(limits["wall_timeout"]) + 5
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))


# --------------------------------------------------------------------------------------
# The process tree: every process one submission starts, found and killed

TREE_PREFIX = "course-sandbox-"
MECHANISMS = ("cgroup2", "cgroup1", "subreaper")
_PR_SET_CHILD_SUBREAPER, _PR_GET_CHILD_SUBREAPER = 36, 37


def _write(path: Path, text: str) -> None:
    """Write to a cgroup or state file without O_CREAT/O_TRUNC (cgroupfs and Landlock care)."""
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _read_pids(path: Path) -> set[int]:
    try:
        return {int(line) for line in path.read_text().split()}
    except (OSError, ValueError):
        return set()


def _unescape(field: str) -> str:
    """mountinfo writes space, tab, newline and backslash as ``\\ooo``."""
    out, i = [], 0
    while i < len(field):
        if field[i] == "\\" and field[i + 1 : i + 4].isdigit():
            out.append(chr(int(field[i + 1 : i + 4], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def cgroup_hierarchies() -> dict[str, tuple[Path, str, str | None]]:
    """The cgroup hierarchies this process sees, from /proc/self/mountinfo and /proc/self/cgroup:
    ``{"cgroup2": ..., "pids": ...}`` (the v1 pids hierarchy), each as (mount point, root of
    the hierarchy shown at that mount point, this process's own cgroup in that hierarchy).
    Missing keys: not mounted (or not Linux)."""
    found: dict[str, tuple[Path, str, str | None]] = {}
    try:
        mountinfo = Path("/proc/self/mountinfo").read_text()
        own_lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return found
    own: dict[str, str] = {}
    for line in own_lines:
        number, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if number == "0" and not controllers:
            own["cgroup2"] = path
        for controller in controllers.split(","):
            own.setdefault(controller, path)
    for line in mountinfo.splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3:
            continue
        if tail[0] == "cgroup2":
            kind = "cgroup2"
        elif tail[0] == "cgroup" and "pids" in tail[2].split(","):
            kind = "pids"
        else:
            continue
        found.setdefault(kind, (Path(_unescape(fields[4])), _unescape(fields[3]), own.get(kind)))
    return found


def _parent_candidates(mount: tuple[Path, str, str | None]) -> list[Path]:
    """Where a tree's cgroup may go, best first: under this process's own cgroup (so whatever
    limits the grader's service has apply to the kernel too), else at the hierarchy's root."""
    point, root, own = mount
    candidates = []
    if own is not None and not own.endswith(" (deleted)"):
        base = root.rstrip("/")
        if own == root or own.startswith(base + "/"):
            candidates.append(point / own[len(base) :].lstrip("/"))
    if point not in candidates:
        candidates.append(point)
    return candidates


def _make_cgroup(mount: tuple[Path, str, str | None] | None, name: str) -> tuple[Path | None, str]:
    """Make the cgroup ``name`` in the first candidate parent where this process may create it
    and later move a process into it. (path, "") or (None, why not)."""
    if mount is None:
        return None, "not mounted"
    reasons = []
    for parent in _parent_candidates(mount):
        path = parent / name
        try:
            path.mkdir()
        except OSError as error:
            reasons.append(f"{parent}: {error.strerror or error}")
            continue
        # Moving a process needs write access to cgroup.procs of the source's and the target's
        # common ancestor (the parent here) and of the target.
        if os.access(parent / "cgroup.procs", os.W_OK) and os.access(path / "cgroup.procs", os.W_OK):
            return path, ""
        reasons.append(f"{parent}: cgroup.procs not writable")
        _remove_cgroup(path, wait=0)
    return None, "; ".join(reasons)


def _remove_cgroup(path: Path, wait: float = 1.0) -> bool:
    """rmdir a cgroup, retrying for ``wait`` seconds while its last processes finish exiting."""
    deadline = time.monotonic() + wait
    while True:
        try:
            path.rmdir()
            return True
        except FileNotFoundError:
            return True
        except OSError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)


def _limit_pids(path: Path, max_pids: int | None, parent_may_enable: bool = False) -> bool:
    """Set ``pids.max`` of the cgroup ``path``; for cgroup v2 first enable the pids controller
    for the parent's children when the parent has it but does not pass it on (possible in a
    cgroup without processes of its own, and always at the root). True when set."""
    if max_pids is None:
        return False
    if parent_may_enable and not (path / "pids.max").exists():
        parent = path.parent
        try:
            if "pids" in (parent / "cgroup.controllers").read_text().split():
                if "pids" not in (parent / "cgroup.subtree_control").read_text().split():
                    _write(parent / "cgroup.subtree_control", "+pids")
        except OSError:
            return False
    try:
        _write(path / "pids.max", str(int(max_pids)))
        return True
    except OSError:
        return False


def _libc_call(name: str, *args) -> int:
    """A libc function through ctypes; -1 where it does not exist (not Linux)."""
    try:
        return int(getattr(_libc(), name)(*args))
    except (OSError, AttributeError):
        return -1


def is_child_subreaper() -> bool:
    """Whether this process collects its descendants' orphans (``PR_SET_CHILD_SUBREAPER``)."""
    value = ctypes.c_int(0)
    return _libc_call("prctl", _PR_GET_CHILD_SUBREAPER, ctypes.byref(value), 0, 0, 0) == 0 and value.value == 1


def _proc_table() -> dict[int, tuple[str, int, int, int, int]] | None:
    """{pid: (state, ppid, pgid, sid, start time)} of every process, from /proc; None without /proc."""
    if not os.path.isdir("/proc/self"):
        return None
    table = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as stat:
                data = stat.read()
            fields = data[data.rindex(b")") + 2 :].split()
            table[int(entry.name)] = (fields[0].decode(), int(fields[1]), int(fields[2]), int(fields[3]), int(fields[19]))
        except (OSError, ValueError, IndexError):
            continue
    return table


def _start_time(pid: int) -> int:
    try:
        data = Path(f"/proc/{pid}/stat").read_bytes()
        return int(data[data.rindex(b")") + 2 :].split()[19])
    except (OSError, ValueError, IndexError):
        return 0


def _no_new_privs(pid: int | str) -> bool:
    try:
        return "\nNoNewPrivs:\t1" in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


def _has_marker(pid: int, marker: bytes) -> bool:
    try:
        return marker in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return False


def _sigkill(pids, killed: set[int]) -> None:
    """SIGKILL each of ``pids`` (gone or not ours: skipped) and add those signalled to ``killed``."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
            killed.add(pid)
        except OSError:
            pass


class ProcessTree:
    """Every process one submission's kernel starts, in any session or process group, with any environment.

    The grader calls ``create(token)`` before it starts the kernel and puts ``as_spec()`` in
    the sandbox spec (key ``"tree"``); the launcher (``launch_kernel``) calls
    ``from_spec(spec["tree"]).join()`` in the kernel's own process before anything can fork
    and before it drops capabilities and applies Landlock, so the kernel and all it ever
    starts belong to the tree. The grader calls ``kill()`` when it stops the kernel (timeouts)
    and ``close()`` when it is done (a ``finally``); both are idempotent and never raise.

    Mechanisms, chosen by ``create`` (or asked for with ``mechanism=``):

    - ``"cgroup2"``: a cgroup v2 ``course-sandbox-TOKEN`` under the grader's own cgroup (or the
      hierarchy's root). Membership is inherited by every child and cannot be left without
      write access to a ``cgroup.procs`` above it, which Landlock denies (and seccomp the
      ``clone3(CLONE_INTO_CGROUP)`` way round it, see ``restrict_syscalls``). ``kill`` writes
      ``cgroup.kill`` (Linux 5.14; atomic, forks included) or freezes, SIGKILLs and thaws.
      ``pids.max`` limits forks when the pids controller is available in that cgroup;
      otherwise (hybrid hierarchies) a v1 pids cgroup is made as well, for the limit.
    - ``"cgroup1"``: a cgroup in the v1 pids hierarchy: ``pids.max``, and ``kill`` sets it to
      0 (no more forks) then SIGKILLs every process listed until none is left.
    - ``"subreaper"``: no cgroup (see the module docstring for what this keeps): the kernel's
      process group and session, its descendants, the environment marker, and orphans handed
      to the grader, which ``create`` makes a child subreaper.

    ``description`` is one line for the grading report. ``max_pids`` is the fork limit in
    force, None when there is none. After ``kill`` the tree is empty and may be joined again.
    """

    use_cgroup_kill = True  # False: always freeze + SIGKILL + thaw (kernels before 5.14; tests)
    _subreaper_trees: list[ProcessTree] = []  # live fallback trees of this process
    _subreaper_ours = False  # whether a ProcessTree made this process a child subreaper

    def __init__(self, token: str, mechanism: str, cgroup2: str | None = None, cgroup1: str | None = None,
                 max_pids: int | None = None, state: str | None = None, description: str = ""):
        _check_token(token)
        if mechanism not in MECHANISMS:
            raise ValueError(f"unknown process tree mechanism {mechanism!r}")
        name = TREE_PREFIX + token
        for path in (cgroup2, cgroup1, state):
            if path is not None and Path(path).name != name:
                raise ValueError(f"not a process tree path: {path}")
        self.token, self.mechanism, self.max_pids = token, mechanism, max_pids
        self.cgroup2 = Path(cgroup2) if cgroup2 else None
        self.cgroup1 = Path(cgroup1) if cgroup1 else None
        self.state = Path(state) if state else None
        self.description = description or f"process tree: {mechanism}"

    def __repr__(self) -> str:
        return f"ProcessTree({self.description!r})"

    def __enter__(self) -> ProcessTree:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---------------------------------------------------------------- creating, passing on

    @classmethod
    def create(cls, token: str, max_pids: int | None = 256, mechanism: str | None = None) -> ProcessTree:
        """Make the tree for one submission, in the grader, before the kernel starts.

        ``max_pids``: processes and threads the tree may hold at once (None: no limit), where
        a pids controller is available. ``mechanism``: None for the best available, or one of
        ``MECHANISMS``, which raises OSError (with the reason) when that one is unavailable.
        With ``mechanism=None`` this never fails: the fallback is always there."""
        _check_token(token)
        if mechanism not in (None, *MECHANISMS):
            raise ValueError(f"unknown process tree mechanism {mechanism!r}; one of {MECHANISMS}")
        name, missing = TREE_PREFIX + token, []
        mounts = cgroup_hierarchies()
        if mechanism in (None, "cgroup2"):
            v2, why = _make_cgroup(mounts.get("cgroup2"), name)
            if v2 is not None:
                kill = "cgroup.kill" if (v2 / "cgroup.kill").exists() else "freezer"
                if _limit_pids(v2, max_pids, parent_may_enable=True):
                    return cls(token, "cgroup2", str(v2), None, max_pids, None,
                               f"process tree: cgroup v2 ({kill}, pids.max {max_pids})")
                v1 = None
                if max_pids is not None:
                    v1, _ = _make_cgroup(mounts.get("pids"), name)
                    if v1 is not None and not _limit_pids(v1, max_pids):
                        _remove_cgroup(v1, wait=0)
                        v1 = None
                if v1 is not None:
                    return cls(token, "cgroup2", str(v2), str(v1), max_pids, None,
                               f"process tree: cgroup v2 ({kill}) + cgroup v1 pids (pids.max {max_pids})")
                return cls(token, "cgroup2", str(v2), None, None, None,
                           f"process tree: cgroup v2 ({kill}); no fork limit (no pids controller)")
            missing.append(f"cgroup v2: {why}")
            if mechanism:
                raise OSError(missing[-1])
        if mechanism in (None, "cgroup1"):
            v1, why = _make_cgroup(mounts.get("pids"), name)
            if v1 is not None:
                limited = _limit_pids(v1, max_pids)
                limit = f"pids.max {max_pids}" if limited else "no fork limit"
                return cls(token, "cgroup1", None, str(v1), max_pids if limited else None, None,
                           f"process tree: cgroup v1 pids ({limit})")
            missing.append(f"cgroup v1 pids: {why}")
            if mechanism:
                raise OSError(missing[-1])
        import tempfile  # here, not at the top: the launcher must start fast

        state: Path | None = Path(tempfile.gettempdir()) / name
        try:  # where join records the kernel's pid (its process group and session)
            state.mkdir(mode=0o700)
            (state / "roots").touch(mode=0o600)
        except OSError as error:
            missing.append(f"no record of the kernel's pid ({error.strerror or error})")
            state = None
        subreaper = is_child_subreaper()
        if not subreaper and _libc_call("prctl", _PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0:
            subreaper = cls._subreaper_ours = True
        how = "process group, descendants, environment marker" + (", orphans (child subreaper)" if subreaper else "")
        if not missing:
            missing.append("asked for")
        tree = cls(token, "subreaper", None, None, None, str(state) if state else None,
                   f"process tree: {how}; no fork limit (no cgroup: {'; '.join(missing)})")
        cls._subreaper_trees.append(tree)
        return tree

    def as_spec(self) -> dict:
        """What the launcher needs, JSON-able (the sandbox spec's ``"tree"``)."""
        return {
            "token": self.token,
            "mechanism": self.mechanism,
            "cgroup2": str(self.cgroup2) if self.cgroup2 else None,
            "cgroup1": str(self.cgroup1) if self.cgroup1 else None,
            "max_pids": self.max_pids,
            "state": str(self.state) if self.state else None,
            "description": self.description,
        }

    @classmethod
    def from_spec(cls, spec: dict) -> ProcessTree:
        """The tree ``as_spec`` described (in the launcher, or in a grader cleaning up after
        another process): it can join, list, kill and close, but it never made this process a
        subreaper."""
        return cls(spec["token"], spec["mechanism"], spec.get("cgroup2"), spec.get("cgroup1"), spec.get("max_pids"),
                   spec.get("state"), spec.get("description", ""))

    # ---------------------------------------------------------------- joining

    def join(self) -> None:
        """Put this process, and so everything it will start, in the tree. Called by the launcher
        in the kernel's own process before it forks anything and before it drops capabilities
        and applies Landlock (after those, joining is impossible, as is leaving). Raises
        OSError when the process could not be put in some part of the tree."""
        pid = os.getpid()
        errors = []
        for path in self._cgroups():
            try:
                _write(path / "cgroup.procs", str(pid))
            except OSError as error:
                errors.append(f"{path}: {error.strerror or error}")
        if self.mechanism == "subreaper":
            # The mark the grader recognises orphans by: inherited, and nothing can clear it.
            if _libc_call("prctl", _PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 and sys.platform.startswith("linux"):
                errors.append("prctl(PR_SET_NO_NEW_PRIVS) failed")
        if self.state is not None:
            try:
                fd = os.open(self.state / "roots", os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
                try:
                    os.write(fd, f"{pid} {_start_time(pid)}\n".encode())
                finally:
                    os.close(fd)
            except OSError as error:
                errors.append(f"{self.state}: {error.strerror or error}")
        if errors:
            raise OSError("could not join the process tree: " + "; ".join(errors))

    # ---------------------------------------------------------------- finding

    def pids(self) -> list[int]:
        """The live processes in the tree (zombies excluded), sorted."""
        try:
            if self.mechanism == "subreaper":
                return sorted(pid for pid, (state, _) in self._members().items() if state != "Z")
            found: set[int] = set()
            for path in self._cgroups():
                found |= _read_pids(path / "cgroup.procs")
            found.discard(os.getpid())
            return sorted(found)
        except Exception:
            return []

    def _cgroups(self) -> list[Path]:
        return [path for path in (self.cgroup2, self.cgroup1) if path is not None]

    def _roots(self) -> dict[int, int]:
        """{pid: start time} of the processes that joined (fallback only)."""
        roots = {}
        try:
            for line in (self.state / "roots").read_text().splitlines() if self.state else []:
                pid, start = line.split()
                roots[int(pid)] = int(start)
        except (OSError, ValueError):
            pass
        return roots

    def _members(self) -> dict[int, tuple[str, int]]:
        """Fallback: {pid: (state, ppid)} of every process found in the tree, zombies included."""
        roots, me = self._roots(), os.getpid()
        table = _proc_table()
        if table is None:  # no /proc (macOS): the processes that joined, and nothing else
            found = {}
            for pid in roots:
                try:
                    os.kill(pid, 0)
                    found[pid] = ("?", 0)
                except OSError:
                    pass
            return found
        valid = {pid for pid, start in roots.items() if pid in table and start in (0, table[pid][4])}
        # A root's number names its process group and session while any member lives, and is
        # not reused until then; a live process of that number but another start time means
        # both are gone.
        groups = {pid for pid in roots if pid not in table or pid in valid}
        claim_orphans = is_child_subreaper() and not _no_new_privs("self")
        others = set()
        for tree in ProcessTree._subreaper_trees:
            if tree.state != self.state:
                others |= set(tree._roots())
        marker = f"COURSE_SANDBOX={self.token}".encode()
        found = set(valid)
        for pid, (_, ppid, pgid, sid, _) in table.items():
            if pid == me or pid in found:
                continue
            if pgid in groups or sid in groups:
                found.add(pid)
            elif claim_orphans and ppid == me and pid not in others and _no_new_privs(pid):
                found.add(pid)
            elif _has_marker(pid, marker):
                found.add(pid)
        children: dict[int, list[int]] = {}
        for pid, info in table.items():
            children.setdefault(info[1], []).append(pid)
        todo = list(found)
        while todo:
            for child in children.get(todo.pop(), []):
                if child not in found and child != me:
                    found.add(child)
                    todo.append(child)
        return {pid: (table[pid][0], table[pid][1]) for pid in found}

    # ---------------------------------------------------------------- killing

    def kill(self, timeout: float = 5.0) -> int:
        """SIGKILL every process in the tree, again and again until none is left or ``timeout``
        seconds have passed. Returns how many processes were killed. Idempotent; never raises."""
        killed: set[int] = set()
        try:
            deadline = time.monotonic() + timeout
            if self.mechanism == "subreaper":
                self._kill_fallback(deadline, killed)
            else:
                self._kill_cgroups(deadline, killed)
            # The marker too: catches a kernel whose launcher could not join the tree.
            return len(killed) + kill_marked(self.token)
        except Exception:
            return len(killed)

    def _kill_cgroups(self, deadline: float, killed: set[int]) -> None:
        if self.cgroup1 is not None:
            try:
                _write(self.cgroup1 / "pids.max", "0")  # no new processes from here on
            except OSError:
                pass
        delay = 0.002
        while True:
            live = self.pids()
            if not live:
                break
            frozen = False
            if self.cgroup2 is not None:
                if self.use_cgroup_kill and (self.cgroup2 / "cgroup.kill").exists():
                    try:
                        _write(self.cgroup2 / "cgroup.kill", "1")
                        killed.update(live)
                    except OSError:
                        pass
                else:
                    frozen = self._freeze(True)
                    live = self.pids()
            _sigkill(live, killed)
            if frozen:
                self._freeze(False)
            if time.monotonic() >= deadline:
                break
            time.sleep(delay)
            delay = min(delay * 2, 0.05)
        if self.cgroup1 is not None and self.max_pids is not None and not self.pids():
            try:
                _write(self.cgroup1 / "pids.max", str(self.max_pids))  # empty again: ready for a new kernel
            except OSError:
                pass

    def _freeze(self, freeze: bool) -> bool:
        """cgroup v2 freezer: stop every process (a fatal signal still gets through), so none
        forks while the others are killed. True when frozen (or thawed)."""
        try:
            _write(self.cgroup2 / "cgroup.freeze", "1" if freeze else "0")
        except OSError:
            return False
        deadline = time.monotonic() + 0.5
        while freeze and time.monotonic() < deadline:
            try:
                if "frozen 1" in (self.cgroup2 / "cgroup.events").read_text():
                    break
            except OSError:
                break
            time.sleep(0.002)
        return True

    def _kill_fallback(self, deadline: float, killed: set[int]) -> None:
        roots, me = set(self._roots()), os.getpid()
        if not os.path.isdir("/proc/self"):  # no /proc: the kernel's process group is all there is
            for pid in roots:
                for send in (os.killpg, os.kill):
                    try:
                        send(pid, signal.SIGKILL)
                        killed.add(pid)
                    except OSError:
                        pass
            return
        delay = 0.002
        while True:
            members = self._members()
            live = [pid for pid, (state, _) in members.items() if state != "Z"]
            _sigkill(live, killed)
            reaped = 0
            for pid, (state, ppid) in members.items():
                # Orphans handed to this process (the subreaper) are its children now: reap them.
                # The kernel itself stays for its owner (jupyter_client's Popen) to reap.
                if state == "Z" and ppid == me and pid not in roots:
                    try:
                        reaped += os.waitpid(pid, os.WNOHANG)[0] == pid
                    except ChildProcessError:
                        pass
            if (not live and not reaped) or time.monotonic() >= deadline:
                break
            time.sleep(delay)
            delay = min(delay * 2, 0.05)

    def close(self) -> None:
        """``kill()``, then remove what ``create`` made: the cgroup(s), the fallback's state
        folder, and this process's subreaper role once no fallback tree needs it. Idempotent;
        never raises."""
        try:
            self.kill()
            for path in self._cgroups():
                _remove_cgroup(path)
            if self.state is not None:
                try:
                    (self.state / "roots").unlink(missing_ok=True)
                    self.state.rmdir()
                except OSError:
                    pass
            trees = ProcessTree._subreaper_trees
            if self in trees:
                trees.remove(self)
                if not trees and ProcessTree._subreaper_ours:
                    _libc_call("prctl", _PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
                    ProcessTree._subreaper_ours = False
        except Exception:
            pass


def _check_token(token: str) -> None:
    if not token or not all(c.isascii() and (c.isalnum() or c in "-_") for c in token) or len(token) > 64:
        raise ValueError(f"a process tree token is 1 to 64 letters, digits, '-' or '_', not {token!r}")


# --------------------------------------------------------------------------------------
# The kernel launcher


def launch_kernel(spec_path: str, argv: list[str]) -> None:
    """Become the sandboxed kernel: read the spec, join the submission's ``ProcessTree``
    (``spec["tree"]``, from ``ProcessTree.as_spec``), copy the connection file into the working
    folder, record this pid, apply limits and restrictions, then ``execve`` ``argv``.

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
    os.execve(argv[0], argv, os.environ)


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.argv[1] == "kernel" and "--" in sys.argv:
        split = sys.argv.index("--")
        launch_kernel(sys.argv[2], sys.argv[split + 1 :])
    else:
        sys.exit("usage: python sandbox.py kernel SPEC.json -- KERNEL ARGV...")
