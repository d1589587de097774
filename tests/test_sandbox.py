"""The sandbox's pieces one by one, each in a child process (the restrictions are one-way)."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from course_utils import sandbox

SCRIPT = Path(sandbox.__file__)


def child(code: str, **env) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh Python with ``course_utils.sandbox`` loaded by path (no torch)."""
    prelude = f"import importlib.util, sys\nspec = importlib.util.spec_from_file_location('sb', {str(SCRIPT)!r})\n"
    prelude += "sb = sys.modules['sb'] = importlib.util.module_from_spec(spec); spec.loader.exec_module(sb)\n"
    return subprocess.run([sys.executable, "-c", prelude + code], capture_output=True, text=True, timeout=60,
                          env={**os.environ, **env})


def test_clean_environment_keeps_nothing_of_the_graders(tmp_path):
    env = sandbox.clean_environment(tmp_path, "tok", {"AWS_SECRET_ACCESS_KEY": "x", "JPY_PARENT_PID": "12", "LANG": "C"})
    assert "AWS_SECRET_ACCESS_KEY" not in env
    assert env["JPY_PARENT_PID"] == "12" and env["HOME"] == str(tmp_path) and env["COURSE_FAST"] == "1"
    assert env["COURSE_SANDBOX"] == "tok" and env["TMPDIR"].startswith(str(tmp_path))


def test_memory_limit_turns_a_big_allocation_into_memory_error():
    limits = {"memory_mb": 512, "file_mb": 10, "wall_timeout": 30}
    code = f"sb.set_limits({limits!r})\ntry:\n    b = bytearray(2 * 2**30)\nexcept MemoryError:\n    print('MemoryError')"
    result = child(code)
    assert "MemoryError" in result.stdout, result.stderr


def test_file_size_limit(tmp_path):
    limits = {"memory_mb": 2048, "file_mb": 1, "wall_timeout": 30}
    code = f"import signal\nsignal.signal(signal.SIGXFSZ, signal.SIG_IGN)\nsb.set_limits({limits!r})\n"
    code += f"try:\n    open({str(tmp_path / 'big')!r}, 'wb').write(bytes(2 * 2**20))\n"
    code += "except OSError as e:\n    print('refused', e.errno)"
    result = child(code)
    assert "refused" in result.stdout, result.stderr
    assert (tmp_path / "big").stat().st_size <= 2**20


@pytest.mark.skipif(sandbox.landlock_abi() < 1, reason="Landlock not available on this kernel")
def test_landlock_allows_the_working_folder_and_python_only(tmp_path):
    work, outside = tmp_path / "work", tmp_path / "outside.txt"
    work.mkdir()
    outside.write_text("secret")
    code = f"""
print(sb.restrict_self(sb.Path({str(work)!r})))
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


@pytest.mark.skipif(sandbox.landlock_abi() < 4, reason="TCP filtering needs Landlock ABI 4")
def test_landlock_refuses_tcp_connections(tmp_path):
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    code = f"sb.restrict_self(sb.Path({str(tmp_path)!r}))\nimport socket\n"
    code += f"try:\n    socket.create_connection(('127.0.0.1', {port}), timeout=3)\n    print('connected')\n"
    code += "except PermissionError:\n    print('denied')"
    result = child(code)
    listener.close()
    assert "denied" in result.stdout, result.stdout + result.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="only root has capabilities to drop")
def test_root_loses_its_capabilities(tmp_path):
    target = tmp_path / "f"
    target.write_text("x")
    code = f"print(sb.drop_capabilities())\nimport os\ntry:\n    os.chown({str(target)!r}, 1000, 1000)\n    print('chowned')\n"
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
    assert sandbox.kill_marked(token) >= 1
    assert process.wait(timeout=10) != 0
