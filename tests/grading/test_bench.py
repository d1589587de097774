from course_admin.grading.bench import machine_ceiling


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
