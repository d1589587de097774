"""``course bench lunar``."""

import pytest

from course_admin.lunar.bench import (
    bench_lunar,
    bench_lunar_experiments,
    bench_lunar_seeds,
    bench_lunar_step,
    bench_lunar_student,
)


def test_bench_lunar_returns_positive_figures():
    result = bench_lunar(num_envs=4, steps=200, single_steps=100, rounds=2)
    for key in ("vector_steps_per_s", "vector_one_process_steps_per_s", "single_steps_per_s", "speedup", "speedup_one_process"):
        assert result[key] > 0, key
    assert result["num_envs"] == 4 and result["vector_steps"] == 2 * 25 * 4 and result["single_steps"] == 100
    assert set(result["cores_used"]) == {"vector", "vector_one_process", "single"}
    assert all(0 < used < 4 for used in result["cores_used"].values())


def test_bench_lunar_experiments_times_both_ways_on_every_process(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_CACHE", str(tmp_path))
    result = bench_lunar_experiments(max_episodes=8)  # one batch of 16 episodes per run
    assert result["course"]["runs"] == 15 and result["baseline"]["runs"] == 5
    for side in ("course", "baseline"):
        assert result[side]["wall_s"] > 0 and result[side]["cpu_s"] > 0
        assert set(result[side]["final_mean_reward"]) == {"vpg", "epg", "bpg", "cpg", "aac"}
    assert result["course"]["cpu_s"] > result["baseline"]["cpu_s"]  # three times the runs, worker processes counted
    assert not list(tmp_path.glob("**/*.json"))  # trained into a temporary cache, not the user's


def test_bench_lunar_seeds_times_one_cell_both_ways_and_finds_the_same_runs(tmp_path, monkeypatch):
    from course_utils.lunar import env

    monkeypatch.setenv("COURSE_CACHE", str(tmp_path))
    kept = env.VECTOR_LANDER
    result = bench_lunar_seeds("cpg", max_episodes=16)  # one batch of 16 episodes per seed
    assert result["before"]["lander"] == "LunarLander" and result["now"]["lander"] == "LeanLunarLander"
    assert result["same_runs"] is True and result["before"]["final_mean_reward"] == result["now"]["final_mean_reward"]
    assert len(result["now"]["final_mean_reward"]) == 3 and len(result["load_average_1min"]) == 2
    for way in ("before", "now"):
        assert result[way]["wall_s"] > 0 and result[way]["cpu_s"] > 0  # the worker processes counted
    assert env.VECTOR_LANDER is kept and not list(tmp_path.glob("**/*.json"))  # put back; a temporary cache
    with pytest.raises(KeyError, match="No experiment named 'xpg'"):
        bench_lunar_seeds("xpg")


def test_bench_lunar_student_reports_both_runs_on_the_same_evaluation():
    result = bench_lunar_student(budget_s=0.5, max_episodes=32)
    course, baseline = result["course"], result["baseline"]
    assert course["solved"] is False and course["episodes"] == 32 and course["final_evaluation"] is None
    assert course["aac_hp"]["beta"] == 0.1 and baseline["aac_hp"]["beta"] == 0.5
    greedy = baseline["greedy"]
    assert baseline["episodes"] >= 16 and abs(greedy["score"] - (greedy["mean"] - greedy["std"])) < 0.02


def test_a_benchmark_given_a_wrong_size_refuses_at_once_instead_of_training():
    from course_admin.lunar.bench import bench_lunar_solve, sb3_until_solved

    for call, match in [
        (lambda: bench_lunar_solve([1.0, 2.0], 0.9), "max_steps must be a positive integer"),
        (lambda: bench_lunar_solve(1000, sb3=0.9), "sb3 must be True or False"),
        (lambda: bench_lunar_student("ten minutes"), "budget_s must be a positive number"),
        (lambda: bench_lunar_student(60.0, max_episodes=-5), "max_episodes must be a positive integer"),
        (lambda: bench_lunar_experiments(max_episodes=2.5), "max_episodes must be a positive integer"),
        (lambda: bench_lunar_seeds(max_episodes=0), "max_episodes must be a positive integer"),
        (lambda: bench_lunar(num_envs=0), "num_envs must be a positive integer"),
        (lambda: sb3_until_solved(True), "max_steps must be a positive integer"),
    ]:
        with pytest.raises(TypeError, match=match):
            call()


def test_bench_lunar_step_times_c_and_python_on_the_same_episodes():
    from course_utils.lunar import lander_step

    out = bench_lunar_step(episodes=16, rounds=2)
    if lander_step.load() is None:
        assert out["c"] is None and out["why_not"] == lander_step.why_not
        return
    assert out["identical"] is True and out["episodes"] == 16
    assert out["c"]["steps"] == out["python"]["steps"] > 16
    assert out["c"]["us_per_step_cpu"] > 0 and out["python"]["us_per_step_cpu"] > 0 and out["speedup_cpu"] > 0
    with pytest.raises(TypeError, match="episodes must be a positive integer"):
        bench_lunar_step(episodes=0)
