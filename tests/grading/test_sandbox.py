"""The sandbox's pieces one by one, each in a child process (the restrictions are one-way)."""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from course_admin.grading import cgroups, kernel_restrictions, process_tree, processes, sandbox

SCRIPT = Path(sandbox.__file__)
# As the launcher script runs: its folder first on sys.path, its modules by their own names, no course package.
LAUNCHER_IMPORTS = f"import sys\nsys.path.insert(0, {str(SCRIPT.parent)!r})\nfrom pathlib import Path\n"
LAUNCHER_IMPORTS += "import cgroups, kernel_restrictions as kr, process_tree\n"


def child(code: str, **env) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh Python with the launcher's modules imported as the launcher does (no torch)."""
    return subprocess.run([sys.executable, "-c", LAUNCHER_IMPORTS + code], capture_output=True, text=True, timeout=60,
                          env={**os.environ, **env})


def test_clean_environment_keeps_nothing_of_the_graders(tmp_path):
    env = sandbox.clean_environment(tmp_path, "tok", {"AWS_SECRET_ACCESS_KEY": "x", "JPY_PARENT_PID": "12", "LANG": "C"})
    assert "AWS_SECRET_ACCESS_KEY" not in env
    assert env["JPY_PARENT_PID"] == "12" and env["HOME"] == str(tmp_path) and env["COURSE_FAST"] == "1"
    assert env["COURSE_SANDBOX"] == "tok" and env["TMPDIR"].startswith(str(tmp_path))


def test_the_launcher_loads_only_the_standard_library():
    """``python sandbox.py kernel ...`` starts every kernel: it and the modules it imports load
    nothing but the standard library (not the course package, which imports numpy and torch)."""
    code = f"import sys\nsys.path.insert(0, {str(SCRIPT.parent)!r})\nbefore = set(sys.modules)\nimport sandbox\n"
    code += "ours = {'sandbox', 'kernel_restrictions', 'process_tree', 'cgroups', 'processes'}\n"
    code += "print(sorted(m for m in set(sys.modules) - before if m.split('.')[0] not in sys.stdlib_module_names | ours))\n"
    code += "print(sorted(ours - set(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stdout.split("\n")[:2] == ["[]", "[]"], result.stdout + result.stderr
    usage = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=60)
    assert usage.returncode == 1 and "usage: python sandbox.py kernel" in usage.stderr, usage.stderr


def test_memory_limit_turns_a_big_allocation_into_memory_error():
    limits = {"memory_mb": 512, "file_mb": 10, "wall_timeout": 30}
    code = f"kr.set_limits({limits!r})\ntry:\n    b = bytearray(2 * 2**30)\nexcept MemoryError:\n    print('MemoryError')"
    result = child(code)
    assert "MemoryError" in result.stdout, result.stderr


def test_file_size_limit(tmp_path):
    limits = {"memory_mb": 2048, "file_mb": 1, "wall_timeout": 30}
    code = f"import signal\nsignal.signal(signal.SIGXFSZ, signal.SIG_IGN)\nkr.set_limits({limits!r})\n"
    code += f"try:\n    open({str(tmp_path / 'big')!r}, 'wb').write(bytes(2 * 2**20))\n"
    code += "except OSError as e:\n    print('refused', e.errno)"
    result = child(code)
    assert "refused" in result.stdout, result.stderr
    assert (tmp_path / "big").stat().st_size <= 2**20


@pytest.mark.skipif(kernel_restrictions.landlock_abi() < 1, reason="Landlock not available on this kernel")
def test_landlock_allows_the_working_folder_and_python_only(tmp_path):
    work, outside = tmp_path / "work", tmp_path / "outside.txt"
    work.mkdir()
    outside.write_text("secret")
    code = f"""
print(kr.restrict_self(Path({str(work)!r})))
open({str(work / 'mine.txt')!r}, 'w').write('ok')
print('inside', open({str(work / 'mine.txt')!r}).read())
import json, email.mime.text  # the standard library still imports
for attempt in ("open({str(outside)!r}).read()", "open('/tmp/course-sandbox-escape', 'w')", "open('/etc/shadow').read()"):
    try:
        eval(attempt)
        print('ESCAPED', attempt)
    except PermissionError:
        print('denied')
"""
    result = child(code)
    assert "inside ok" in result.stdout and "ESCAPED" not in result.stdout, result.stdout + result.stderr
    assert result.stdout.count("denied") == 3
    assert not Path("/tmp/course-sandbox-escape").exists()


