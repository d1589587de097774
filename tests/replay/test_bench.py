from course_admin.replay.bench import bench_per


def test_bench_per_reports_positive_figures_on_tiny_settings():
    figures = bench_per(capacities=(16, 64), batch=8, repeats=3, rounds=1)
    assert figures["benchmark"] == "per" and figures["capacities"] == [16, 64]
    for key in (
        "tree_vector_sample_us",
        "tree_plain_sample_cpu_us",
        "buffer_vector_update_us",
        "tree_sample_speedup",
        "buffer_update_speedup",
    ):
        assert len(figures[key]) == 2
        assert all(value > 0 for value in figures[key])
    assert figures["cpprb"] == "absent"  # not installed here; timed when it is
