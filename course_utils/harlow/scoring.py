"""Scoring many Harlow agents at once: every (agent, task) pair a row of one batch, trained and
evaluated as ``train_evaluate_agent`` trains and evaluates one agent on one task.

Given code the tutorial cannot run without (the course's exception to "no answers in the student
package", see the README's instructor section): the batched form of tutorial 1's LSTM A2C inner
loop (``train_evaluate_agent``), which the notebook's initial population, its live evolutions
(run on the student's own ``update_population`` and ``lamarckian_individual``) and the comparisons
of Sections 4 and 5 need: one agent at a time they would take hours. ``evaluate_population``
resembles Exercise 1 (``evaluate_individual``) done for a whole population; the A2C loss's
gradient is written out inside the batched net's backward pass (``_BatchedNet.a2c_backward``), not
as a loss function. It holds no genetic-algorithm operator: offspring, replacement and the Lamarckian
write-back are the student's, selection the notebook's (the course's own engine is
``course_admin.harlow.batch``).

Every pair is a row of a batch of ``P`` pairs:

- the weights are tensors with a leading pair dimension, e.g. ``rnn.weight_hh`` (P, 4H, H);
  the LSTM cell is written out by hand with ``torch.baddbmm`` (gate order i, f, g, o, as in
  ``nn.LSTMCell``);
- ``VectorHarlowEnv`` plays P Harlow tasks with NumPy arrays;
- the loss is the SUM of the P pairs' A2C losses, so each pair's weights get exactly their
  own gradient, and RMSprop (elementwise: alpha 0.99, eps 1e-5, one learning rate per pair)
  updates every pair as if it had its own optimizer.

It computes the same thing as ``train_evaluate_agent`` pair by pair, with a different stream of
random numbers, so scores agree in distribution (``tests/harlow/test_batch.py``).
"""

from __future__ import annotations

import numpy as np
import torch

from course_utils.harlow.agent import DEFAULT_HYPERPARAMETERS, N_INPUTS, ActorCritic
from course_utils.harlow.env import VectorHarlowEnv

HYPER_NAMES = tuple(DEFAULT_HYPERPARAMETERS)
"""Column order of the (P, 4) hyperparameter arrays: learning_rate, gamma, value_cost, entropy_cost."""

RMSPROP_ALPHA, RMSPROP_EPS = 0.99, 1e-5


def stack_agents(agents: list[ActorCritic]) -> tuple[dict[str, torch.Tensor], np.ndarray]:
    """Weights of N agents as ``{name: (N, ...)}`` and their hyperparameters as (N, 4) float64."""
    states = [agent.state_dict() for agent in agents]
    params = {name: torch.stack([s[name].detach() for s in states]).clone() for name in states[0]}
    hypers = np.array([[agent.hyperparameters()[k] for k in HYPER_NAMES] for agent in agents], dtype=np.float64)
    return params, hypers


def fresh_agents(size: int, generator: torch.Generator) -> list[ActorCritic]:
    """``size`` fresh agents (PyTorch's default initialisation from ``generator``, default
    hyperparameters); torch's global generator is left as it was."""
    state = torch.random.get_rng_state()
    torch.random.set_rng_state(generator.get_state())
    try:
        return [ActorCritic() for _ in range(size)]
    finally:
        generator.set_state(torch.random.get_rng_state())
        torch.random.set_rng_state(state)