@pytest.mark.skipif(kernel_restrictions.landlock_abi() < 1, reason="Landlock not available on this kernel")
def test_a_kernel_reads_the_course_package_but_not_its_solutions_or_the_grader(tmp_path):
    """Grading kernels run in the instructor's environment: without this, an answer cell could
    import the harvested solutions there (they are not in the student bundle)."""
    work = tmp_path / "work"
    work.mkdir()
    code = f"""
kr.restrict_self(Path({str(work)!r}))
sys.path.remove({str(SCRIPT.parent)!r})
from course_utils.colour.checks import ACTOR
from course_utils.replay.buffer import ReplayBuffer
print("checks import", ACTOR.name)
for module in ("course_admin.colour.solutions", "course_admin.replay.solutions", "course_admin.lunar.reference",
               "course_admin.grading.judging"):
    try:
        __import__(module)
        print("LEAKED", module)
    except (PermissionError, ImportError) as error:
        print("denied", module, type(error).__name__)
for path in (kr.ADMIN / "harlow" / "solutions.py", kr.ADMIN / "grading" / "bundle.py"):
    try:
        open(path).read()
        print("LEAKED", path)
    except PermissionError:
        print("denied", path.name)
"""
    result = child(code)
    assert "checks import replay_actor_loss" in result.stdout, result.stdout + result.stderr
    assert "LEAKED" not in result.stdout and result.stdout.count("denied") == 6, result.stdout + result.stderr


def test_the_package_rules_open_the_student_package_and_only_the_synthetic_exercises_of_the_instructors():
    folders, files = kernel_restrictions.package_rules()
    student = kernel_restrictions.PACKAGE
    package = {path.relative_to(student).as_posix() for path in files if path.is_relative_to(student)}
    assert {p.relative_to(student).as_posix() for p in student.rglob("*.py")} <= package
    assert {"colour/checks.py", "checking.py", "records.py", "replay/buffer.py"} <= package
    admin = {path.relative_to(kernel_restrictions.ADMIN).as_posix() for path in files if path.suffix == ".py"
             and path.is_relative_to(kernel_restrictions.ADMIN)}
    assert admin == set(kernel_restrictions.ADMIN_FILES_A_KERNEL_READS)
    assert all(path.is_dir() for path in folders)
    assert not {kernel_restrictions.ADMIN / "lunar", kernel_restrictions.ADMIN / "harlow"} & set(folders)


@pytest.mark.skipif(kernel_restrictions.landlock_abi() < 4, reason="TCP filtering needs Landlock ABI 4")
def test_landlock_refuses_tcp_connections(tmp_path):
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    code = f"kr.restrict_self(Path({str(tmp_path)!r}))\nimport socket\n"
    code += f"try:\n    socket.create_connection(('127.0.0.1', {port}), timeout=3)\n    print('connected')\n"
    code += "except PermissionError:\n    print('denied')"
    result = child(code)
    listener.close()
    assert "denied" in result.stdout, result.stdout + result.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="only root has capabilities to drop")
def test_root_loses_its_capabilities(tmp_path):
    target = tmp_path / "f"
    target.write_text("x")
    code = f"print(kr.drop_capabilities())\nimport os\ntry:\n    os.chown({str(target)!r}, 1000, 1000)\n    print('chowned')\n"
    code += "except PermissionError:\n    print('denied')\n"
    code += "import subprocess, sys\nprint(subprocess.run([sys.executable, '-c', "
    code += "\"print(open('/proc/self/status').read().split('CapEff:')[1].split()[0])\"], capture_output=True, text=True).stdout)"
    result = child(code)
    assert "root without capabilities" in result.stdout and "denied" in result.stdout, result.stdout + result.stderr
    assert result.stdout.strip().splitlines()[-1] == "0000000000000000"  # and none come back on execve


