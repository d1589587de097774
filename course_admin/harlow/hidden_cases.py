"""Tutorial 1's hidden cases: the inputs each exercise is graded on, kept out of the student's
package (``course_utils.checking.HIDDEN_CASES``). Other seeds, sizes and values than the public
cases of ``course_utils.harlow.checks*``, of the same kinds."""

from __future__ import annotations

from course_utils.harlow.checks import fitness_settings, hypers
from course_utils.harlow.checks_lamarck import lamarck_case


def evaluate_individual() -> dict:
    return {
        "planned": [
            {"seed": 15, "settings": fitness_settings(5, 3, 4, 11), "scores": [2.0, 8.0, -3.0, 0.0, 6.0]},
            {"seed": 16, "settings": fitness_settings(3, 9, 8, 5), "scores": [-2.0, 4.0, 1.0]},
        ],
        "real": {"seed": 13, "settings": fitness_settings(3, 2, 5, 6)},
    }


def genetic_algorithm() -> dict:
    return {
        "offspring": {
            "seed": 27, "children": 200,
            "parents": [hypers(0.0002, 0.975, 0.15, 0.047), hypers(0.0094, 0.64, 0.66, 0.0003)],
        },
        "update": {
            "scores": [35.0, 80.0, 12.0, 64.0, 27.0, 91.0, 48.0, 5.0, 70.0], "parents": [5, 1, 8, 3], "best": 95.0, "count": 3,
            "main": {"seed": 13, "new_scores": [110.0, 40.0, 99.0]},
            "low": {"seed": 14, "new_scores": [3.0, 9.0, 4.0]},
            "removal_seeds": list(range(60, 72)),
        },
    }


def lamarckian_individual() -> list[dict]:
    return [lamarck_case(41, 4, 0.006, 0.7, 0.15, 0.02), lamarck_case(42, 7, 0.0009, 0.97, 0.6, 0.0005),
            lamarck_case(43, 2, 0.0001, 0.6, 0.1, 0.05)]


HIDDEN = {
    "test_evaluate_individual": evaluate_individual,
    "test_genetic_algorithm": genetic_algorithm,
    "test_lamarckian_individual": lamarckian_individual,
}
