"""The check framework's time limit, with and without SIGALRM (Windows has none)."""

import signal
import threading
import time

import pytest

from course_utils import checking
from course_utils.checking import Problem, call_student


def forever():
    while True:
        pass


@pytest.fixture
def short_limit(monkeypatch):
    monkeypatch.setattr(checking, "TIME_LIMIT", 0.3)


def test_an_endless_loop_is_stopped_with_sigalrm(short_limit):
    assert checking._alarm_available()
    with pytest.raises(Problem, match="did not finish within 0.3 s"):
        call_student("forever()", forever)


def test_an_endless_loop_is_stopped_where_there_is_no_sigalrm(short_limit, monkeypatch):
    monkeypatch.delattr(signal, "SIGALRM")
    monkeypatch.delattr(signal, "setitimer")
    assert not checking._alarm_available()
    start = time.perf_counter()
    with pytest.raises(Problem, match="did not finish within 0.3 s"):
        call_student("forever()", forever)
    assert time.perf_counter() - start < 5
    time.sleep(0.5)  # nothing goes off afterwards
    assert call_student("sum", sum, [1, 2]) == 3


def test_an_endless_loop_in_another_thread_is_stopped_too(short_limit):
    outcome = []

    def run():
        try:
            call_student("forever()", forever)
        except Problem as problem:
            outcome.append(str(problem))

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(10)
    assert not thread.is_alive() and "did not finish" in outcome[0]


def test_quick_code_is_not_interrupted_by_the_watchdog(monkeypatch):
    monkeypatch.delattr(signal, "SIGALRM")
    for _ in range(50):
        assert call_student("sorted", sorted, [3, 1, 2]) == [1, 2, 3]


def test_an_answer_missing_what_the_check_uses_gets_a_verdict_not_a_traceback(capsys):
    class NoWrite:
        pass

    def check():
        NoWrite().write("a")  # what a check does with a student's object

    assert checking.verdict("ReplayMemory", check, strict=False) is False
    out = capsys.readouterr().out
    assert "❌ ReplayMemory: not yet." in out and "AttributeError" in out and "'NoWrite' object has no attribute 'write'" in out
    with pytest.raises(AssertionError, match="not yet. checking your answer stopped at AttributeError"):
        checking.verdict("ReplayMemory", check, strict=True)


def test_a_drive_stops_calling_an_answer_once_it_ran_out_of_time(short_limit, capsys):
    """An answer that loops costs the student one time limit, not one per case: the colour
    check has six cases, and only the first is run; the next check calls the answer again."""
    from course_utils.colour.checks import check_discounted_returns

    calls = []

    def forever(rewards, gamma):
        calls.append(len(rewards))
        while True:
            pass

    assert not check_discounted_returns(forever)
    assert calls == [3] and "did not finish within" in capsys.readouterr().out
    assert not check_discounted_returns(forever) and len(calls) == 2
    assert call_student("f", lambda: 1) == 1  # outside a drive nothing is remembered
