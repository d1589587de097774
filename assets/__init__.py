"""The course's data files, installed inside the package as ``course_utils.assets``.

In this repository they live in ``assets/`` at the top level; ``pyproject.toml`` maps that folder
to ``course_utils.assets`` so every wheel (``pip install .``, ``pip install <wheel>``,
``pip install git+<url>``) carries them: the checkpoint registry and checkpoints, the saved
training histories and expected values, and the matplotlib style. Code finds them through
``course_utils.paths.ASSETS``, never through the repository layout.
"""
