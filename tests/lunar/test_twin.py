"""``twin.numpy_scores``: a notebook network's action scores replayed with NumPy for playing episodes."""

import numpy as np
import torch
from torch import nn

from course_admin.lunar.solutions import AACPolicyNet, PolicyNet
from course_utils.lunar.twin import numpy_scores


def _scores(net, obs):
    with torch.no_grad():
        output = net(torch.from_numpy(obs))
    return (output[0] if isinstance(output, tuple) else output).numpy()


class FunctionalNet(nn.Module):
    """Activations as functions and a value head NumPy cannot replay (Softplus), which the scores skip."""

    def __init__(self):
        super().__init__()
        self.hidden, self.scores, self.value = nn.Linear(8, 32), nn.Linear(32, 4), nn.Linear(32, 1)
        self.squash = nn.Softplus()

    def forward(self, x):
        h = torch.relu(self.hidden(x))
        return self.scores(torch.tanh(h)), self.squash(self.value(h))


class Branching(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(8, 4)

    def forward(self, x):
        return self.layer(x) if x.sum() > 0 else -self.layer(x)


def test_the_scores_are_the_networks_and_follow_its_weights_in_place():
    torch.manual_seed(0)
    obs = np.random.default_rng(1).normal(size=(16, 8)).astype(np.float32)
    for net in (PolicyNet(8, 4), AACPolicyNet(8, 4), FunctionalNet(), nn.Sequential(nn.Linear(8, 4), nn.LeakyReLU(0.1))):
        scores = numpy_scores(net)
        assert scores is not None, type(net).__name__
        np.testing.assert_allclose(scores(obs), _scores(net, obs), rtol=1e-5, atol=1e-5)
        # the weights a trainer or load_state_dict changes in place are the ones replayed
        net.load_state_dict({key: torch.randn_like(value) for key, value in net.state_dict().items()})
        with torch.no_grad():
            next(net.parameters()).mul_(0.5)
        np.testing.assert_allclose(scores(obs), _scores(net, obs), rtol=1e-5, atol=1e-5)


def test_a_forward_numpy_cannot_replay_gives_none():
    assert numpy_scores(Branching()) is None  # fx cannot trace it
    assert numpy_scores(nn.Sequential(nn.Linear(8, 4), nn.Softplus())) is None  # no NumPy Softplus here
    assert numpy_scores(nn.Sequential(nn.Linear(9, 4))) is None  # other input size: the probe fails