class _BatchedNet:
    """The agent's forward and backward passes for P pairs at once, from stacked weights.

    The embedding is folded into the LSTM's input weights once per gradient step
    (``W_x = W_ih @ W_e``) and the critic and actor heads are one (H, 3) matrix. Weights are
    kept transposed so that every product is a row vector times a matrix,
    (P, 1, n) @ (P, n, m), several times faster on a CPU than (P, m, n) @ (P, n, 1) here.

    Works with autograd (the tests check ``a2c_backward`` against it) or without it: ``a2c_backward``
    computes the gradient of the summed A2C losses by hand, through time, in a few batched products.
    """

    def __init__(self, p: dict[str, torch.Tensor]):
        self.p = p
        w_e, b_e, w_ih = p["embedding.weight"], p["embedding.bias"], p["rnn.weight_ih"]
        w_x = torch.bmm(w_ih, w_e)  # (P, 4H, 5)
        self.w = torch.cat([w_x, p["rnn.weight_hh"]], dim=2).transpose(1, 2).contiguous()  # (P, 5 + H, 4H)
        self.b = torch.bmm(b_e.unsqueeze(1), w_ih.transpose(1, 2)).squeeze(1) + p["rnn.bias_ih"] + p["rnn.bias_hh"]
        self.w_head = torch.cat([p["critic.weight"], p["actor.weight"]], dim=1).transpose(1, 2).contiguous()  # (P, H, 3)
        self.b_head = torch.cat([p["critic.bias"], p["actor.bias"]], dim=1)
        self.hidden = p["rnn.weight_hh"].shape[2]
        self.cache: list | None = None

    def initial_state(self, num_pairs: int):
        zeros = torch.zeros(num_pairs, self.hidden)
        return zeros, zeros

    def __call__(self, x: torch.Tensor, state):
        """x (P, 5), state (h, c) each (P, H) -> value (P,), logits (P, 2), new state."""
        h_prev, c_prev = state
        z = torch.cat([x, h_prev], dim=1)
        gates = torch.bmm(z.unsqueeze(1), self.w).squeeze(1) + self.b
        H = self.hidden
        s = torch.sigmoid(gates)
        i, f, o = s[:, :H], s[:, H : 2 * H], s[:, 3 * H :]
        g = torch.tanh(gates[:, 2 * H : 3 * H])
        c = f * c_prev + i * g
        tanh_c = torch.tanh(c)
        h = o * tanh_c
        out = torch.bmm(h.unsqueeze(1), self.w_head).squeeze(1) + self.b_head
        if self.cache is not None:
            self.cache.append((z, i, f, g, o, c_prev, tanh_c, h))
        return out[:, 0], out[:, 1:], (h, c)

    def a2c_backward(self, values, logits, actions, rewards: np.ndarray, hypers: np.ndarray) -> dict[str, torch.Tensor]:
        """Gradients of the weights for the summed A2C losses of the P pairs' T cached steps: the
        loss's gradient with respect to the outputs, written out (values (P, T), logits (P, T, 2),
        actions (P, T), rewards (P, T) float32, hypers (P, 4)), then ``backward``.

        Per pair the loss is train_evaluate_agent's: mean over the trials of
        -log pi(a_t) * A_t (A_t detached) + value_cost * A_t^2 - entropy_cost * entropy_t, with
        A_t = Q_t - V_t and Q_t = r_t + gamma * Q_(t+1) (float32, from the last trial back)."""
        P, T = actions.shape
        h = torch.from_numpy(hypers.astype(np.float32))
        value_cost, entropy_cost = h[:, 2:3], h[:, 3:4]
        gamma = hypers[:, 1].astype(rewards.dtype)
        q, running = np.empty_like(rewards), np.zeros(P, dtype=rewards.dtype)
        for t in range(T - 1, -1, -1):
            running = rewards[:, t] + gamma * running
            q[:, t] = running
        advantage = torch.from_numpy(q) - values  # (P, T)
        log_probs = torch.log_softmax(logits, dim=2)
        probs = log_probs.exp()
        entropy = -(probs * log_probs).sum(2, keepdim=True)
        one_hot = torch.zeros(P, T, 2).scatter_(2, actions.unsqueeze(2), 1.0)
        d_logits = -(one_hot - probs) * advantage.unsqueeze(2) + entropy_cost.unsqueeze(2) * probs * (log_probs + entropy)
        d_value = -2.0 * value_cost * advantage
        return self.backward(torch.cat([d_value.unsqueeze(2), d_logits], dim=2) / T)

    def backward(self, d_out: torch.Tensor) -> dict[str, torch.Tensor]:
        """Gradients of the weights, given the loss's gradient with respect to the outputs
        ``d_out`` (P, T, 3) (value, logit left, logit right) of the T cached steps."""
        P, T, _ = d_out.shape
        H = self.hidden
        z_all = torch.stack([step[0] for step in self.cache], 1)  # (P, T, 5 + H)
        h_all = torch.stack([step[7] for step in self.cache], 1)  # (P, T, H)
        d_w_head = torch.bmm(h_all.transpose(1, 2), d_out)  # (P, H, 3)
        d_h_all = torch.bmm(d_out, self.w_head.transpose(1, 2))  # (P, T, H)
        w_h_t = self.w[:, N_INPUTS:, :].transpose(1, 2)  # (P, 4H, H)
        d_gates = torch.empty(P, T, 4 * H)
        d_h_next = torch.zeros(P, H)
        d_c_next = torch.zeros(P, H)
        for t in range(T - 1, -1, -1):
            _, i, f, g, o, c_prev, tanh_c, _ = self.cache[t]
            d_h = d_h_all[:, t] + d_h_next
            d_c = d_h * o * (1 - tanh_c * tanh_c) + d_c_next
            d_gates[:, t, :H] = d_c * g * i * (1 - i)
            d_gates[:, t, H : 2 * H] = d_c * c_prev * f * (1 - f)
            d_gates[:, t, 2 * H : 3 * H] = d_c * i * (1 - g * g)
            d_gates[:, t, 3 * H :] = d_h * tanh_c * o * (1 - o)
            d_c_next = d_c * f
            if t:
                d_h_next = torch.bmm(d_gates[:, t].unsqueeze(1), w_h_t).squeeze(1)
        d_w = torch.bmm(z_all.transpose(1, 2), d_gates)  # (P, 5 + H, 4H)
        d_b = d_gates.sum(1)  # (P, 4H)
        p = self.p
        d_w_x = d_w[:, :N_INPUTS, :].transpose(1, 2)  # (P, 4H, 5)
        b_e = p["embedding.bias"]
        return {
            "embedding.weight": torch.bmm(p["rnn.weight_ih"].transpose(1, 2), d_w_x),
            "embedding.bias": torch.bmm(d_b.unsqueeze(1), p["rnn.weight_ih"]).squeeze(1),
            "rnn.weight_ih": torch.bmm(d_w_x, p["embedding.weight"].transpose(1, 2)) + d_b.unsqueeze(2) * b_e.unsqueeze(1),
            "rnn.weight_hh": d_w[:, N_INPUTS:, :].transpose(1, 2),
            "rnn.bias_ih": d_b,
            "rnn.bias_hh": d_b,
            "critic.weight": d_w_head[:, :, :1].transpose(1, 2),
            "critic.bias": d_out[:, :, 0].sum(1, keepdim=True),
            "actor.weight": d_w_head[:, :, 1:].transpose(1, 2),
            "actor.bias": d_out[:, :, 1:].sum(1),
        }