def test_kill_marked_finds_processes_by_their_token():
    token = "test" + str(os.getpid())
    process = subprocess.Popen(["sleep", "60"], env={**os.environ, "COURSE_SANDBOX": token}, start_new_session=True)
    time.sleep(0.2)
    assert processes.kill_marked(token) >= 1
    assert process.wait(timeout=10) != 0


def test_a_helper_process_is_replaced_and_stopped_with_its_folder():
    """The kernel zygote's and the drive runner server's lifecycle: starting anew stops the one that
    runs (its process killed and reaped, its folder removed); stopping leaves nothing behind."""
    helper = processes.Helper("course-test-helper-")
    first = helper.start(lambda home: subprocess.Popen(["sleep", "60"], cwd=str(home)))
    first_home = helper.home
    assert helper.alive() is first and first_home.is_dir() and first_home.name.startswith("course-test-helper-")
    second = helper.start(lambda home: subprocess.Popen(["sleep", "60"], cwd=str(home)))
    assert first.poll() is not None and not first_home.exists()
    assert helper.alive() is second and helper.home != first_home
    second_home = helper.home
    helper.stop()
    assert second.poll() is not None and not second_home.exists()
    assert helper.alive() is None and helper.process is None and helper.home is None
    helper.stop()  # stopping twice (by hand, then at exit) is harmless


def test_a_helper_folder_left_by_a_killed_grader_is_removed_at_the_next_start(tmp_path, monkeypatch):
    """A grading process killed with SIGKILL runs no exit handler: the next grading process to
    start a helper of the same kind removes the folder, and keeps those of graders still running."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    gone = subprocess.Popen(["true"])
    gone.wait()
    orphan = tmp_path / f"course-test-helper-{gone.pid}-abc"
    running = tmp_path / f"course-test-helper-{os.getppid()}-def"
    other_kind = tmp_path / f"course-other-helper-{gone.pid}-ghi"
    for folder in (orphan, running, other_kind):
        folder.mkdir()
    helper = processes.Helper("course-test-helper-")
    helper.start(lambda home: subprocess.Popen(["sleep", "60"], cwd=str(home)))
    try:
        assert not orphan.exists() and running.is_dir() and other_kind.is_dir()
        assert helper.home.parent == tmp_path and helper.home.name.startswith(f"course-test-helper-{os.getpid()}-")
    finally:
        helper.stop()


def test_open_files_limit():
    limits = {"memory_mb": 2048, "file_mb": 10, "wall_timeout": 30}
    code = f"kr.set_limits({limits!r})\nimport resource, os\nprint(resource.getrlimit(resource.RLIMIT_NOFILE))\nfds = []\n"
    code += "try:\n    for _ in range(5000):\n        fds.append(os.open('/dev/null', os.O_RDONLY))\nexcept OSError as e:\n"
    code += "    print('refused', e.errno, len(fds))"
    result = child(code)
    files = kernel_restrictions.OPEN_FILES
    assert f"({files}, {files})" in result.stdout and "refused 24" in result.stdout, result.stderr
    assert int(result.stdout.split()[-1]) < files


# --------------------------------------------------------------------------------------
# ProcessTree: every process of one submission, found and killed

PRELUDE = "import json, os, sys, time\n" + LAUNCHER_IMPORTS
# A member of the tree: joins it as the launcher does, then runs the test's code.
MEMBER = PRELUDE + "process_tree.ProcessTree.from_spec(json.loads(sys.argv[1])).join()\n"
# Leaves the session twice over, with an empty environment, then lives on as an orphan.
ESCAPEE = """import os, sys, time
if os.fork():
    os._exit(0)
os.setsid()
with open(sys.argv[1] + '.tmp', 'w') as f:
    f.write(str(os.getpid()))
os.rename(sys.argv[1] + '.tmp', sys.argv[1])
time.sleep(600)
"""
MECHANISMS = ["cgroup2", "cgroup2-freezer", "cgroup1", "subreaper"]
linux = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="the tests watch processes through /proc")


def running(pid: int) -> bool:
    """A process that still runs: a zombie (killed, waiting for its parent, perhaps init, to
    reap it) holds no memory, file or socket any more."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def gone(pids, timeout: float = 2.0) -> bool:
    deadline = time.monotonic() + timeout
    while any(running(pid) for pid in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def wait_for(path: Path, timeout: float = 10.0) -> str:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.005)
    return path.read_text()


