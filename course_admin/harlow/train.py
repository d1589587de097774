"""``course train harlow``: tutorial 1's full batched evolution, the evolved agent's checkpoint and
the history it writes (read back by ``course_utils.harlow.pretrained``)."""

from __future__ import annotations

import json
import time

from course_utils import checkpoints
from course_utils.harlow.agent import agent_state
from course_utils.harlow.batch import evolve
from course_utils.harlow.pretrained import CHECKPOINT, HISTORY


def train_and_register(progress: bool = True, seed: int = 0) -> dict:
    """``course train harlow``: the full evolution (50 agents, then 800 generations of 5),
    batched; saves the evolved agent's checkpoint and the per-generation history."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = evolve(seed=seed, progress=progress)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    entry = checkpoints.save_checkpoint(agent_state(result["agent"]), CHECKPOINT, "course train harlow")
    history = {k: v for k, v in result.items() if k != "agent"}
    history["wall_seconds"], history["cpu_seconds"] = round(wall, 1), round(cpu, 1)
    HISTORY.write_text(json.dumps(history, indent=1) + "\n")
    print(f"{CHECKPOINT}: {entry['file']} {entry['size']} bytes sha256 {entry['sha256'][:12]}...")
    print(f"history: {HISTORY}")
    print(f"evolved in {wall:.1f} s wall, {cpu:.1f} s CPU; hyperparameters {result['agent'].hyperparameters()}")
    return history
