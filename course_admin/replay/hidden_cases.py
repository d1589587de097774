"""Tutorial 4's hidden cases: the inputs each exercise is graded on, kept out of the student's package
(``course_utils.checking.HIDDEN_CASES``), and the oracles their judges need for them (``ORACLES``).
Other sizes, seeds and values than the public cases of ``course_utils.replay.checks*``, of the same
kinds."""

from __future__ import annotations

from course_admin.replay import td_judge, tree_judge
from course_utils.replay.checks import tree_cases
from course_utils.replay.checks_td import td_cases

_NAN = float("nan")


def memory_add() -> list[tuple[int, list[int]]]:
    return [(12, [4, 4, 4, 3, 5, 8, 12, 2]), (5, [2, 2, 2, 4, 1, 5, 3]), (9, [9, 2, 7, 6, 1])]


def segment_trees() -> dict:
    small = {
        "values": [2.0, 0.0, 1.0, 0.0, 3.0, 1.0, 0.0, 0.0, 4.0, 0.0, 0.0, 2.0, 1.0, 0.0, 0.0, 0.0],
        "sums": [(0, 16), (0, 8), (4, 5), (3, 12), (8, 8), (1, 15), (11, 13), (0, 2), (5, 9), (12, 16)],
        "mins": [(0, 16), (4, 6), (8, 9), (11, 13), (2, 2), (9, 11), (15, 16)],
        "queries": [0.0, 1.5, 2.0, 3.0, 6.5, 7.0, 10.99, 11.0, 13.0, 13.5, 14.0],
        "overwrite": (9, 6.5, -2.5),
        "swap": _swap([1.0, 0.0, 0.0, 2.0, 3.0, 0.0, 1.0, 0.0, 0.0, 0.0, 4.0, 1.0, 0.0, 2.0, 0.0, 1.0],
                      sums=[(0, 16), (0, 8), (8, 16), (4, 8), (3, 13), (10, 11), (12, 16)],
                      queries=[0.0, 0.5, 1.0, 3.5, 6.0, 9.99, 10.0, 14.5]),
    }
    return tree_cases(small, seed=4051, capacity=2048, speed={"capacity": 1 << 20, "seed": 4057})


def _swap(values: list[float], sums: list, queries: list) -> dict:
    """The swap part: a sum tree's nodes on ``values`` (node 1 the root, leaf i node capacity + i)."""
    capacity = len(values)
    nodes = [0.0] * capacity + list(values)
    for node in range(capacity - 1, 0, -1):
        nodes[node] = nodes[2 * node] + nodes[2 * node + 1]
    return {"values": values, "nodes": nodes, "sums": sums, "queries": queries}


def prioritized_buffer() -> dict:
    return {
        "first": {"size": 16, "batch_size": 3, "alpha": 0.25, "stored": 5, "high": [2, 16.0], "low": [4, 0.0625],
                  "bad_priorities": [-2.0, 0.0, _NAN, -1e-300], "bad_indices": [6, 15, 16, -1, -7]},
        "newest": {"size": 16, "batch_size": 5, "alpha": 0.5, "stored": 6,
                   "priorities": [1.0, 1.0, 1.0, 1.0, 1.0, 9025.0], "beta": 0.6, "seeds": [27, 28]},
        # uniform and frequencies store more than their size: the hidden test's stand-in memory then
        # overwrites from its next-to-last slot down (slots 4, 3, 2 of 6; 3, 2 of 5), not as a ring
        "uniform": {"size": 6, "batch_size": 6, "alpha": 0.0, "stored": 9, "priorities": [0.02, 3.0, 0.5, 50.0, 1.0, 7.0],
                    "beta": 0.7, "seeds": [31, 32, 33, 34]},
        "frequencies": {"size": 5, "batch_size": 3, "alpha": 0.7, "stored": 7, "priorities": [3.0, 0.2, 1.5, 6.0, 0.6],
                        "beta": 0.4, "seeds": [19], "draws": 1200},
        "overwrite": {"size": 6, "batch_size": 3, "alpha": 0.7, "priorities": [0.5, 3.0, 0.2, 1.5, 2.0, 0.8], "more": 3},
    }


def td_loss() -> list[dict]:
    # the last two Q-networks have a hidden tanh layer: an answer that works for linear ones only
    # (an oracle that multiplies by q_net.weight) fails them; the last shares its target network
    return td_cases(seeds=(4041, 4032, 4033, 4034, 4035), sizes=(7, 6, 8, 6, 7), hidden=(0, 0, 0, 5, 4),
                    same_net=(1, 4))


HIDDEN = {
    "test_memory_add": memory_add,
    "test_segment_trees": segment_trees,
    "test_prioritized_buffer": prioritized_buffer,
    "test_td_loss": td_loss,
}

ORACLES = {"test_td_loss": td_judge.variants, "test_segment_trees": tree_judge.speed_total}
"""What the judges need of a hidden case beyond the course's record, by grade id: the grader hands
them in (``course_utils.checking.ORACLES``)."""
