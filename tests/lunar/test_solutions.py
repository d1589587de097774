"""Tutorial 3's reference implementations (``lunar.solutions``) against hand-computed values."""

import gymnasium as gym
import numpy as np
import pytest
import torch
from torch import nn

from course_admin.lunar.solutions import (
    AACPolicyGradientLoss,
    AACPolicyNet,
    ActionEntropyLoss,
    BaselinePolicyGradientLoss,
    Episode,
    PolicyNet,
    TrainBatch,
    VanillaPolicyGradientLoss,
)
from course_utils.lunar.env import ENV_ID
from course_utils.lunar.harness import Experience


def _episode(rewards):
    return Episode(sum(rewards), [Experience(torch.zeros(8), 0, r, i == len(rewards) - 1) for i, r in enumerate(rewards)])


def test_calc_qvals_by_hand():
    assert Episode(3.0, [Experience(None, None, 1.0, False)] * 3).calc_qvals(0.5) == [1.75, 1.5, 1.0]
    assert np.allclose(_episode([0.0, 0.0, 10.0]).calc_qvals(0.9), [8.1, 9.0, 10.0])


def test_losses_by_hand():
    # Two steps, actions 0 and 1, uniform scores: log pi = -log 4 for both.
    batch = TrainBatch(torch.zeros(2, 8), torch.tensor([0, 1]), torch.tensor([2.0, 4.0]), torch.tensor([6.0]))
    scores = torch.zeros(2, 4)
    log4 = np.log(4)
    vpg, info = VanillaPolicyGradientLoss()(batch, scores)
    assert vpg.item() == pytest.approx(3.0 * log4, rel=1e-6) and info["loss_p"] == pytest.approx(vpg.item())
    bpg, info = BaselinePolicyGradientLoss()(batch, scores)  # baseline 3: advantages -1, +1
    assert bpg.item() == pytest.approx(0.0, abs=1e-6) and info["baseline"] == pytest.approx(3.0)
    entropy = ActionEntropyLoss(4, beta=0.5)
    assert entropy.max_entropy == pytest.approx(1.3862944, rel=1e-6)
    assert entropy(batch, scores)[0].item() == pytest.approx(-0.5, rel=1e-6)
    values = torch.tensor([[1.0], [5.0]])  # advantages 1 and -1; value errors -1 and +1
    aac, info = AACPolicyGradientLoss(delta=2.0)(batch, (scores, values))
    assert info["loss_p"] == pytest.approx(0.0, abs=1e-6) and info["loss_v"] == pytest.approx(1.0)
    assert aac.item() == pytest.approx(2.0)


def test_train_batch_from_episodes_concatenates_in_order():
    batch = TrainBatch.from_episodes([_episode([1.0, 1.0]), _episode([3.0])], gamma=0.5)
    assert batch.q_vals.tolist() == [1.5, 1.0, 3.0]
    assert batch.total_rewards.tolist() == [2.0, 3.0] and len(batch.total_rewards) == 2 and len(batch) == 3
    assert batch.states.shape == (3, 8) and batch.actions.dtype == torch.long


@pytest.mark.parametrize("net_type", [PolicyNet, AACPolicyNet])
def test_reference_nets_take_the_notebooks_whole_hyperparameter_dict(net_type):
    """The notebook swaps the course's class in for a student's unfinished one and calls
    ``build_for_env(env, **pg_hp)`` with batch size, gamma... in it: only hidden_layers counts."""
    env = gym.make(ENV_ID)
    hp = dict(batch_size=16, gamma=0.99, beta=0.5, learn_rate=2e-3, hidden_layers=(32, 16))
    net = net_type.build_for_env(env, **hp)
    linears = [m for m in net.modules() if isinstance(m, nn.Linear)]
    assert linears[0].out_features == 32 and linears[1].out_features == 16
