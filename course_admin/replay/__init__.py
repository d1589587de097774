"""The instructor's side of tutorial 4, prioritized replay: its harvested solutions (``solutions``),
the course's own replay code, which answers the tutorial's exercises and so is never in the
student's package (``per``: the numpy ring buffer; ``trees``: the vectorised segment trees;
``vector_per``: the prioritized buffer on them), its trainer (``train``: the checkpoint and the
stored comparison) and benchmark (``bench``, ``timing``), the grader's oracles the judges load by
name (``td_judge``, ``tree_judge``), the stored values of the check cells (``reference``) and the
hidden cases (``hidden_cases``)."""