def _inputs(obs: np.ndarray, prev_reward: np.ndarray, prev_action: np.ndarray | None) -> torch.Tensor:
    x = np.zeros((obs.shape[0], N_INPUTS), dtype=np.float32)
    x[:, :2] = obs
    x[:, 2] = prev_reward
    if prev_action is not None:
        x[np.arange(obs.shape[0]), 3 + prev_action] = 1.0
    return torch.from_numpy(x)


def _play(net, env, num_trials, obs, rng, record: bool):
    """Play ``num_trials`` trials for all pairs from a fresh state. Returns the last
    observation, the rewards (P, T), correctness (P, T) and, if ``record``, the values
    (P, T), logits (P, T, 2) and actions (P, T) of the loss (the net caches the rest)."""
    P = env.num_envs
    state = net.initial_state(P)
    net.cache = [] if record else None
    prev_reward, prev_action = np.zeros(P, dtype=np.float32), None
    rewards = np.zeros((P, num_trials), dtype=np.float32)
    correct = np.zeros((P, num_trials), dtype=bool)
    values, logits, actions = [], [], []
    uniforms = rng.random((num_trials, P))
    for t in range(num_trials):
        value, lg, state = net(_inputs(obs, prev_reward, prev_action), state)
        lg_np = lg.numpy()
        p_right = 1.0 / (1.0 + np.exp(lg_np[:, 0] - lg_np[:, 1]))
        action = (uniforms[t] < p_right).astype(np.int64)
        rewards[:, t], correct[:, t] = env.step(action)
        obs = env.observation()
        prev_reward, prev_action = rewards[:, t], action
        if record:
            values.append(value)
            logits.append(lg)
            actions.append(action)
    if record:
        return obs, rewards, correct, (torch.stack(values, 1), torch.stack(logits, 1), torch.from_numpy(np.stack(actions, 1)))
    return obs, rewards, correct, None


def rmsprop_step(flat: torch.Tensor, square_avg: torch.Tensor, grad: torch.Tensor, lr: torch.Tensor) -> None:
    """``torch.optim.RMSprop`` (alpha 0.99, eps 1e-5, no momentum) for P pairs in place:
    weights and their running mean squared gradients (P, D), gradients (P, D), one
    learning rate per pair (P, 1)."""
    square_avg.mul_(RMSPROP_ALPHA).addcmul_(grad, grad, value=1 - RMSPROP_ALPHA)
    flat.sub_(lr * grad / (square_avg.sqrt() + RMSPROP_EPS))


def flatten(params: dict[str, torch.Tensor]) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """A copy of stacked weights as one flat (P, D) tensor, and views of it by name."""
    names = list(params)
    P = params[names[0]].shape[0]
    sizes = [params[n][0].numel() for n in names]
    flat = torch.cat([params[n].detach().reshape(P, -1) for n in names], dim=1).clone()
    views = {n: v.view(params[n].shape) for v, n in zip(flat.split(sizes, 1), names, strict=True)}
    return flat, views


