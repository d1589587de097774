"""The cheat report: every forgery in the red-team corpus is flagged, no honest answer is."""

from __future__ import annotations

import json

import forgeries
import pytest
from submissions import load

from course_admin.exercises import TUTORIALS
from course_admin.grading.flags import allowed_course_code, flags, tutorial_of
from course_utils.paths import NOTEBOOKS, SOLUTIONS

NOT_A_CHEAT = {"nan"}  # a wrong answer, not an attempt to forge one


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("forgeries")
    forgeries.build(folder)
    return {path.stem: path.read_bytes() for path in folder.iterdir()}


def test_every_forgery_is_flagged_with_what_it_does(corpus):
    released = load("student", forgeries.ASSIGNMENT)
    found = {name: flags(content, released) for name, content in corpus.items()}
    assert {name for name, hits in found.items() if not hits} == NOT_A_CHEAT
    assert any("replaces checks.check_replay_actor_loss" in hit for hit in found["patch_check"])
    assert any("sys._getframe" in hit for hit in found["frames_and_gc"])
    assert any("showtraceback" in hit for hit in found["silenced_traceback"])
    assert any("defines __eq__" in hit for hit in found["equals_everything"])
    assert all(hit.startswith("cell ") and " line " in hit for hits in found.values() for hit in hits)


@pytest.mark.parametrize("notebook", TUTORIALS.values())
def test_the_course_s_own_answers_are_not_flagged(notebook):
    released = json.loads((NOTEBOOKS / f"{notebook}.ipynb").read_text())
    tutorial = tutorial_of(notebook)
    assert tutorial is not None
    assert flags((SOLUTIONS / f"{notebook}.ipynb").read_bytes(), released, tutorial) == []


