"""The instructor's side of tutorial 2, colour replay: its harvested solutions, its trainers and
benchmarks, the values its notebook compares with (``expected``) and the oracle behind its judge's
hints (``rho_judge``)."""