@pytest.fixture
def trees(monkeypatch):
    """``trees.create(mechanism, max_pids)`` and ``trees.member(tree, code)``; whatever a test
    leaves (trees, cgroups, processes) is killed and removed, pass or fail."""
    import secrets

    made, started = [], []

    class Trees:
        tag = f"course-sandbox-test-{os.getpid()}-{secrets.token_hex(4)}"  # in the command line of every process started

        @staticmethod
        def create(mechanism: str | None, max_pids: int = 256) -> process_tree.ProcessTree:
            if mechanism == "cgroup2-freezer":  # the path for kernels without cgroup.kill (before 5.14)
                monkeypatch.setattr(process_tree.ProcessTree, "use_cgroup_kill", False)
                mechanism = "cgroup2"
            try:
                tree = process_tree.ProcessTree.create("test-" + secrets.token_hex(6), max_pids, mechanism=mechanism)
            except OSError as error:
                pytest.skip(f"{mechanism} not available on this machine: {error}")
            made.append(tree)
            return tree

        @staticmethod
        def member(tree: process_tree.ProcessTree, code: str, *args: str) -> subprocess.Popen:
            """A process that joins ``tree`` and runs ``code`` (``sys.argv[3:]``: ``args``)."""
            process = subprocess.Popen([sys.executable, "-c", MEMBER + code, json.dumps(tree.as_spec()), Trees.tag, *args],
                                       stdout=subprocess.PIPE, text=True)
            started.append(process)
            return process

    yield Trees
    for tree in made:
        tree.close()
    for process in started:
        process.kill()
        process.wait(timeout=10)
    for entry in Path("/proc").iterdir():  # belt and braces: anything tagged that survived
        try:
            if entry.name.isdigit() and Trees.tag.encode() in (entry / "cmdline").read_bytes():
                os.kill(int(entry.name), signal.SIGKILL)
        except OSError:
            continue
    for tree in made:
        for path in (tree.cgroup2, tree.cgroup1, tree.state):
            if path is not None and path.exists():
                path.rmdir()


@linux
@pytest.mark.parametrize("kernel_lives", [True, False], ids=["kernel-alive", "kernel-exited"])
@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_tree_kills_a_double_forked_escapee_with_an_empty_environment(trees, tmp_path, mechanism, kernel_lives):
    tree = trees.create(mechanism)
    pidfile = tmp_path / "escapee.pid"
    code = f"import subprocess\nsubprocess.Popen([sys.executable, '-c', {ESCAPEE!r}, {str(pidfile)!r}, {trees.tag!r}],"
    code += " start_new_session=True, env={}, stdout=subprocess.DEVNULL).wait()\n"
    code += "time.sleep(600)\n" if kernel_lives else ""
    kernel = trees.member(tree, code)
    escapee = int(wait_for(pidfile))
    if not kernel_lives:
        kernel.wait(timeout=10)
    assert running(escapee) and escapee in tree.pids()
    assert Path(f"/proc/{escapee}/environ").read_bytes() == b""  # no marker to find it by
    promised = tree.mechanism != "subreaper" or processes.is_child_subreaper()
    killed = tree.kill()
    if promised:
        assert killed >= 1 + kernel_lives and gone([escapee, kernel.pid]), tree.description
    else:  # the fallback without a subreaper finds the kernel, its group and its marker, not this orphan
        assert gone([kernel.pid])
    kernel.wait(timeout=10)
    assert tree.pids() == []
    assert tree.kill() == 0  # idempotent


