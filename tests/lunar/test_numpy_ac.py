"""The lander's NumPy update step computes what PyTorch's autograd and Adam compute."""

import numpy as np
import pytest
import torch
from torch import nn

from course_admin.lunar.aac import ActorCriticNet
from course_admin.lunar.numpy_ac import Adam, NumpyActorCritic


def _batch(b=64, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(b, 8, generator=g)
    a = torch.randint(0, 4, (b,), generator=g)
    old = torch.log(torch.full((b,), 0.25)) + 0.4 * torch.randn(b, generator=g)  # ratios on both sides of the clip
    return x, a, old, torch.randn(b, generator=g), torch.randn(b, generator=g)


def _torch_loss(net, x, a, old, adv, ret, clip):
    logits, v = net(x)
    dist = torch.distributions.Categorical(logits=logits)
    logp = dist.log_prob(a)
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    if clip is None:
        policy = -(adv * logp).mean()
    else:
        ratio = torch.exp(logp - old)
        policy = -torch.min(ratio * adv, torch.clamp(ratio, 1 - clip, 1 + clip) * adv).mean()
    return policy + 0.5 * ((v - ret) ** 2).mean() - 0.01 * dist.entropy().mean()


def _net(seed=0):
    torch.manual_seed(seed)
    net = ActorCriticNet()
    with torch.no_grad():
        for p in net.parameters():
            p.add_(0.2 * torch.randn_like(p))  # a policy far from uniform: ratios and entropy matter
    return net


@pytest.mark.parametrize("clip", [0.2, None])
def test_loss_and_gradient_match_autograd(clip):
    net = _net()
    x, a, old, adv, ret = _batch()
    loss = _torch_loss(net, x, a, old, adv, ret, clip)
    net.zero_grad()
    loss.backward()
    model = NumpyActorCritic(net.state_dict())
    got = model.loss_and_grad(x.numpy(), a.numpy(), old.numpy(), adv.numpy(), ret.numpy(), clip, 0.5, 0.01)
    assert got == pytest.approx(float(loss.detach()), rel=1e-5)
    params = dict(net.named_parameters())
    expected = np.concatenate([params[k].grad.numpy().ravel() for k in net.state_dict()])
    assert np.abs(model.grad - expected).max() < 1e-5 * max(1.0, np.abs(expected).max())
    assert np.abs(expected).max() > 1e-2  # the comparison is not between two zero vectors


def test_adam_with_clipping_matches_torch_for_many_steps():
    net = _net(1)
    model = NumpyActorCritic(net.state_dict())
    torch_adam = torch.optim.Adam(net.parameters(), lr=1e-3, eps=1e-5)
    adam = Adam(model.theta, lr=1e-3, eps=1e-5)
    for step in range(30):
        batch = _batch(seed=step)
        loss = _torch_loss(net, *batch, 0.2)
        torch_adam.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(net.parameters(), 0.5)
        torch_adam.step()
        model.loss_and_grad(*(t.numpy() for t in batch), 0.2, 0.5, 0.01)
        adam.step(model.grad, 0.5)
    for k, v in net.state_dict().items():
        assert np.allclose(model.state_dict()[k].numpy(), v.numpy(), atol=2e-5), k
    moved = max(float((v - _net(1).state_dict()[k]).abs().max()) for k, v in net.state_dict().items())
    assert moved > 1e-3  # the weights really moved


def test_round_trip_of_weights_through_the_flat_vector():
    net = _net(2)
    model = NumpyActorCritic(net.state_dict())
    assert model.theta.size == sum(p.numel() for p in net.parameters())
    back = ActorCriticNet()
    back.load_state_dict(model.state_dict())
    x = torch.randn(5, 8)
    logits, values = model.forward(x.numpy())
    assert np.allclose(logits, net(x)[0].detach().numpy(), atol=1e-5)
    assert np.allclose(values, back(x)[1].detach().numpy(), atol=1e-5)
