"""The NumPy scores the rollout workers draw actions with (``course_utils.lunar.numpy_policy``):
the same function as the network's torch forward where taken, and the torch forward elsewhere."""

import numpy as np
import pytest
import torch
from torch import nn
from torch.nn import functional

from course_admin.lunar.solutions import AACPolicyNet, PolicyNet
from course_utils.lunar.numpy_policy import numpy_scores


def _torch_scores(net, obs):
    with torch.no_grad():
        output = net(torch.from_numpy(obs))
    return (output[0] if isinstance(output, tuple) else output).numpy()


@pytest.mark.parametrize("cls", [PolicyNet, AACPolicyNet])
def test_the_notebooks_networks_get_numpy_scores_equal_to_their_torch_forward(cls):
    torch.manual_seed(0)
    net = cls(8, 4)
    scores = numpy_scores(net)
    assert scores is not None and scores.agrees(8)
    obs = np.random.default_rng(1).normal(0, 2, (200, 8)).astype(np.float32)
    assert np.allclose(scores(obs), _torch_scores(net, obs), rtol=1e-5, atol=1e-5)
    # only what the scores depend on is computed: an actor-critic's critic is left out
    assert len(scores.steps) == 5


def test_the_numpy_scores_follow_new_weights_loaded_into_the_network():
    torch.manual_seed(0)
    net, other = PolicyNet(8, 4), PolicyNet(8, 4)
    scores = numpy_scores(net)
    obs = np.random.default_rng(2).normal(0, 1, (10, 8)).astype(np.float32)
    net.load_state_dict(other.state_dict())
    assert np.allclose(scores(obs), _torch_scores(other, obs), rtol=1e-5, atol=1e-5)


class Doubled(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(8, 4)

    def forward(self, x):
        return self.layer(x) * 2  # an operation the course does not translate


class Branching(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(8, 4)

    def forward(self, x):
        if x.sum() > 0:  # control flow on values: fx cannot trace it
            return self.layer(x)
        return -self.layer(x)


class MyReLU(nn.ReLU):
    def forward(self, x):
        return functional.relu(x) + 1.0


@pytest.mark.parametrize("net", [
    nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.1), nn.Linear(16, 4)),
    nn.Sequential(nn.Linear(8, 16), nn.LayerNorm(16), nn.Linear(16, 4)),
    nn.Sequential(nn.Linear(8, 16), MyReLU(), nn.Linear(16, 4)),
    Doubled(),
    Branching(),
], ids=["dropout", "layernorm", "subclassed-relu", "unknown-operation", "control-flow"])
def test_networks_the_course_cannot_show_equal_keep_the_torch_forward(net):
    assert numpy_scores(net) is None


class Mixed(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b, self.c = nn.Linear(8, 16), nn.Linear(16, 16), nn.Linear(16, 4)
        self.leaky, self.elu = nn.LeakyReLU(0.2), nn.ELU(0.5)

    def forward(self, x):
        h = torch.tanh(self.a(x)).relu()
        h = self.elu(self.leaky(functional.relu(self.b(h), inplace=True)))
        return torch.sigmoid(self.c(h)), None


def test_activations_as_modules_functions_and_methods_are_all_translated():
    torch.manual_seed(0)
    net = Mixed()
    scores = numpy_scores(net)
    assert scores is not None and len(scores.steps) == 9
    obs = np.random.default_rng(3).normal(0, 3, (100, 8)).astype(np.float32)
    assert np.allclose(scores(obs), _torch_scores(net, obs), rtol=1e-5, atol=1e-6)


def test_a_disagreeing_twin_is_caught_by_the_probe():
    torch.manual_seed(0)
    net = PolicyNet(8, 4)
    scores = numpy_scores(net)
    scores.steps[-1] = (scores.steps[-1][0], scores.steps[-1][1], lambda x: np.zeros((len(x), 4), np.float32))
    assert not scores.agrees(8)
