"""The check framework's time limit, with and without SIGALRM (Windows has none)."""

import signal
import threading
import time

import pytest

from course_admin.exercises import GRADED
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

    assert checking.verdict("ReplayMemory", check) is False
    out = capsys.readouterr().out
    assert "❌ ReplayMemory: not yet." in out and "AttributeError" in out and "'NoWrite' object has no attribute 'write'" in out
    assert "not yet. checking your answer stopped at AttributeError" in out


def test_a_drive_stops_calling_an_answer_once_it_ran_out_of_time(short_limit, capsys):
    """An answer that loops costs the student one time limit, not one per case: the replay actor
    loss check has four cases, and only the first is run; the next check calls the answer again."""
    from course_utils.colour.checks import check_replay_actor_loss

    calls = []

    def forever(log_pi, mu, advantage, rho_max):
        calls.append(len(log_pi))
        while True:
            pass

    assert not check_replay_actor_loss(forever)
    assert calls == [5] and "did not finish within" in capsys.readouterr().out
    assert not check_replay_actor_loss(forever) and len(calls) == 2
    assert call_student("f", lambda: 1) == 1  # outside a drive nothing is remembered


# --------------------------------------------------------------------------------------
# The check cell's warning about course code the grader does not give an answer


NOTEBOOK = """
from course_utils import colour
from course_utils.replay.standin_memory import FillingMemory
from course_utils.lunar.rollouts import split as _d

def through_an_alias(num_envs, shards):
    return _d(num_envs, shards)

def through_the_setup_module(log_pi, mu, advantage, rho_max):
    return colour.agent.importance_ratios(log_pi, mu)

class Subclassed(FillingMemory):
    pass
"""


def test_an_answer_that_wraps_a_twin_or_a_setup_module_is_warned_about():
    import importlib

    cells = {"__name__": "__main__"}
    exec(NOTEBOOK, cells)  # names defined as a notebook cell defines them: globals of __main__
    borrowed = checking.borrowed_course_code
    assert "course_utils.lunar.rollouts" in borrowed("test_calc_qvals", cells["through_an_alias"])[0]
    assert "`colour`" in borrowed("test_replay_actor_loss", cells["through_the_setup_module"])[0]
    assert "standin_memory" in borrowed("test_memory_add", cells["Subclassed"])[0]
    assert borrowed("test_replay_memory", cells["through_an_alias"]) == []  # no twin of that exercise
    own = importlib.import_module("course_admin.colour.solutions").replay_actor_loss
    assert borrowed("test_replay_actor_loss", own) == []


def test_no_course_solution_is_warned_about():
    import importlib

    from course_admin.grading import judging

    for exercise in judging.exercises():
        tutorial = next(cell.tutorial for cell in GRADED if cell.grade_id == exercise.grade_id)
        solutions = importlib.import_module(f"course_admin.{tutorial}.solutions")
        answers = [getattr(solutions, name) for name in exercise.reference]
        assert checking.borrowed_course_code(exercise.grade_id, *answers) == [], exercise.grade_id
