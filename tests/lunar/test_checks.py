"""Tutorial 3's checks accept the reference implementations and catch typical mistakes with a useful message."""

import pytest
from verdicts import not_yet

from course_admin.lunar.solutions import (
    AACPolicyAgent,
    AACPolicyGradientLoss,
    AACPolicyNet,
    ActionEntropyLoss,
    BaselinePolicyGradientLoss,
    Episode,
    PolicyAgent,
    PolicyNet,
    PolicyTrainer,
    TrainBatch,
    VanillaPolicyGradientLoss,
)
from course_utils.lunar.checks.aac_checks import check_aac_agent, check_aac_loss, check_aac_net
from course_utils.lunar.checks.agents import check_agent_distribution, check_agent_step, check_policy_net
from course_utils.lunar.checks.episodes import check_from_episodes
from course_utils.lunar.checks.losses import check_bpg_loss, check_entropy_loss, check_policy_trainer, check_vpg_loss
from course_utils.lunar.checks.qvals import check_calc_qvals

from .mistakes import (
    AACNotDetached,
    AACWithoutAdvantage,
    ArgmaxAgent,
    BroadcastAAC,
    DetachedVanilla,
    FlippedVanilla,
    ForwardQvals,
    IgnoresLossInput,
    LinearHeadsNet,
    LinearNet,
    NextStateAgent,
    NoActivationNet,
    NoBaseline,
    NoStep,
    NoZeroGrad,
    PositiveEntropy,
    ReversedQvals,
    ScoresToEveryLoss,
    SharedBodyNet,
    SoftmaxNet,
    TanhNet,
    UndiscountedQvals,
    UnnormalisedAgent,
    UnnormalisedEntropy,
    WrongAxisAAC,
    WrongAxisBaseline,
    WrongAxisEntropy,
    WrongAxisVanilla,
)

REFERENCE = {
    check_policy_net: PolicyNet,
    check_agent_distribution: PolicyAgent,
    check_agent_step: PolicyAgent,
    check_calc_qvals: Episode,
    check_from_episodes: TrainBatch,
    check_vpg_loss: VanillaPolicyGradientLoss,
    check_bpg_loss: BaselinePolicyGradientLoss,
    check_entropy_loss: ActionEntropyLoss,
    check_policy_trainer: PolicyTrainer,
    check_aac_net: AACPolicyNet,
    check_aac_agent: AACPolicyAgent,
    check_aac_loss: AACPolicyGradientLoss,
}


@pytest.mark.parametrize("check", list(REFERENCE), ids=lambda c: c.__name__)
def test_checks_accept_the_reference(check):
    assert check(REFERENCE[check])


def _fails(check, candidate, *words):
    message = not_yet(check, candidate)
    for word in words:
        assert word in message, message
    return message


def test_check_calc_qvals_catches_mistakes():
    _fails(check_calc_qvals, ReversedQvals, "reverse order")
    _fails(check_calc_qvals, UndiscountedQvals, "forgot the discount")
    _fails(check_calc_qvals, ForwardQvals, "END of the episode")
    _fails(check_calc_qvals, Episode.__base__, "Episode")  # object() takes no arguments


def test_loss_checks_catch_mistakes():
    _fails(check_bpg_loss, NoBaseline, "baseline was not subtracted")
    _fails(check_vpg_loss, FlippedVanilla, "sign is flipped")
    _fails(check_vpg_loss, DetachedVanilla, "no gradient")
    _fails(check_entropy_loss, PositiveEntropy, "sign is flipped")
    _fails(check_entropy_loss, UnnormalisedEntropy, "max_entropy")


def test_aac_loss_check_catches_mistakes():
    _fails(check_aac_loss, AACWithoutAdvantage, "advantage q - v")
    _fails(check_aac_loss, AACNotDetached, "detach")


def test_agent_and_net_checks_catch_mistakes():
    _fails(check_agent_step, ArgmaxAgent, "Sample the action")
    _fails(check_agent_step, NextStateAgent, "not the state the action was taken in")
    _fails(check_agent_distribution, UnnormalisedAgent, "sum to 1")
    _fails(check_policy_net, SoftmaxNet, "probabilities")


def test_network_checks_want_the_hidden_layers_and_a_nonlinearity():
    """A linear layer, or the hidden layers without a nonlinearity, is no MLP: it scored the network
    exercises' points before their checks built the networks with given hidden layers."""
    _fails(check_policy_net, LinearNet, "hidden_layers=", "MLP")
    _fails(check_policy_net, NoActivationNet, "affine", "nonlinearity")
    _fails(check_aac_net, LinearHeadsNet, "hidden_layers=", "MLP")
    assert check_policy_net(TanhNet)
    assert check_aac_net(SharedBodyNet)


