"""The critic's own regression steps (``lunar.critic``, ``TrainerLoop.train(critic_steps=k)``)."""

import torch
from torch import nn

from course_admin.lunar.solutions import (
    AACPolicyGradientLoss,
    AACPolicyNet,
    ActionEntropyLoss,
    PolicyNet,
    PolicyTrainer,
)
from course_utils.lunar.critic import CriticFit, critic_parameters


class SharedBody(nn.Module):
    """One body, two heads: the other shape Exercise 8 allows."""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
        self.scores, self.value = nn.Linear(16, 4), nn.Linear(16, 1)

    def forward(self, x):
        h = self.body(x)
        return self.scores(h), self.value(h)


class Batch:
    def __init__(self, n=64, seed=0):
        generator = torch.Generator().manual_seed(seed)
        self.states = torch.randn(n, 8, generator=generator)
        self.actions = torch.randint(0, 4, (n,), generator=generator)
        self.q_vals = 3.0 * self.states[:, 0] - 5.0  # far from the untrained critic's 0
        self.total_rewards = torch.tensor([float(self.q_vals.mean())])


def test_the_critics_parameters_are_the_ones_only_the_values_depend_on():
    torch.manual_seed(0)
    states = torch.randn(5, 8)
    separate = AACPolicyNet(8, 4, (16,))
    assert [id(p) for p in critic_parameters(separate, states)] == [id(p) for p in separate.critic.parameters()]
    shared = SharedBody()
    assert [id(p) for p in critic_parameters(shared, states)] == [id(p) for p in shared.value.parameters()]
    assert critic_parameters(PolicyNet(8, 4, (16,)), states) == []  # no values: nothing to fit


def test_a_fit_moves_only_the_critic_and_lowers_its_error():
    for net in (AACPolicyNet(8, 4, (16,)), SharedBody()):
        batch = Batch()
        fit = CriticFit(net, batch.states, steps=20, learn_rate=5e-2)
        others = {id(p) for p in fit.params}
        before = {name: p.detach().clone() for name, p in net.named_parameters()}
        error_before = float(((net(batch.states)[1].reshape(-1) - batch.q_vals) ** 2).mean())
        fit(batch)
        error_after = float(((net(batch.states)[1].reshape(-1) - batch.q_vals) ** 2).mean())
        assert error_after < 0.95 * error_before
        for name, p in net.named_parameters():
            moved = not torch.equal(p.detach(), before[name])
            assert moved == (id(p) in others), name
            if id(p) not in others:
                assert p.grad is None, name  # nothing left for the student's next train_batch
    assert CriticFit(PolicyNet(8, 4, (16,)), Batch().states, 5, 1e-2)(Batch()) is None


def test_the_training_loop_fits_the_critic_after_the_policy_step_with_the_advantages_before_it():
    """With ``critic_steps`` the loop fits the critic after ``train_batch``: the advantages the
    loss recorded for a batch are those of the critic before that batch's fit, and the critic
    of the next batch is closer to the q-values than without the steps."""

    def run(critic_steps):
        torch.manual_seed(0)
        net = AACPolicyNet(8, 4, (16,))
        trainer = PolicyTrainer(net, torch.optim.Adam(net.parameters(), lr=1e-3),
                                [AACPolicyGradientLoss(0.01), ActionEntropyLoss(4, 0.1)], [Batch(seed=0), Batch(seed=0)])
        return trainer.train(max_episodes=2, progress=False, critic_steps=critic_steps, critic_learn_rate=5e-2)

    plain, fitted = run(0), run(10)
    assert fitted["adv_m"][0] == plain["adv_m"][0]  # batch 0's loss saw the same critic
    assert fitted["loss_v"][1] < 0.9 * plain["loss_v"][1]  # batch 1's saw a fitted one
    assert abs(fitted["adv_m"][1]) < abs(plain["adv_m"][1])


def test_the_fit_sets_the_value_outputs_bias_to_centre_the_batch():
    """Before each step the fit sets the value output's bias to the batch's mean of ``q - v``: after a
    fit the critic's mean error on the batch is about 0 even with a learning rate too small for the
    steps to move the level (here 5 units away), for both shapes of Exercise 8's network."""
    for net in (AACPolicyNet(8, 4, (16,)), SharedBody()):
        batch = Batch()
        fit = CriticFit(net, batch.states, steps=3, learn_rate=1e-4)
        assert fit.bias is (net.critic[-1].bias if isinstance(net, AACPolicyNet) else net.value.bias)
        fit(batch)
        assert abs(float((batch.q_vals - net(batch.states)[1].reshape(-1)).mean())) < 0.01
        uncentred = AACPolicyNet(8, 4, (16,))
        CriticFit(uncentred, batch.states, steps=3, learn_rate=1e-4, centre=False)(batch)
        assert float((batch.q_vals - uncentred(batch.states)[1].reshape(-1)).mean()) < -4


def test_a_critic_without_an_output_bias_is_fitted_by_its_steps_alone():
    net = AACPolicyNet(8, 4, (16,))
    net.critic[-1] = nn.Linear(16, 1, bias=False)
    batch = Batch()
    fit = CriticFit(net, batch.states, steps=2, learn_rate=1e-2)
    assert fit.bias is None
    assert fit(batch) > 0


def test_the_fit_computes_the_values_alone_and_gets_the_steps_of_the_whole_network():
    """The critic's steps run only what the values depend on (an actor's forward would be wasted),
    and take the very steps the whole network's values give, to the last bit: two fits from the
    same weights, one of them made to run the whole network."""
    for make in (lambda: AACPolicyNet(8, 4, (16,)), SharedBody):
        torch.manual_seed(1)
        nets = [make(), make()]
        nets[1].load_state_dict(nets[0].state_dict())
        fits = [CriticFit(net, Batch().states, steps=5, learn_rate=1e-2) for net in nets]
        assert isinstance(fits[0].values_of, torch.fx.GraphModule)
        whole = nets[1]
        fits[1].values_of = lambda states, whole=whole: whole(states)[1]
        for fit in fits:
            for seed in range(3):
                fit(Batch(seed=seed))
        for (name, a), b in zip(nets[0].state_dict().items(), nets[1].state_dict().values(), strict=True):
            assert torch.equal(a, b), name
        scores_module = [name for name, _ in fits[0].values_of.named_modules() if name.startswith(("actor", "scores"))]
        assert scores_module == []  # the traced values hold no part of the actor