def test_code_in_cells_nbgrader_restores_is_not_flagged_but_a_new_cell_is():
    released = load("student", forgeries.ASSIGNMENT)
    notebook = json.loads(json.dumps(released))
    test_cell = next(c for c in notebook["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == forgeries.ACTOR)
    test_cell["source"] = "import sys\nsys.modules.clear()"
    assert flags(notebook, released) == []
    notebook["cells"].append({"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                              "source": "import sys\nsys.modules.clear()"})
    assert flags(notebook, released) == [f"cell {len(notebook['cells'])} line 2: uses sys.modules"]


def test_unreadable_code_is_skipped_not_a_crash():
    released = load("student", forgeries.ASSIGNMENT)
    notebook = {"cells": [{"cell_type": "code", "source": "def broken(:\n"}, {"cell_type": "code", "source": "%time x = 1\n!ls"},
                          {"cell_type": "code", "source": "(" * 5000 + ")" * 5000}, "not a cell"]}
    assert flags(notebook, released) == [] and flags(b"{not json", released) == []


def _hits(notebook_name: str, source: str) -> list[str]:
    """The hits of one new code cell appended to a tutorial's released notebook, without "cell N "."""
    released = json.loads((NOTEBOOKS / f"{notebook_name}.ipynb").read_text())
    notebook = json.loads(json.dumps(released))
    notebook["cells"].append({"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                              "source": source})
    prefix = f"cell {len(notebook['cells'])} "
    hits = flags(notebook, released, tutorial_of(notebook_name))
    assert all(hit.startswith(prefix) for hit in hits)
    return [hit.removeprefix(prefix) for hit in hits]


REPLAY, COLOUR, HARLOW = "04_prioritized_replay", "02_colour_replay", "01_harlow_meta_rl"


def test_every_checks_module_is_internal():
    assert _hits(REPLAY, "from course_utils.replay.checks_buffer import check_prioritized_buffer\n"
                         "import course_utils.replay.checks_td\n"
                         "from course_utils.replay import checks_td as td, memory\n") == [
        "line 1: imports from course_utils.replay.checks_buffer",
        "line 2: imports course_utils.replay.checks_td",
        "line 3: imports course_utils.replay.checks_td",
    ]


def test_changing_what_an_import_bound_is_flagged_at_any_depth():
    # np, dqn, ReplayBuffer and CircularReplayMemory are bound by the released setup cell, not by
    # the student; a setting kept in a module's table (plt.rcParams) is no patch
    source = """np.testing.assert_allclose = lambda *args, **kwargs: None
dqn.DQNConfig.batch_size = 1
dqn.DQNConfig.gamma += 1
del dqn.QNetwork.forward
CircularReplayMemory.add = print
np.__dict__["allclose"] = None
plt.rcParams["figure.figsize"] = (8, 4)
ReplayBuffer.sample = lambda self, n: []
"""
    assert _hits(REPLAY, source) == [
        "line 1: replaces np.testing.assert_allclose (an attribute of the imported np)",
        "line 2: replaces dqn.DQNConfig.batch_size (an attribute of the imported dqn)",
        "line 2: uses course code not listed for this exercise: course_utils.replay.dqn.DQNConfig.batch_size"
        " (through dqn.DQNConfig.batch_size)",
        "line 3: changes dqn.DQNConfig.gamma (an attribute of the imported dqn)",
        "line 3: uses course code not listed for this exercise: course_utils.replay.dqn.DQNConfig.gamma"
        " (through dqn.DQNConfig.gamma)",
        "line 4: deletes dqn.QNetwork.forward (an attribute of the imported dqn)",
        "line 4: uses course code not listed for this exercise: course_utils.replay.dqn.QNetwork.forward"
        " (through dqn.QNetwork.forward)",
        "line 5: replaces CircularReplayMemory.add (an attribute of the imported CircularReplayMemory)",
        "line 6: replaces np.__dict__['allclose'] (an attribute of the imported np)",
        "line 8: replaces ReplayBuffer.sample (an attribute of the imported ReplayBuffer)",
    ]


def test_course_code_reached_through_a_module_the_setup_cell_binds_is_flagged():
    source = "def first_solve(scores, ends):\n    return dqn.solved_at(scores, ends)\n"
    assert _hits(REPLAY, source) == [
        "line 2: uses course code not listed for this exercise: course_utils.replay.dqn.solved_at"
        " (through dqn.solved_at)"
    ]


def test_course_code_looked_up_by_name_is_flagged_written_out_or_computed():
    """The red team reached ``harlow.agent`` by ``getattr(harlow, "ag" + "ent")``: a name computed
    at run time is flagged whatever it names; a written-out one is the dotted name it spells."""
    source = """agent = getattr(harlow, "ag" + "ent")
scoring = getattr(harlow, "scoring")
everything = vars(harlow)
also = harlow.__dict__["agent"]
fine = getattr(np, "ag" + "ent", None)
"""
    assert _hits(HARLOW, source) == [
        "line 1: reads course code by a name computed at run time (getattr(harlow, 'ag' + 'ent'))",
        "line 2: uses course code not listed for this exercise: course_utils.harlow.scoring"
        " (through getattr(harlow, 'scoring'))",
        "line 3: reads course code by a name computed at run time (vars(harlow))",
        "line 4: uses course code not listed for this exercise: course_utils.harlow.__dict__ (through harlow.__dict__)",
    ]


def test_methods_patched_on_objects_are_flagged_and_an_object_s_own_methods_are_not():
    source = """def always(*args):
    return 0

memory = CircularReplayMemory(10)
type(memory).__len__ = lambda self: 5
memory.__class__.add = always
memory.write = lambda experience: None
tree.find_prefixsum_idx = 3
setattr(net, "state_dict", dict)
setattr(buffer, "helper", always)
buffer.capacity = 10
buffer.loss = F.mse_loss

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.forward = lambda x: x
        self.activation = F.relu
        setattr(self, "scale", lambda x: 2 * x)
        other.forward = self.forward

    def reset(self):
        def restore():
            self.act = always
        return restore
"""
    assert _hits(REPLAY, source) == [
        "line 5: replaces type(memory).__len__ (an attribute of an object's class)",
        "line 6: replaces memory.__class__.add (an attribute of an object's class)",
        "line 7: replaces memory.write with a function (a method patched on an object)",
        "line 8: replaces tree.find_prefixsum_idx with a value (a method patched on an object)",
        "line 9: setattr on net: its method 'state_dict' (a method patched on an object)",
        "line 10: setattr on buffer with a function (a method patched on an object)",
        "line 20: replaces other.forward with a function (a method patched on an object)",
    ]


def test_course_code_not_listed_for_the_exercise_is_flagged():
    allowed = allowed_course_code("colour")
    assert {"course_utils.colour.training:train_agent", "course_utils.colour.agent:Experience"} <= allowed
    assert allowed_course_code("replay") >= {"course_utils.replay.memory:CircularReplayMemory",  # from the setup imports
                                             "course_utils.replay.dqn:batch_tensors"}  # from GRADED's helpers
    source = """from course_utils.colour.training import discounted_returns, train_agent
colour.training.discounted_returns([1.0], 0.9)
colour.questions.MEMORY_CONTENTS.show()
steps = colour.SIZES.gradient_steps
from course_utils.colour import agent
memory = agent.ReplayMemory(agent.Experience)
importlib.import_module("course_utils.replay.standin_memory")
__import__(f"course_utils.{name}.solutions")
from course_utils import lunar
lunar.aac.something
from course_utils.plotting import plot_curve
"""
    assert _hits(COLOUR, source) == [
        "line 1: uses course code not listed for this exercise: course_utils.colour.training.discounted_returns (imported)",
        "line 2: uses course code not listed for this exercise: course_utils.colour.training.discounted_returns"
        " (through colour.training.discounted_returns)",
        "line 6: uses course code not listed for this exercise: course_utils.colour.agent.ReplayMemory"
        " (through agent.ReplayMemory)",
        "line 7: uses course code not listed for this exercise: course_utils.replay.standin_memory (imported dynamically)",
        "line 8: uses course code not listed for this exercise: f'course_utils.{name}.solutions' (imported dynamically)",
        "line 9: uses course code not listed for this exercise: course_utils.lunar (imported)",
        "line 10: uses course code not listed for this exercise: course_utils.lunar.aac.something (through lunar.aac.something)",
    ]


def test_a_copy_of_course_code_carried_in_the_cell_is_flagged():
    """The red team's way past the drive apart: the course's module, compressed and encoded into a
    literal, run with exec (or a function rebuilt from marshalled bytecode). Each step is flagged."""
    import base64
    import marshal
    import zlib

    from course_utils.colour.training import _gradient_step

    released = load("student", forgeries.ASSIGNMENT)
    payload = base64.b64encode(zlib.compress(("x = 1\n" * 2000).encode())).decode()
    code = base64.b64encode(marshal.dumps(_gradient_step.__code__)).decode()
    cells = [
        f"import types as _t, zlib as _z, base64 as _b\n_m = _t.ModuleType('m')\n"
        f"exec(_z.decompress(_b.b64decode('{payload}')).decode(), _m.__dict__)",
        f"from marshal import loads\nimport types\n_f = types.FunctionType(loads(bytes.fromhex('{code}')), {{}})",
        "import sys\nsys.meta_path.insert(0, object())\nf = lambda: 0\nf.__code__ = (lambda: 1).__code__",
    ]
    notebook = json.loads(json.dumps(released))
    for source in cells:
        notebook["cells"].append({"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                                  "source": source})
    found = " | ".join(flags(notebook, released))
    for what in ("runs code built at run time (exec)", "decodes bytes into code or objects (zlib.decompress)",
                 "decodes bytes into code or objects (base64.b64decode)", "an embedded payload",
                 "decodes bytes into code or objects (marshal.loads)", "decodes bytes into code or objects (types.FunctionType)",
                 "uses sys.meta_path", "__code__"):
        assert what in found, (what, found)
    # an honest answer's json and numpy calls are not decoders
    honest = json.loads(json.dumps(released))
    honest["cells"].append({"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                            "source": "import json\nimport numpy as np\nconfig = json.loads('{}')\nx = np.load"})
    assert flags(honest, released) == []
