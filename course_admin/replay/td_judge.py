"""The grader's oracle for tutorial 4's TD-loss check (``course_utils.replay.checks_td.TD``): what
each typical mistake gives on a case, for the hints that name it.

It computes what Exercise 4 asks (the TD errors of a Q-network on a batch), so it is instructor
code: the student's package holds none of it. The judge (``course_utils.replay.td_judge``) reads
these values for the public cases from ``assets/replay_expected.json`` (written from this module by
``course release``, ``course_admin.replay.reference``) and, in the grader, where the hidden cases
are judged, gets ``variants`` from the grader (``hidden_cases.ORACLES``). The right
values themselves come from the course's record of the reference answer (``expected``).
"""

from __future__ import annotations

import torch

from course_utils.replay.checks_td import build_q_network


def _float64(params: dict) -> torch.nn.Module:
    return build_q_network(params).double()


def _tensor(case: dict, key: str, dtype=torch.float64) -> torch.Tensor:
    return torch.tensor(case[key], dtype=dtype)


def variants(case: dict) -> dict:
    """On ``case`` (``checks_td.td_cases``' format, a linear or a one-hidden-layer Q-network), in
    float64 as plain lists: ``delta`` (B,), the TD errors ``target - Q(s, a)`` of a right answer;
    ``unmasked_delta`` (B,), the same without the terminal mask; ``undetached_grads``, the
    gradient of the right loss on every parameter of the Q-network (in ``parameters()`` order, each
    flattened) when the gradient also flows through the target (None unless the target network is
    the Q-network itself, the only case where that changes anything)."""
    q_net = _float64(case["q"])
    target_net = q_net if case["same_net"] else _float64(case["target"])
    obs, next_obs = _tensor(case, "obs"), _tensor(case, "next_obs")
    acts = _tensor(case, "acts", torch.int64)
    rews, done, weights = _tensor(case, "rews"), _tensor(case, "done"), _tensor(case, "weights")

    def deltas(mask: bool, detached: bool) -> torch.Tensor:
        q_taken = q_net(obs).gather(1, acts.unsqueeze(1)).squeeze(1)
        next_q = target_net(next_obs).max(dim=1).values
        if detached:
            next_q = next_q.detach()
        alive = 1.0 - done if mask else torch.ones_like(done)
        return rews + case["gamma"] * alive * next_q - q_taken

    with torch.no_grad():
        delta, unmasked = deltas(True, True), deltas(False, True)
    undetached = None
    if case["same_net"]:
        through = deltas(True, False)
        loss = (weights * torch.nn.functional.smooth_l1_loss(through, torch.zeros_like(through), reduction="none")).mean()
        undetached = [g.reshape(-1).tolist() for g in torch.autograd.grad(loss, list(q_net.parameters()))]
    return {"delta": delta.tolist(), "unmasked_delta": unmasked.tolist(), "undetached_grads": undetached}
