"""Limits and isolation for the kernel that runs one student's notebook during autograding.

Student code is untrusted. Without containers, a single Linux machine still allows this much,
and ``course autograde`` uses all of it (see ``Limits``):

- **a working folder of its own**: the kernel's current and home folder holds only the
  student's own notebook; no solutions, hidden tests, gradebook or other submissions;
- **a clean environment**: a minimal ``PATH``, ``HOME`` and ``TMPDIR`` inside the working
  folder, ``COURSE_FAST=1``, nothing else of the grader's environment (no tokens, no paths);
- **resource limits** (``setrlimit``, inherited by anything the kernel starts): address space
  (``memory_mb``), CPU seconds (the wall-clock limit), size of any file written, no core dumps;
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

Per-cell timeouts, the wall-clock limit per submission and the output cap are applied by the
grader around the kernel (``course_utils.grading_worker``).

What is NOT protected: UDP traffic and DNS (Landlock filters TCP only); CPU and memory
bandwidth taken from other submissions graded at the same time; fork bombs (``RLIMIT_NPROC``
does not apply to root and counts all of a user's processes otherwise); the address-space
limit is per process, so a notebook can start several processes each up to the limit; any
file readable in the allow-list (the course package, which students have anyway). On a
kernel without Landlock the working folder is the only filesystem protection: student code
could then read any file the grading user can read. Use containers or a dedicated user
account when that matters.

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

PACKAGE = Path(__file__).resolve().parent
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
    ``COURSE_SANDBOX=token`` (a child that left the kernel's process group is still found,
    unless it rewrote its own environment). Returns how many processes were signalled."""
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


def set_limits(limits: dict) -> None:
    """rlimits for this process and its children (see ``Limits``)."""
    mb = 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (int(limits["memory_mb"]) * mb,) * 2)
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(limits["file_mb"]) * mb,) * 2)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    cpu = int(limits["wall_timeout"]) + 5
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))


# --------------------------------------------------------------------------------------
# The kernel launcher


def launch_kernel(spec_path: str, argv: list[str]) -> None:
    """Become the sandboxed kernel: read the spec, copy the connection file into the working
    folder, record this pid, apply limits and restrictions, then ``execve`` ``argv``.

    Whatever cannot be applied (no Landlock, not root) is written to the spec's status file,
    which the grader turns into a note in the report, and the kernel starts anyway.
    """
    spec = json.loads(Path(spec_path).read_text())
    workdir = Path(spec["workdir"])
    status = {"pid": os.getpid(), "started": time.time(), "applied": [], "missing": []}
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
    with report:
        report.write(json.dumps(status))
    os.execve(argv[0], argv, os.environ)


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.argv[1] == "kernel" and "--" in sys.argv:
        split = sys.argv.index("--")
        launch_kernel(sys.argv[2], sys.argv[split + 1 :])
    else:
        sys.exit("usage: python sandbox.py kernel SPEC.json -- KERNEL ARGV...")
