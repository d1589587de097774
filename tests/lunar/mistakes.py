"""Typical mistakes in tutorial 3's exercises, as subclasses of the reference implementations: the checks must catch them."""

import numpy as np
import torch
from torch import nn

from course_admin.lunar.solutions import (
    AACPolicyGradientLoss,
    AACPolicyNet,
    ActionEntropyLoss,
    BaselinePolicyGradientLoss,
    Episode,
    PolicyAgent,
    PolicyNet,
    VanillaPolicyGradientLoss,
)
from course_utils.lunar.harness import Experience, TrainerLoop


class ReversedQvals(Episode):
    def calc_qvals(self, gamma):
        return super().calc_qvals(gamma)[::-1]


class UndiscountedQvals(Episode):
    def calc_qvals(self, gamma):
        return list(np.cumsum([e.reward for e in self.experiences][::-1])[::-1])


class ForwardQvals(Episode):
    def calc_qvals(self, gamma):
        out, running = [], 0.0
        for e in self.experiences:
            running = running * gamma + e.reward
            out.append(running)
        return out


class NoBaseline(BaselinePolicyGradientLoss):
    def forward(self, batch, scores):
        loss, _ = VanillaPolicyGradientLoss()(batch, scores)
        return loss, dict(loss_p=loss.item(), baseline=batch.q_vals.mean().item())


class FlippedVanilla(VanillaPolicyGradientLoss):
    def forward(self, batch, scores):
        loss, info = super().forward(batch, scores)
        return -loss, info


class PositiveEntropy(ActionEntropyLoss):
    def forward(self, batch, scores):
        loss, info = super().forward(batch, scores)
        return -loss, info


class UnnormalisedEntropy(ActionEntropyLoss):
    def forward(self, batch, scores):
        loss, info = super().forward(batch, scores)
        return loss * self.max_entropy, info


class DetachedVanilla(VanillaPolicyGradientLoss):
    def forward(self, batch, scores):
        return super().forward(batch, scores.detach())


class AACWithoutAdvantage(AACPolicyGradientLoss):
    def forward(self, batch, output):
        scores, values = output
        loss_p, _ = VanillaPolicyGradientLoss()(batch, scores)
        loss_v = ((values.reshape(-1) - batch.q_vals) ** 2).mean()
        return loss_p + self.delta * loss_v, {}


class AACNotDetached(AACPolicyGradientLoss):
    def forward(self, batch, output):
        scores, values = output
        values = values.reshape(-1)
        logp = torch.log_softmax(scores, -1).gather(1, batch.actions.view(-1, 1)).squeeze(1)
        loss_p = -((batch.q_vals - values) * logp).mean()
        return loss_p + self.delta * ((values - batch.q_vals) ** 2).mean(), {}


class ArgmaxAgent(PolicyAgent):
    def step(self):
        action = int(self.current_action_distribution().argmax())
        state, reward, terminated, truncated, _ = self.env.step(action)
        exp = Experience(self.curr_state, action, reward, terminated or truncated)
        self.curr_state = torch.as_tensor(state) if not (terminated or truncated) else self.reset() or self.curr_state
        return exp


class NextStateAgent(PolicyAgent):
    def step(self):
        exp = super().step()
        return exp._replace(state=self.curr_state)


class TerminatedOnlyAgent(PolicyAgent):
    def step(self):
        return super().step()


class SoftmaxNet(nn.Module):
    def __init__(self, in_features, out_actions, hidden_layers=(16,)):
        super().__init__()
        self.inner = PolicyNet(in_features, out_actions, hidden_layers)

    def forward(self, x):
        return torch.softmax(self.inner(x), -1)

    @classmethod
    def build_for_env(cls, env, **kw):
        return cls(env.observation_space.shape[0], env.action_space.n, **kw)


class UnnormalisedAgent(PolicyAgent):
    def current_action_distribution(self):
        return self.p_net(self.curr_state).detach()


class NoZeroGrad(TrainerLoop):
    def train_batch(self, batch):
        output = self.model(batch.states)
        total, losses = 0.0, {}
        for loss_fn in self.loss_fns:
            loss, info = loss_fn(batch, self.loss_input(loss_fn, output))
            total, losses = total + loss, {**losses, **info}
        total.backward()
        self.optimizer.step()
        return total.item(), losses


class NoStep(TrainerLoop):
    def train_batch(self, batch):
        output = self.model(batch.states)
        loss, info = self.loss_fns[0](batch, output)
        return loss.item(), info


class IgnoresLossInput(TrainerLoop):
    """Hands every loss the model's output as is: fine with a PolicyNet, a crash in the AAC section."""

    def train_batch(self, batch):
        output = self.model(batch.states)
        total, losses = 0.0, {}
        for loss_fn in self.loss_fns:
            loss, info = loss_fn(batch, output)
            total, losses = total + loss, {**losses, **info}
        self.optimizer.zero_grad()
        total.backward()
        self.optimizer.step()
        return total.item(), losses


