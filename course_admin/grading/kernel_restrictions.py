"""What the kernel launcher applies to the kernel's own process, for it and everything it starts:
resource limits (``set_limits``), a Landlock filesystem and network allow-list
(``restrict_self``), no capabilities for root (``drop_capabilities``) and a seccomp filter
refusing ``clone3`` (``restrict_syscalls``). Linux system calls through ctypes; each is one-way.

Standard library only: the kernel launcher (``sandbox.py``, run as a script) imports it.
"""

from __future__ import annotations

import ctypes
import os
import resource
import sys
from pathlib import Path

# The student package (a kernel imports it), the instructor package beside it, and the folder
# holding them, with assets/. Computed here rather than taken from course_utils.paths: the
# launcher runs with the standard library only.
ADMIN = Path(__file__).resolve().parents[1]
PACKAGE = ADMIN.parent / "course_utils"
ROOT = PACKAGE.parent
ADMIN_FILES_A_KERNEL_READS = ("__init__.py", "grading/__init__.py", "grading/synthetic_exercises.py")
"""The only files of the instructor package a kernel may read: the synthetic assignment's hidden
cells import its two exercises (no solution, no grader code is among them)."""


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


def package_rules() -> tuple[list[Path], list[Path]]:
    """The course's packages as (folders a kernel may list, files it may read): every folder and
    file of the student package, compiled ``.pyc`` files included, and of the instructor package
    only ``ADMIN_FILES_A_KERNEL_READS``. Landlock grants a folder's rights to everything beneath
    it, so each file gets a rule and the folders only the right to be listed."""
    folders, files = [PACKAGE], []
    for path in sorted(PACKAGE.rglob("*")):
        (folders if path.is_dir() else files).append(path)
    for name in ADMIN_FILES_A_KERNEL_READS:
        source = ADMIN / name
        if source.is_file():
            files += [source, *sorted((source.parent / "__pycache__").glob(f"{source.stem}.*.pyc"))]
            folders += [folder for folder in (source.parent, source.parent / "__pycache__")
                        if folder.is_dir() and folder not in folders]
    return folders, files


def _without_package(path: Path) -> tuple[list[Path], list[Path]]:
    """(trees, folders to list only) that give everything under ``path`` but the course's two
    packages: ``path`` itself when neither is inside it (an editable install), else its other
    entries, going down the folders that lead to them (a copy in site-packages)."""
    if path in (PACKAGE, ADMIN):
        return [], []
    if not (PACKAGE.is_relative_to(path) or ADMIN.is_relative_to(path)):
        return [path], []
    trees, listed = [], [path]
    for entry in path.iterdir():
        more_trees, more_listed = _without_package(entry)
        trees += more_trees
        listed += more_listed
    return trees, listed


def readable_paths() -> tuple[list[Path], list[Path]]:
    """(trees a sandboxed kernel may read, folders it may only list): the Python installation(s)
    and their packages, the course's assets, system libraries, and /etc without its secrets;
    not the course's packages, which ``package_rules`` opens file by file."""
    paths = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}
    paths |= {Path(p).resolve() for p in sys.path if p and Path(p).is_dir() and "site-packages" in p}
    paths |= {ROOT / "assets", PACKAGE / "assets"}
    paths |= {Path(p) for p in ("/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/opt", "/proc", "/sys")}
    etc = Path("/etc")
    if etc.is_dir():
        paths |= {p for p in etc.iterdir() if p.name not in _ETC_SECRETS}
        paths |= {p for p in (etc / "ssl").glob("*") if p.name != "private"}
    trees, listed = set(), set()
    for path in paths:
        if path.exists():
            more_trees, more_listed = _without_package(path)
            trees |= set(more_trees)
            listed |= set(more_listed)
    return sorted(trees), sorted(listed)


def _only(files: list[Path], sources: list[Path]) -> list[Path]:
    """The files of ``files`` that are one of ``sources`` or a compiled copy of one
    (``__pycache__/NAME.cpython-311.pyc`` beside ``NAME.py``)."""
    wanted = {Path(source) for source in sources}
    compiled = {(path.parent / "__pycache__", path.stem) for path in wanted}
    return [path for path in files if path in wanted or (path.parent, path.name.split(".")[0]) in compiled]


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


