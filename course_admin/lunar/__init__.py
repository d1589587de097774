"""The instructor's side of tutorial 3, policy gradients on LunarLander: its harvested solutions, its trainers and benchmarks."""
