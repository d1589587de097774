"""The instructor's side of tutorial 1, Harlow meta-RL: its harvested solutions, its trainers and benchmarks."""