@linux
@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_fork_bomb_is_limited_and_killed(trees, mechanism):
    tree = trees.create(mechanism, max_pids=64)
    if tree.max_pids is None:
        pytest.skip(f"no fork limit here: {tree.description}")
    code = """forked = 0
for _ in range(10_000):
    try:
        if os.fork() == 0:
            time.sleep(600)
            os._exit(0)
        forked += 1
    except BlockingIOError:
        print('limited', forked, flush=True)
        break
else:
    print('not limited', forked, flush=True)
time.sleep(600)
"""
    bomb = trees.member(tree, code)
    verdict = bomb.stdout.readline().split()
    assert verdict[0] == "limited" and int(verdict[1]) < 64, verdict
    members = tree.pids()
    assert bomb.pid in members and 2 < len(members) <= 64
    assert tree.kill() >= len(members)
    assert gone(members) and tree.pids() == []
    bomb.wait(timeout=10)


@linux
@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_close_removes_the_tree_and_is_idempotent(trees, mechanism):
    tree = trees.create(mechanism)
    again = process_tree.ProcessTree.from_spec(json.loads(json.dumps(tree.as_spec())))
    assert again.as_spec() == tree.as_spec() and again.description.startswith("process tree: ")
    member = trees.member(tree, "print('in', flush=True)\ntime.sleep(600)\n")
    assert member.stdout.readline().strip() == "in" and tree.pids() == [member.pid]
    made = [path for path in (tree.cgroup2, tree.cgroup1, tree.state) if path is not None]
    assert made and all(path.is_dir() for path in made)
    tree.close()
    assert gone([member.pid]) and not any(path.exists() for path in made)
    tree.close()
    assert tree.kill() == 0 and tree.pids() == []
    member.wait(timeout=10)


CLONE_INTO = """import ctypes
class CloneArgs(ctypes.Structure):
    _fields_ = [(name, ctypes.c_uint64) for name in ("flags", "pidfd", "child_tid", "parent_tid", "exit_signal",
                                                     "stack", "stack_size", "tls", "set_tid", "set_tid_size", "cgroup")]
def clone_into(path):
    # clone3(CLONE_INTO_CGROUP): where the child started (cgroup v2), or the error
    fd, (r, w) = os.open(path, os.O_RDONLY | os.O_DIRECTORY), os.pipe()
    args = CloneArgs(flags=0x200000000, exit_signal=17, cgroup=fd)
    pid = ctypes.CDLL(None, use_errno=True).syscall(ctypes.c_long(435), ctypes.byref(args), ctypes.c_size_t(ctypes.sizeof(args)))
    if pid == 0:
        os.write(w, open('/proc/self/cgroup', 'rb').read().split(b'0::')[1].strip())
        os._exit(0)
    os.close(w)
    if pid < 0:
        return 'error ' + os.strerror(ctypes.get_errno())
    os.waitpid(pid, 0)
    return 'child in ' + os.read(r, 4096).decode()
"""


def lines_until_done(process: subprocess.Popen) -> list[str]:
    lines = [process.stdout.readline().strip()]
    while lines[-1] not in ("done", ""):
        lines.append(process.stdout.readline().strip())
    return lines


@linux
@pytest.mark.skipif(kernel_restrictions.landlock_abi() < 1, reason="Landlock not available on this kernel")
@pytest.mark.parametrize("mechanism", ["cgroup2", "cgroup1"])
def test_sandboxed_member_cannot_leave_its_cgroup(trees, tmp_path, mechanism):
    tree = trees.create(mechanism)
    paths = [str(path) for path in (tree.cgroup2, tree.cgroup1) if path]
    code = CLONE_INTO + "print(kr.drop_capabilities(), kr.restrict_self(Path(sys.argv[3])), kr.restrict_syscalls(),"
    code += " sep='; ')\n"
    code += f"for path in {paths!r}:\n"
    code += """    for attempt in ('move', 'mkdir'):
        try:
            if attempt == 'move':  # into the parent cgroup, out of the tree
                cgroups.write_file(Path(path).parent / 'cgroup.procs', str(os.getpid()))
            else:  # a cgroup of its own, with no pids.max
                os.mkdir(Path(path) / 'nested')
            print('ESCAPED', attempt, path)
        except PermissionError:
            print('denied', attempt)
if cgroups.cgroup_hierarchies().get('cgroup2'):  # a child started in another cgroup v2
    print(clone_into(cgroups.cgroup_hierarchies()['cgroup2'][0]))
import subprocess, threading  # without clone3, threads and subprocesses still start (clone)
thread = threading.Thread(target=print, args=('thread',))
thread.start(); thread.join()
print(subprocess.run([sys.executable, '-c', 'print("subprocess")'], capture_output=True, text=True).stdout.strip())
print('done', flush=True)
time.sleep(600)
"""
    member = trees.member(tree, code, str(tmp_path))
    lines = lines_until_done(member)
    assert "landlock" in lines[0] and "seccomp" in lines[0] and lines[-1] == "done", lines
    lines = lines[1:-1]
    assert lines[: 2 * len(paths)] == ["denied move", "denied mkdir"] * len(paths), lines
    refused = ["error Function not implemented"] if "cgroup2" in cgroups.cgroup_hierarchies() else []  # seccomp: ENOSYS
    assert lines[2 * len(paths) :] == refused + ["thread", "subprocess"], lines
    assert tree.pids() == [member.pid]
    assert Path(f"/proc/{member.pid}/cgroup").read_text().count(process_tree.TREE_PREFIX + tree.token) == len(paths)


