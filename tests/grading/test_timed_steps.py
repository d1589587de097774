"""The speed part's clock (``timed_steps.cpu_seconds``): what it counts of another process."""

from __future__ import annotations

import subprocess
import sys
import time

from course_admin.grading import timed_steps

BURN_IN_A_THREAD = """
import threading, time
def burn():
    end = time.process_time() + 0.4
    while time.process_time() < end:
        pass
worker = threading.Thread(target=burn)
worker.start()
worker.join()
print("done", flush=True)
time.sleep(60)
"""


def test_the_clock_counts_the_work_of_threads_that_have_ended():
    """An answer could do a sum's work in a thread that ends before the step is answered: the
    process's CPU-time clock still counts it (a thread's own counters, once it is gone, do not)."""
    child = subprocess.Popen([sys.executable, "-c", BURN_IN_A_THREAD], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "done"
        first = timed_steps.cpu_seconds(child.pid)
        assert first >= 0.4
        time.sleep(0.2)
        assert timed_steps.cpu_seconds(child.pid) - first < 0.05  # asleep: nothing more counted
    finally:
        child.kill()
        child.wait()
