import json

from course_utils import bench


def test_colour_benchmark_reports_both_loops_and_memory(capsys):
    figures = bench.bench_colour(course_steps=5, baseline_steps=2)
    for key in ("course_s_per_step", "baseline_s_per_step", "speedup"):
        assert figures[key] > 0
    assert figures["replay_memory_bytes_250"] == 250 * 100 * 52
    assert figures["replay_memory_mb_250"] <= 20


def test_bench_prints_one_json_line(capsys, monkeypatch):
    monkeypatch.setitem(bench.BENCHMARKS, "colour", lambda: {"benchmark": "colour", "x": 1})
    bench.run("colour")
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1 and json.loads(lines[0]) == {"benchmark": "colour", "x": 1}
