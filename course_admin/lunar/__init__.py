"""The instructor's side of tutorial 3, policy gradients on LunarLander: its harvested solutions
(``solutions``), the expected values computed from them (``reference``, ``optional_reference``) and
the score-function oracle (``bandit_oracle``); the course's own lander (``aac``: network, GAE and
trainer; ``numpy_ac``, ``rollouts``, ``episodes``, ``solve``) and ``course train lunar`` (``train``);
the gradient-variance measurement (``variance``); the benchmarks (``bench``) and the hidden cases
(``hidden_cases``); the claim its Question 3 model answer makes (``claims``). None of it ships to
students: each answers one of the exercises."""
