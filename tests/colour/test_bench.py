"""``course bench colour``."""

from course_admin.colour import bench


def test_colour_benchmark_reports_both_loops_and_memory(capsys):
    figures = bench.bench_colour(course_steps=5, baseline_steps=2)
    for key in ("course_s_per_step", "baseline_s_per_step", "speedup"):
        assert figures[key] > 0
    assert figures["replay_memory_bytes_250"] == 250 * 100 * 52
    assert figures["replay_memory_mb_250"] <= 20
