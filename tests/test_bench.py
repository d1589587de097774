import json

from course_admin import bench


def fake_benchmark():
    return {"benchmark": "fake", "x": 1}


def test_bench_prints_one_json_line(capsys, monkeypatch):
    monkeypatch.setitem(bench.BENCHMARKS, "fake", "test_bench:fake_benchmark")
    bench.run("fake")
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1 and json.loads(lines[0]) == {"benchmark": "fake", "x": 1}


def test_every_benchmark_and_trainer_names_a_function_that_exists():
    import importlib

    from course_admin import cli

    for target in [*bench.BENCHMARKS.values(), *cli.TRAINERS.values()]:
        module, _, function = target.partition(":")
        imported = importlib.import_module(module)
        assert callable(getattr(imported, function)), target