@linux
@pytest.mark.skipif(os.geteuid() != 0, reason="shows what Landlock and seccomp add for root")
@pytest.mark.parametrize("missing", ["landlock", "seccomp"])
def test_what_would_leave_the_tree_without_landlock_or_seccomp(trees, tmp_path, missing):
    """Documents the module docstring's limits: uid 0 without capabilities still owns the cgroup
    files (Landlock stops the write), and clone3 can start a child in another cgroup v2, which
    Landlock does not check (seccomp stops it)."""
    if missing == "landlock":
        tree = trees.create("cgroup1")
        code = "kr.drop_capabilities()\ncgroups.write_file(Path(sys.argv[3]) / 'cgroup.procs', str(os.getpid()))\n"
        code += "print('left', flush=True)\ntime.sleep(600)\n"
        member = trees.member(tree, code, str(tree.cgroup1.parent))
        assert member.stdout.readline().strip() == "left"
        assert tree.pids() == []
    else:
        if kernel_restrictions.landlock_abi() < 1:
            pytest.skip("Landlock not available on this kernel")
        tree = trees.create("cgroup2")
        code = CLONE_INTO + "kr.drop_capabilities(); kr.restrict_self(Path(sys.argv[3]))\n"
        code += f"print(clone_into({str(tree.cgroup2.parent)!r}), flush=True)\ntime.sleep(600)\n"
        member = trees.member(tree, code, str(tmp_path))
        outside = str(tree.cgroup2.parent.relative_to(cgroups.cgroup_hierarchies()["cgroup2"][0]))
        assert member.stdout.readline().strip() == "child in /" + ("" if outside == "." else outside)


@linux
def test_launcher_joins_the_tree_before_the_kernel_runs(trees, tmp_path):
    tree = trees.create(None)  # the best this machine offers
    work = tmp_path / "work"
    work.mkdir()
    spec, status = tmp_path / "sandbox.json", tmp_path / "status.json"
    limits = {"memory_mb": 2048, "file_mb": 10, "wall_timeout": 30, "landlock": True}
    spec.write_text(json.dumps({"workdir": str(work), "limits": limits, "status": str(status), "token": "t",
                                "tree": tree.as_spec()}))
    kernel = "import resource, subprocess, sys, time\nprint(resource.getrlimit(resource.RLIMIT_NOFILE)[0], flush=True)\n"
    kernel += "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'], start_new_session=True, env={})\n"
    kernel += "print('started', flush=True)\ntime.sleep(600)"
    process = subprocess.Popen([sys.executable, str(SCRIPT), "kernel", str(spec), "--", sys.executable, "-c", kernel, trees.tag],
                               stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert process.stdout.readline().strip() == str(kernel_restrictions.OPEN_FILES)
        assert process.stdout.readline().strip() == "started"  # a subprocess, without clone3
        report = json.loads(status.read_text())
        assert tree.description in report["applied"] and not any("process tree" in m for m in report["missing"]), report
        assert any(line.startswith("seccomp") for line in report["applied"]), report
        members = tree.pids()
        assert process.pid in members and len(members) == 2
        assert tree.kill() >= 2 and gone(members)
    finally:
        process.kill()
        process.wait(timeout=10)