class ScoresToEveryLoss(TrainerLoop):
    """Hands every loss only the action scores (the first output): the AAC loss never sees the values."""

    def train_batch(self, batch):
        output = self.model(batch.states)
        scores = output[0] if isinstance(output, tuple) else output
        total, losses = 0.0, {}
        for loss_fn in self.loss_fns:
            loss, info = loss_fn(batch, scores)
            total, losses = total + loss, {**losses, **info}
        self.optimizer.zero_grad()
        total.backward()
        self.optimizer.step()
        return total.item(), losses


class BroadcastAAC(AACPolicyGradientLoss):
    """q_vals (N,) minus state_values (N, 1): an (N, N) advantage and value error."""

    def forward(self, batch, output):
        scores, values = output
        advantage = batch.q_vals - values.detach()
        logp = torch.log_softmax(scores, -1).gather(1, batch.actions.view(-1, 1)).squeeze(1)
        loss_p = -(advantage * logp).mean()
        loss_v = ((values - batch.q_vals) ** 2).mean()
        return loss_p + self.delta * loss_v, dict(loss_p=loss_p.item(), loss_v=loss_v.item())


def _log_pi_over_batch(scores, actions):
    """log pi(a|s) with the softmax taken over the batch (dim=0) instead of the actions."""
    return torch.log_softmax(scores, 0).gather(1, actions.view(-1, 1)).squeeze(1)


class WrongAxisVanilla(VanillaPolicyGradientLoss):
    def forward(self, batch, scores):
        loss_p = -(batch.q_vals * _log_pi_over_batch(scores, batch.actions)).mean()
        return loss_p, dict(loss_p=loss_p.item())


class WrongAxisBaseline(BaselinePolicyGradientLoss):
    def forward(self, batch, scores):
        baseline = batch.q_vals.mean()
        loss_p = -((batch.q_vals - baseline) * _log_pi_over_batch(scores, batch.actions)).mean()
        return loss_p, dict(loss_p=loss_p.item(), baseline=baseline.item())


class WrongAxisEntropy(ActionEntropyLoss):
    def forward(self, batch, scores):
        log_p = torch.log_softmax(scores, 0)
        entropy = -(log_p.exp() * log_p).sum(-1)
        loss_e = -self.beta * (entropy / self.max_entropy).mean()
        return loss_e, dict(loss_e=loss_e.item())


class WrongAxisAAC(AACPolicyGradientLoss):
    def forward(self, batch, output):
        scores, values = output
        values = values.reshape(-1)
        loss_p = -((batch.q_vals - values.detach()) * _log_pi_over_batch(scores, batch.actions)).mean()
        loss_v = ((values - batch.q_vals) ** 2).mean()
        return loss_p + self.delta * loss_v, dict(loss_p=loss_p.item(), loss_v=loss_v.item())


class LinearNet(PolicyNet):
    """No hidden layer: one linear map of the observations to the scores, whatever hidden_layers says."""

    def __init__(self, in_features, out_actions, hidden_layers=(128, 128)):
        nn.Module.__init__(self)
        self.layers = nn.Linear(in_features, out_actions)


class NoActivationNet(PolicyNet):
    """The hidden layers' sizes, but no nonlinearity between them: an affine map."""

    def __init__(self, in_features, out_actions, hidden_layers=(128, 128)):
        nn.Module.__init__(self)
        sizes = [in_features, *hidden_layers, out_actions]
        self.layers = nn.Sequential(*(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:], strict=True)))


def _hidden(in_features, hidden_layers, activation) -> list[nn.Module]:
    """The hidden layers of an MLP: a Linear and an ``activation`` per size in ``hidden_layers``."""
    sizes = [in_features, *hidden_layers]
    return [module for a, b in zip(sizes[:-1], sizes[1:], strict=True) for module in (nn.Linear(a, b), activation())]


class TanhNet(PolicyNet):
    """Another nonlinearity: an answer (the exercise does not ask for ReLU)."""

    def __init__(self, in_features, out_actions, hidden_layers=(128, 128)):
        nn.Module.__init__(self)
        self.layers = nn.Sequential(*_hidden(in_features, hidden_layers, nn.Tanh), nn.Linear(hidden_layers[-1], out_actions))


class LinearHeadsNet(AACPolicyNet):
    """Two linear heads and no hidden layer."""

    def __init__(self, in_features, out_actions, hidden_layers=(128, 128)):
        nn.Module.__init__(self)
        self.actor, self.critic = nn.Linear(in_features, out_actions), nn.Linear(in_features, 1)


class SharedBodyNet(AACPolicyNet):
    """One body and one head of both outputs (scores and value): an answer too."""

    def __init__(self, in_features, out_actions, hidden_layers=(128, 128)):
        nn.Module.__init__(self)
        self.body = nn.Sequential(*_hidden(in_features, hidden_layers, nn.ReLU))
        self.head, self.n_actions = nn.Linear(hidden_layers[-1], out_actions + 1), out_actions

    def forward(self, x):
        out = self.head(self.body(x))
        return out[:, : self.n_actions], out[:, self.n_actions :]
