"""Every process one submission's kernel starts, found and killed: ``ProcessTree``.

The kernel joins a process tree of its submission before it starts anything, and the grader
kills the whole tree on a timeout and when grading ends, whatever session, process group or
environment a process gave itself; where a pids controller is available the tree also holds at
most ``max_pids`` processes and threads (a fork bomb gets ``BlockingIOError``). Best first:

1. *cgroup v2* (a cgroup ``course-sandbox-TOKEN`` under the grader's own cgroup, else at
   the root of the hierarchy; needs write access there: root, or a delegated cgroup).
   Killing writes ``cgroup.kill`` (Linux 5.14), which takes new forks too, or freezes the
   cgroup, SIGKILLs every member and thaws it. A member could leave only by writing its
   pid to a ``cgroup.procs`` outside the tree, which Landlock forbids (only its working
   folder is writable), or by starting a child elsewhere with ``clone3(CLONE_INTO_CGROUP)``,
   which Landlock does not see: a seccomp filter makes ``clone3`` fail with ENOSYS (the C
   library then uses ``clone``; ``kernel_restrictions.restrict_syscalls``). The fork limit
   needs the pids controller in that cgroup;
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

The cgroup files are handled by ``cgroups``, the ``/proc`` table and signals by ``processes``.
Standard library only: the kernel launcher (``sandbox.py``, run as a script) imports it.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

if __package__:
    from course_admin.grading import cgroups, processes
else:  # imported by the launcher script, from its own folder (see sandbox.py)
    import cgroups
    import processes

TREE_PREFIX = "course-sandbox-"
MECHANISMS = ("cgroup2", "cgroup1", "subreaper")


class ProcessTree:
    """Every process one submission's kernel starts, in any session or process group, with any environment.

    The grader calls ``create(token)`` before it starts the kernel and puts ``as_spec()`` in
    the sandbox spec (key ``"tree"``); the launcher (``sandbox.launch_kernel``) calls
    ``from_spec(spec["tree"]).join()`` in the kernel's own process before anything can fork
    and before it drops capabilities and applies Landlock, so the kernel and all it ever
    starts belong to the tree. The grader calls ``kill()`` when it stops the kernel (timeouts)
    and ``close()`` when it is done (a ``finally``); both are idempotent and never raise.

    ``mechanism`` is one of ``MECHANISMS``, the module docstring's 1 to 3 in that order, chosen
    by ``create`` (or asked for with ``mechanism=``). ``"cgroup2"`` with ``cgroup1`` set is the
    hybrid case: v2 to kill, the v1 pids cgroup for the fork limit.

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
        mounts = cgroups.cgroup_hierarchies()
        if mechanism in (None, "cgroup2"):
            v2, why = cgroups.make_cgroup(mounts.get("cgroup2"), name)
            if v2 is not None:
                kill = "cgroup.kill" if (v2 / "cgroup.kill").exists() else "freezer"
                if cgroups.limit_pids(v2, max_pids, parent_may_enable=True):
                    return cls(token, "cgroup2", str(v2), None, max_pids, None,
                               f"process tree: cgroup v2 ({kill}, pids.max {max_pids})")
                v1 = None
                if max_pids is not None:
                    v1, _ = cgroups.make_cgroup(mounts.get("pids"), name)
                    if v1 is not None and not cgroups.limit_pids(v1, max_pids):
                        cgroups.remove_cgroup(v1, wait=0)
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
            v1, why = cgroups.make_cgroup(mounts.get("pids"), name)
            if v1 is not None:
                limited = cgroups.limit_pids(v1, max_pids)
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
        subreaper = processes.is_child_subreaper()
        if not subreaper and processes.libc_call("prctl", processes.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0:
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
                cgroups.write_file(path / "cgroup.procs", str(pid))
            except OSError as error:
                errors.append(f"{path}: {error.strerror or error}")
        if self.mechanism == "subreaper":
            # The mark the grader recognises orphans by: inherited, and nothing can clear it.
            if processes.libc_call("prctl", processes.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 and sys.platform.startswith("linux"):
                errors.append("prctl(PR_SET_NO_NEW_PRIVS) failed")
        if self.state is not None:
            try:
                fd = os.open(self.state / "roots", os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
                try:
                    os.write(fd, f"{pid} {processes.start_time(pid)}\n".encode())
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
                found |= cgroups.read_pids(path / "cgroup.procs")
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
        table = processes.proc_table()
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
        claim_orphans = processes.is_child_subreaper() and not processes.no_new_privs("self")
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
            elif claim_orphans and ppid == me and pid not in others and processes.no_new_privs(pid):
                found.add(pid)
            elif processes.has_marker(pid, marker):
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
            return len(killed) + processes.kill_marked(self.token)
        except Exception:
            return len(killed)

    def _kill_cgroups(self, deadline: float, killed: set[int]) -> None:
        if self.cgroup1 is not None:
            try:
                cgroups.write_file(self.cgroup1 / "pids.max", "0")  # no new processes from here on
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
                        cgroups.write_file(self.cgroup2 / "cgroup.kill", "1")
                        killed.update(live)
                    except OSError:
                        pass
                else:
                    frozen = self._freeze(True)
                    live = self.pids()
            processes.sigkill(live, killed)
            if frozen:
                self._freeze(False)
            if time.monotonic() >= deadline:
                break
            time.sleep(delay)
            delay = min(delay * 2, 0.05)
        if self.cgroup1 is not None and self.max_pids is not None and not self.pids():
            try:
                cgroups.write_file(self.cgroup1 / "pids.max", str(self.max_pids))  # empty again: ready for a new kernel
            except OSError:
                pass

    def _freeze(self, freeze: bool) -> bool:
        """cgroup v2 freezer: stop every process (a fatal signal still gets through), so none
        forks while the others are killed. True when frozen (or thawed)."""
        try:
            cgroups.write_file(self.cgroup2 / "cgroup.freeze", "1" if freeze else "0")
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
            processes.sigkill(live, killed)
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
                cgroups.remove_cgroup(path)
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
                    processes.libc_call("prctl", processes.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
                    ProcessTree._subreaper_ours = False
        except Exception:
            pass


def _check_token(token: str) -> None:
    if not token or not all(c.isascii() and (c.isalnum() or c in "-_") for c in token) or len(token) > 64:
        raise ValueError(f"a process tree token is 1 to 64 letters, digits, '-' or '_', not {token!r}")
