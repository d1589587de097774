"""``course bench lunar``."""

from course_utils.lunar.bench import bench_lunar


def test_bench_lunar_returns_positive_figures():
    result = bench_lunar(num_envs=4, steps=200, single_steps=100, rounds=2)
    for key in ("vector_steps_per_s", "vector_one_process_steps_per_s", "single_steps_per_s", "speedup", "speedup_one_process"):
        assert result[key] > 0, key
    assert result["num_envs"] == 4 and result["vector_steps"] == 2 * 25 * 4 and result["single_steps"] == 100
    assert set(result["cores_used"]) == {"vector", "vector_one_process", "single"}
    assert all(0 < used < 4 for used in result["cores_used"].values())
