"""The instructor's side of tutorial 2, colour replay: its harvested solutions, its trainers and benchmarks."""
