"""``course train colour``."""


import pytest

from course_admin.colour import train
from course_utils import checkpoints


@pytest.mark.slow
def test_course_train_colour_reproduces_the_registry(tmp_path):
    agents = train.train_colour_agents(seed=1, progress=False)
    registry = checkpoints.read_registry()
    for name, agent in agents.items():
        entry = checkpoints.save_checkpoint(
            agent.state_dict(), f"colour_{name}", "course train colour", registry=tmp_path / "registry.json", bundled=tmp_path
        )
        assert entry["sha256"] == registry[f"colour_{name}"]["sha256"], name