def train_evaluate_pairs(
    params: dict[str, torch.Tensor],
    hypers: np.ndarray,
    rng: np.random.Generator,
    num_gradient_steps: int = 25,
    num_trials: int = 6,
    num_evaluation_trials: int = 20,
    digits: tuple[np.ndarray, np.ndarray] | None = None,
    learned: dict[str, torch.Tensor] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``train_evaluate_agent`` for P pairs at once, each on its own new task (drawn at
    random, or given as ``digits``: arrays (P,) of rewarded and punished digits).

    ``params``: stacked weights ``{name: (P, ...)}`` (not changed: training works on a copy);
    ``hypers``: (P, 4). Returns the scores (P,) and whether each trial chose the rewarded
    digit (P, num_gradient_steps * num_trials + num_evaluation_trials), booleans: the
    training trials in order, then the evaluation trials. Pass a dict as ``learned`` to get
    the trained weights ``{name: (P, ...)}`` in it (what a Lamarckian individual passes on).

    All weights live in one flat (P, D) tensor, so RMSprop is a handful of operations.
    """
    P = hypers.shape[0]
    flat, views = flatten(params)
    square_avg = torch.zeros_like(flat)
    lr = torch.from_numpy(hypers[:, :1].astype(np.float32))
    env = VectorHarlowEnv(P, rng, digits)
    obs = env.observation()
    correct = []
    with torch.no_grad():
        for _ in range(num_gradient_steps):
            net = _BatchedNet(views)
            obs, rewards, step_correct, (values, logits, actions) = _play(net, env, num_trials, obs, rng, record=True)
            grads = net.a2c_backward(values, logits, actions, rewards, hypers)
            rmsprop_step(flat, square_avg, torch.cat([grads[n].reshape(P, -1) for n in views], dim=1), lr)
            correct.append(step_correct)
        _, rewards, step_correct, _ = _play(_BatchedNet(views), env, num_evaluation_trials, obs, rng, record=False)
    if learned is not None:
        learned.update({name: view.clone() for name, view in views.items()})
    return rewards.sum(1), np.concatenate(correct + [step_correct], axis=1)


def evaluate_population(
    params: dict[str, torch.Tensor],
    hypers: np.ndarray,
    rng: np.random.Generator,
    num_tasks: int = 10,
    chunk: int = 1000,
    same_tasks: bool = False,
    learned: dict[str, torch.Tensor] | None = None,
    learned_per_task: dict[str, torch.Tensor] | None = None,
    **settings,
) -> np.ndarray:
    """Baldwinian fitness of N individuals: scores (N, num_tasks), each individual trained
    afresh on each of ``num_tasks`` new tasks (like ``evaluate_individual``, batched).
    With ``same_tasks`` every individual meets the same ``num_tasks`` digit pairs.

    Pass a dict as ``learned`` to get what each individual learned in it: the mean of the
    weights its ``num_tasks`` trained copies ended with, ``{name: (N, ...)}``; as
    ``learned_per_task``, to get each copy's own, ``{name: (N, num_tasks, ...)}``."""
    N = hypers.shape[0]
    pair_params = {name: p.repeat_interleave(num_tasks, dim=0) for name, p in params.items()}
    pair_hypers = np.repeat(hypers, num_tasks, axis=0)
    digits = None
    if same_tasks:
        rewarded = rng.integers(0, 10, num_tasks)
        punished = (rewarded + rng.integers(1, 10, num_tasks)) % 10
        digits = (np.tile(rewarded, N), np.tile(punished, N))
    scores = np.zeros(N * num_tasks, dtype=np.float32)
    wanted = learned is not None or learned_per_task is not None
    trained = {name: torch.empty_like(p) for name, p in pair_params.items()} if wanted else None
    for start in range(0, N * num_tasks, chunk):
        part = slice(start, start + chunk)
        sub = {name: p[part] for name, p in pair_params.items()}
        part_digits = None if digits is None else (digits[0][part], digits[1][part])
        part_learned = None if trained is None else {}
        scores[part] = train_evaluate_pairs(sub, pair_hypers[part], rng, digits=part_digits, learned=part_learned,
                                            **settings)[0]
        if trained is not None:
            for name, p in part_learned.items():
                trained[name][part] = p
    if learned is not None:
        learned.update({name: p.reshape(N, num_tasks, *p.shape[1:]).mean(1) for name, p in trained.items()})
    if learned_per_task is not None:
        learned_per_task.update({name: p.reshape(N, num_tasks, *p.shape[1:]) for name, p in trained.items()})
    return scores.reshape(N, num_tasks)
