"""The critic's own regression steps, which tutorial 3's training loop gives an actor-critic
(``TrainerLoop.train(..., critic_steps=k)``): after the student's ``train_batch``, ``k`` more
gradient steps of the critic alone on the batch's q-values, with an optimiser of its own.

Why: the student's loss moves the critic by one optimiser step per batch, and the level of the
returns moves by hundreds of reward units over a run (from about -150 while the lander crashes
to above +100 once it lands). One step per batch of 16 episodes leaves the critic's values tens
of units below the returns: the advantages ``q - v`` are then not centred, and the actor is
pushed by the level of the returns as without a baseline. More steps per batch fit how the value
varies from state to state; the level they cannot carry: Adam moves the output bias by about one
learning rate per step, so steps alone carry the level in the hidden ReLU units, many of which
end switched off for every state (with the bias set as below, still 51-60 of the last hidden
layer's 128 at the end of the stored ``aac`` runs, over 16 episodes each plays). With the
notebook's ``aac_hp`` (4 steps, learning rate 1e-2) and steps alone, the critic of seed 10 fell
behind for good (mean advantage +22 over the last 50 batches, as with one step per batch; the
run ended at 115 against 148 with the bias set); seed 11's kept up (+0.1) and ended at 122
against 137. So before each of its steps the fit sets the
bias of the value output to its least-squares value, the batch's mean of ``q - v``
(``_output_bias``: the one critic parameter that shifts every state value by its own change).

Given code that resembles an exercise (the course's exception to "no answers in the student
package", README): these steps are the value term of Exercise 8's ``aac_loss`` as optimiser steps;
they return no loss and move only the critic, so they answer no exercise.

Which parameters are the critic's: those the state values depend on and the action scores do
not (``critic_parameters``): the whole value network of two separate MLPs, or only the value
head of a network with a shared body, whose body stays the student's loss's to move.

Shapes: ``N`` samples in a batch; the model maps states (N, d) to ``(scores (N, A), values (N, 1))``.
"""

from __future__ import annotations

import torch
from torch import nn

from course_utils.lunar.numpy_policy import trace


def critic_parameters(model: nn.Module, states: torch.Tensor) -> list[nn.Parameter]:
    """The parameters of ``model`` that its state values (the second output) depend on and its
    action scores (the first) do not, found through autograd on ``states`` (N, d); ``[]`` when
    the model returns no values or they share every parameter with the scores."""
    output = model(states)
    if not (isinstance(output, tuple) and len(output) == 2):
        return []
    scores, values = output
    params = [p for p in model.parameters() if p.requires_grad]
    # the parameters in each output's graph: allow_unused gives None for a parameter not in it
    # (a structural test, so a ReLU that happens to be off for every sample still counts)
    by_scores = torch.autograd.grad(scores.sum(), params, retain_graph=True, allow_unused=True)
    by_values = torch.autograd.grad(values.sum(), params, allow_unused=True)
    return [p for p, s, v in zip(params, by_scores, by_values, strict=True) if v is not None and s is None]


class CriticFit:
    """``steps`` gradient steps of the critic's mean squared error to the q-values of a batch,
    with an Adam optimiser of its own (learning rate ``learn_rate``) over ``critic_parameters``.

    The steps come after the batch's policy update, so the advantages of that update are the
    ones the critic of the previous batches gave (not values fitted to the very returns they
    are subtracted from). ``optimizer`` is None when the model has no critic of its own.
    """

    def __init__(self, model: nn.Module, states: torch.Tensor, steps: int, learn_rate: float, centre: bool = True):
        self.model, self.steps, self.learn_rate = model, steps, learn_rate
        params = critic_parameters(model, states)
        self.params = params
        # their names in model.state_dict(): what may change while the next batch is played ahead
        self.names = [name for name, p in model.named_parameters(remove_duplicate=False) if any(p is q for q in params)]
        self.values_of = _values_alone(model, states) or (lambda states: model(states)[1])
        self.optimizer = torch.optim.Adam(params, lr=learn_rate) if params and steps > 0 else None
        # the value output's bias, set to the batch's mean error before each step (see the module's docstring)
        self.bias = _output_bias(model, states, params) if centre and self.optimizer is not None else None

    def __call__(self, batch) -> float | None:
        """Fit the critic on ``batch`` (``states`` (N, d), ``q_vals`` (N,)); returns the mean squared
        error (reward units squared) before the last step, or None if there is nothing to fit."""
        if self.optimizer is None:
            return None
        for _ in range(self.steps):
            values = self.values_of(batch.states).reshape(-1)
            if self.bias is not None:
                # the least-squares bias: v + shift has zero mean error on the batch, and so has the
                # loss's gradient with respect to the bias, which the step below then barely moves
                shift = (batch.q_vals - values).mean().detach()
                with torch.no_grad():
                    self.bias += shift
                values = values + shift
            loss = ((values - batch.q_vals) ** 2).mean()
            # autograd.grad, not backward: no gradient lands on a parameter the critic shares with
            # the actor, where the student's next train_batch would find it
            grads = torch.autograd.grad(loss, self.params)
            for param, grad in zip(self.params, grads, strict=True):
                param.grad = grad
            self.optimizer.step()
        return float(loss.detach())


def _output_bias(model: nn.Module, states: torch.Tensor, params: list[nn.Parameter]) -> nn.Parameter | None:
    """The parameter among ``params`` (the critic's) with one number whose change shifts every state
    value of ``states`` (N, d) by that same change: the bias of the value output (the last
    ``nn.Linear(..., 1)`` of the critic), or None if there is none (a network without it)."""
    with torch.no_grad():
        before = model(states)[1].reshape(-1)
        for param in params:
            if param.numel() != 1:
                continue
            kept = param.clone()
            param += 1.0
            shifted = model(states)[1].reshape(-1)
            param.copy_(kept)  # bit for bit: x + 1 - 1 need not be x
            if torch.allclose(shifted - before, torch.ones_like(before), atol=1e-4):
                return param
    return None


def _values_alone(model: nn.Module, states: torch.Tensor):
    """``model``'s state values (N, 1) without its action scores: the network traced by ``torch.fx``
    with only what its second output depends on kept (same parameters, same operations, so the same
    values to the last bit, which is checked on ``states``); None where it cannot be traced or
    differs. Why: the critic's steps need only the values, and the actor's forward over a whole
    batch was about a quarter of each step."""
    traced = trace(model)
    if traced is None:
        return None
    output = next(node for node in traced.graph.nodes if node.op == "output")
    returned = output.args[0]
    if not (isinstance(returned, tuple) and len(returned) == 2 and isinstance(returned[1], torch.fx.Node)):
        return None
    output.args = (returned[1],)
    traced.graph.eliminate_dead_code()
    traced.delete_all_unused_submodules()
    traced.recompile()
    with torch.no_grad():
        same = torch.equal(traced(states), model(states)[1])
    return traced if same else None
