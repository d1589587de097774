import json

from course_utils import bench


def test_colour_benchmark_reports_both_loops_and_memory(capsys):
    figures = bench.bench_colour(course_steps=5, baseline_steps=2)
    for key in ("course_s_per_step", "baseline_s_per_step", "speedup"):
        assert figures[key] > 0
    assert figures["replay_memory_bytes_250"] == 250 * 100 * 52
    assert figures["replay_memory_mb_250"] <= 20


def fake_benchmark():
    return {"benchmark": "fake", "x": 1}


def test_bench_prints_one_json_line(capsys, monkeypatch):
    monkeypatch.setitem(bench.BENCHMARKS, "fake", "test_bench:fake_benchmark")
    bench.run("fake")
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1 and json.loads(lines[0]) == {"benchmark": "fake", "x": 1}


def test_every_benchmark_and_trainer_names_a_function_that_exists():
    import importlib

    from course_utils import cli

    for target in [*bench.BENCHMARKS.values(), *cli.TRAINERS.values()]:
        module, _, function = target.partition(":")
        try:
            imported = importlib.import_module(module)
        except ModuleNotFoundError:
            continue  # a tutorial still being written; its own tests cover it once it lands
        assert callable(getattr(imported, function)), target
