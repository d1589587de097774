"""What the notebook gives ready-made (``lunar.harness``): batched collection of whole episodes and the training loop."""

import numpy as np
import pytest
import torch
from torch import nn

from course_utils.lunar.env import make_env
from course_utils.lunar.harness import VectorBatchDataset, collect_episodes
from course_utils.lunar.solutions import (
    ActionEntropyLoss,
    BaselinePolicyGradientLoss,
    Episode,
    PolicyNet,
    PolicyTrainer,
    TrainBatch,
)


def test_collect_episodes_matches_single_env_play():
    """One batched forward for many environments gives exactly the single-env transitions."""
    torch.manual_seed(3)
    net = nn.Linear(8, 4)
    seeds = [5, 6, 7]
    episodes = collect_episodes(net, seeds, deterministic=True, episode_type=Episode)
    for seed, episode in zip(seeds, episodes, strict=True):
        env = make_env()
        state, _ = env.reset(seed=seed)
        for exp in episode.experiences:
            assert np.array_equal(exp.state.numpy(), state)
            action = int(net(torch.as_tensor(state)).argmax())
            assert exp.action == action
            state, reward, terminated, truncated, _ = env.step(action)
            assert exp.reward == reward and exp.is_done == (terminated or truncated)
        assert episode.experiences[-1].is_done
        assert episode.total_reward == pytest.approx(sum(e.reward for e in episode.experiences))


def test_policy_trainer_reaches_the_sanity_target_in_few_batches():
    """The notebook's claim: REINFORCE with a baseline passes -150 (mean of 10 episodes) within a few batches."""
    torch.manual_seed(0)
    net = PolicyNet(8, 4, (128, 128))
    dataset = VectorBatchDataset(net, 16, 0.99, seed=0, batch_type=TrainBatch, episode_type=Episode)
    trainer = PolicyTrainer(
        net, torch.optim.Adam(net.parameters(), lr=2e-3), [BaselinePolicyGradientLoss(), ActionEntropyLoss(4, 0.5)], dataset
    )
    data = trainer.train(target_reward=-150, running_mean_len=10, max_episodes=16 * 12, progress=False)
    assert data["mean_reward"][-1] >= -150
    assert data["episode_num"][-1] <= 16 * 12
