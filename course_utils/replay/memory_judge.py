"""The judge's model of the circular memory (``checks.ADD``): which transition each slot holds
and where the pointer is after a run of adds.

Apart from the drive because the model computes what the exercise asks: the grader judges in its
own process, and its child that drives the student's memory cannot read this module
(``grading.drive_apart.JUDGE_ONLY``). The student's check cell imports it to judge there.
"""

from __future__ import annotations


def expected_slots(capacity: int, added: list[int]) -> tuple[list[int], int]:
    """What a circular memory holds after transitions numbered ``added`` (in order): slots, pointer."""
    slots = [-1] * capacity
    pointer = 0
    for number in added:
        slots[pointer] = number
        pointer = (pointer + 1) % capacity
    return slots, pointer