def restrict_self(writable: Path, package_files: list[Path] | None = None) -> str:
    """Apply Landlock to this process and its future children: read ``readable_paths()`` and the
    student package (``package_rules``), or, given ``package_files``, only those files of it
    (every folder of it may still be listed),
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
        trees, listed = readable_paths()
        folders, files = package_rules()
        if package_files is not None:
            files = _only(files, package_files)
        for path in trees:
            _add_path_rule(libc, ruleset, path, read)
        for path in listed + folders:
            _add_path_rule(libc, ruleset, path, _FS_READ_DIR)
        for path in files:
            _add_path_rule(libc, ruleset, path, (_FS_EXECUTE | _FS_READ_FILE) & fs_all)
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


# --------------------------------------------------------------------------------------
# seccomp


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
    _install(program)
    return "seccomp: clone3 refused (no CLONE_INTO_CGROUP)"


def _install(program) -> None:
    fprog = _SockFprog(len(program), program)
    libc = _libc()
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl(PR_SET_SECCOMP): {os.strerror(ctypes.get_errno())}")


_AUDIT_ARCH_X86_64 = 0xC000003E
_EPERM = 1
_CLONE, _CLONE_THREAD = 56, 0x00010000
_ALONE_REFUSED = {
    "socket": 41, "socketpair": 53, "fork": 57, "vfork": 58, "ptrace": 101, "shmget": 29, "semget": 64,
    "msgget": 68, "mq_open": 240, "process_vm_readv": 310, "process_vm_writev": 311, "bpf": 321,
    "userfaultfd": 323, "io_uring_setup": 425,
}
"""x86-64 system calls a process driving one answer refuses (EPERM)."""


def restrict_alone() -> str:
    """A seccomp filter for the process that drives one exercise's answer (``drive_runner``): on top
    of ``restrict_syscalls``, it can start no process (``fork``, ``vfork``, ``clone`` other than a
    thread's), open no socket of any family, use no System V or POSIX message queue, semaphore set
    or shared memory, and read or write no other process's memory. Nothing it computes can reach
    another exercise's process, and no process left by the notebook's run can serve it. x86-64
    only (a 32-bit system call is refused too); raises OSError where that is not the machine."""
    import platform

    if not sys.platform.startswith("linux") or platform.machine() != "x86_64":
        raise OSError("this filter is written for x86-64 Linux")
    refused = sorted(_ALONE_REFUSED.values())
    allow, deny = len(refused) + 9, len(refused) + 10  # indexes of the two return instructions
    program = [
        _SockFilter(0x20, 0, 0, 4),  # A = seccomp_data.arch
        _SockFilter(0x15, 1, 0, _AUDIT_ARCH_X86_64),  # x86-64 ? skip the next
        _SockFilter(0x06, 0, 0, 0x00050000 | _EPERM),  # another ABI (int 0x80): refused
        _SockFilter(0x20, 0, 0, 0),  # A = seccomp_data.nr
        _SockFilter(0x54, 0, 0, 0xFFFFFFFF & ~0x40000000),  # A &= ~__X32_SYSCALL_BIT
    ]
    for number in refused:  # A == number ? go to deny
        program.append(_SockFilter(0x15, deny - len(program) - 1, 0, number))
    program += [
        _SockFilter(0x15, 0, allow - len(program) - 1, _CLONE),  # not clone: allowed
        _SockFilter(0x20, 0, 0, 16),  # A = low word of args[0], clone's flags
        _SockFilter(0x54, 0, 0, _CLONE_THREAD),  # A &= CLONE_THREAD
        _SockFilter(0x15, 0, 1, _CLONE_THREAD),  # a thread ? allowed : refused
    ]
    assert len(program) == allow
    program += [_SockFilter(0x06, 0, 0, 0x7FFF0000), _SockFilter(0x06, 0, 0, 0x00050000 | _EPERM)]
    _install((_SockFilter * len(program))(*program))
    return "seccomp: no process, socket, IPC or other process's memory"


# --------------------------------------------------------------------------------------
# Resource limits

OPEN_FILES = 1024
"""Open files and sockets per process (``RLIMIT_NOFILE``): a kernel needs a few dozen; one
process can no longer hold tens of thousands of sockets (every ephemeral port)."""


def set_limits(limits: dict) -> None:
    """rlimits for this process and its children (see ``sandbox.Limits``; ``open_files`` is optional,
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
