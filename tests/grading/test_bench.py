from course_admin.grading.bench import machine_ceiling, timeline


def test_the_machine_ceiling_times_one_copy_alone_and_two_at_once():
    figures = machine_ceiling(workers=2, repeats=2, steps=300_000)
    assert set(figures) == {"machine_one_process_s", "machine_2_processes_s", "machine_speedup_2_vs_1",
                            "machine_cpu_per_copy_alone_s", "machine_cpu_per_copy_2_at_once_s", "machine_repeats"}
    # Each copy times its own loop, not the interpreter's start-up: a copy's wall time is about its
    # CPU time when it has a core, and two copies at once cannot both finish sooner than one alone,
    # nor be more than twice as fast as one after another (a median of ratios; a little slack).
    assert 0 < figures["machine_cpu_per_copy_alone_s"] <= 1.2 * figures["machine_one_process_s"]
    assert 0 < figures["machine_speedup_2_vs_1"] <= 2.1
    assert figures["machine_repeats"] == 2


def test_the_timeline_says_where_the_workers_sat_idle():
    # worker a: tasks 10-20 and 21-25; worker b: 12-30 (one long first task); the run 0-33
    spans = {"s1/t": ("a", 10.0, 20.0), "s2/t": ("a", 21.0, 25.0), "s3/t": ("b", 12.0, 30.0)}
    assert timeline(spans, 0.0, 33.0) == {"before_first_task_s": 10.0, "start_spread_core_s": 2.0, "first_task_s": 14.0,
                                          "task_median_s": 4.0, "gaps_core_s": 1.0, "tail_core_s": 5.0,
                                          "after_last_task_s": 3.0}
    assert timeline({"s1/t": (None, None, None)}, 0.0, 1.0) == {}  # a task that failed outright has no span