def test_trainer_check_catches_mistakes():
    _fails(check_policy_trainer, NoZeroGrad, "zero_grad")
    _fails(check_policy_trainer, NoStep, "sum of all loss")


def test_unimplemented_exercise_gets_a_friendly_message():
    class Todo(Episode):
        def calc_qvals(self, gamma):
            raise NotImplementedError()

    _fails(check_calc_qvals, Todo, "not implemented yet")


# One test per check not covered above: a typical wrong answer gets its specific hint.


def test_from_episodes_check_catches_a_missing_discount_and_wrong_dtypes():
    class NoGamma(TrainBatch):
        @classmethod
        def from_episodes(cls, episodes, gamma=0.99):
            return super().from_episodes(episodes, 1.0)

    class FloatActions(TrainBatch):
        @classmethod
        def from_episodes(cls, episodes, gamma=0.99):
            batch = super().from_episodes(episodes, gamma)
            batch.actions = batch.actions.float()
            return batch

    _fails(check_from_episodes, NoGamma, "pass gamma to calc_qvals")
    _fails(check_from_episodes, FloatActions, "torch.long")


def test_aac_net_check_catches_a_missing_value_head_and_a_shared_output():
    class ScoresOnly(AACPolicyNet):
        def forward(self, x):
            return self.actor(x)

    class ConstantValue(AACPolicyNet):
        def forward(self, x):
            scores, values = super().forward(x)
            return scores, values * 0

    _fails(check_aac_net, ScoresOnly, "a pair (action_scores, state_values)")
    _fails(check_aac_net, ConstantValue, "same outputs")


def test_aac_agent_check_catches_a_softmax_over_scores_and_value():
    class WholeOutput(AACPolicyAgent):
        def current_action_distribution(self):
            import torch

            with torch.no_grad():
                scores, values = self.p_net(self.curr_state.unsqueeze(0))
                both = torch.cat([scores, values], dim=-1)  # the value head mixed in
            return torch.softmax(both, dim=-1).squeeze(0)[:4]

    _fails(check_aac_agent, WholeOutput, "sum to 1", "apply a softmax to the action scores")


# The checks' own stand-ins (no reference solutions): they catch the same mistakes, and none of
# them could be handed in as an answer.


def test_from_episodes_check_names_a_gamma_not_passed_on():
    class DefaultGamma(TrainBatch):
        @classmethod
        def from_episodes(cls, episodes, gamma=0.99):
            return super().from_episodes(episodes, 0.99)

    _fails(check_from_episodes, DefaultGamma, "pass the gamma given to from_episodes on to calc_qvals")


def test_the_checks_stand_ins_are_no_answers():
    from course_utils.lunar.expected import StoredEpisode

    _fails(check_calc_qvals, StoredEpisode, "Episode(total_reward, experiences) raised TypeError")


def test_trainer_check_catches_a_dict_not_merged():
    class LastDictOnly(PolicyTrainer):
        def train_batch(self, batch):
            output = self.model(batch.states)
            total, info = 0.0, {}
            for loss_fn in self.loss_fns:
                loss, info = loss_fn(batch, self.loss_input(loss_fn, output))
                total = total + loss
            self.optimizer.zero_grad()
            total.backward()
            self.optimizer.step()
            return total.item(), info

    _fails(check_policy_trainer, LastDictOnly, "merge the dicts")


# Mistakes that used to slip through or get only the generic hint (issue 16).


def test_trainer_check_catches_a_train_batch_that_ignores_loss_input():
    """Passing the model's output as is works for a PolicyNet and crashes in the AAC section: the check says so now."""
    _fails(check_policy_trainer, IgnoresLossInput, "actor-critic model", "handed the pair", "self.loss_input(loss_fn, output)")
    _fails(check_policy_trainer, ScoresToEveryLoss, "needs_values = True", "only the action scores", "loss_input")


def test_aac_loss_check_names_values_of_shape_n_1_broadcast_against_q_vals():
    _fails(check_aac_loss, BroadcastAAC, "(N, N) matrix", "state_values.reshape(-1)")


@pytest.mark.parametrize(
    "check, wrong",
    [
        (check_vpg_loss, WrongAxisVanilla),
        (check_bpg_loss, WrongAxisBaseline),
        (check_entropy_loss, WrongAxisEntropy),
        (check_aac_loss, WrongAxisAAC),
    ],
    ids=lambda x: getattr(x, "__name__", ""),
)
def test_loss_checks_name_a_softmax_over_the_batch(check, wrong):
    _fails(check, wrong, "over the actions, dim=-1, not over the batch (dim=0)")
