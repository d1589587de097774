"""Tutorial 2's hidden cases: the inputs each exercise is graded on, kept out of the student's
package (``course_utils.checking.HIDDEN_CASES``). Other sizes and values than the public cases of
``course_utils.colour.checks``, of the same kinds."""

from __future__ import annotations

from course_admin.colour.rho_judge import actor_case, random_actor_case


def replay_memory() -> list[list[tuple]]:
    return [
        [
            ("new", 5), *[("write", item) for item in ("x", 7, "y")],
            ("slots", None, "after writing 'x', 7, 'y' into capacity 5, slots", "write into slots[write_pointer]."),
            ("write_pointer", "then write_pointer", "move the write pointer one slot on after each write."),
            ("len", "then len(memory)", "count every write."),
            ("read", 4, "reading 4 times from a memory holding 3 of 5", None,
             "reads wrap after the last filled slot: % len(self)."),
            *[("write", item) for item in range(10, 14)],
            ("slots", None, "after 7 writes into capacity 5, slots", "when full, the oldest experience is overwritten first."),
            ("write_pointer", "then write_pointer", "the write pointer wraps to 0 after the last slot."),
            ("len", "then len(memory)", "the memory never holds more than its capacity."),
        ],
        [
            ("new", 1), ("write", "p"), ("write", "q"),
            ("slots", None, "after two writes into capacity 1, slots", "with one slot, each write replaces the last."),
            ("read", 3, "reading 3 times from capacity 1", None, "a memory of one slot always reads that slot."),
        ],
        [
            ("new", 64), *[("write", item) for item in range(203)],
            ("len", "after 203 writes into capacity 64, len(memory)", "len is min(n_written, capacity)."),
            ("slots", 5, "and the first 5 slots", "the newest 64 experiences are kept."),
            ("write_pointer", "and write_pointer", "the write pointer is n_written % capacity."),
            ("read", 70, "and 70 reads end with", 3, "the read pointer wraps back to slot 0."),
        ],
    ]


def replay_actor_loss() -> list[dict]:
    return [
        actor_case([5.0, 0.6, 30.0, 2.2], [-0.25, -0.9, -0.05, -0.5], [0.7, -0.8, 0.5, 1.4], 1.5,
                   "4 replayed trials, cap 1.5"),
        actor_case([20.0, 0.3, 4.0, 1.2, 0.05, 11.0, 2.5], [-0.01, -1.5, -0.6, -0.3, -3.0, -0.15, -0.8],
                   [-0.4, 1.2, 0.9, -0.6, 0.2, 1.1, -1.3], 10.0, "7 replayed trials, cap 10"),
        actor_case([1.0] * 3, [-0.35, -1.1, -0.02], [1.3, -0.6, 0.4], 10.0, "3 fresh trials (every rho is 1)"),
        random_actor_case(9111, 64, 10.0, "64 replayed trials, cap 10"),
        random_actor_case(9112, 150, 4.0, "150 replayed trials, cap 4"),
    ]


HIDDEN = {"test_replay_memory": replay_memory, "test_replay_actor_loss": replay_actor_loss}
