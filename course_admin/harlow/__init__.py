"""The instructor's side of tutorial 1, Harlow meta-RL: its harvested solutions, the course's
batched genetic algorithm (``batch``), its trainers and benchmarks."""
