"""The instructor's side of tutorial 4, prioritized replay: its harvested solutions, its trainers and benchmarks."""
