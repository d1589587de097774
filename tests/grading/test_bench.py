from course_admin.grading.bench import machine_ceiling


def test_the_machine_ceiling_times_one_copy_alone_and_two_at_once():
    figures = machine_ceiling(workers=2, repeats=1)
    assert set(figures) == {"machine_one_process_s", "machine_2_processes_s", "machine_speedup_2_vs_1"}
    # Two copies at once cannot finish sooner than one alone, nor more than twice as fast as one
    # after another (wall clocks round to 0.01 s: a little slack).
    assert figures["machine_2_processes_s"] >= 0.95 * figures["machine_one_process_s"] > 0
    assert 0 < figures["machine_speedup_2_vs_1"] <= 2.1
    ratio = 2 * figures["machine_one_process_s"] / figures["machine_2_processes_s"]
    assert abs(figures["machine_speedup_2_vs_1"] - ratio) < 0.02
