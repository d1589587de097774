"""The course lander's update step in NumPy, with its gradient written out.

Why: the lander's networks are two MLPs of 64 tanh units. On such a small network one
gradient step in PyTorch costs about 2 ms (3.1 ms with ``torch.distributions``), almost all
of it per-operation overhead of autograd and the optimizer; ``course train lunar`` takes
about 60 000 such steps. The same arithmetic written out with NumPy arrays costs a fraction
of that (``course bench lunar-update`` measures both in one run), so the lander trains live.

``NumpyActorCritic`` holds the weights of ``aac.ActorCriticNet`` in one flat float32 vector
(``theta``; each layer's weight ``(out, in)`` and bias are views into it, in the order of the
torch ``state_dict``), computes the clipped-ratio actor-critic loss of a minibatch and its
gradient by hand (``loss_and_grad``), and takes Adam steps with gradient-norm clipping,
matching ``torch.optim.Adam`` and ``nn.utils.clip_grad_norm_``. A test checks the gradient
and a whole update against PyTorch's autograd.

Shapes: ``B`` samples of a minibatch, ``d`` observation features, ``A`` = 4 actions.

The loss of a minibatch, with ``r = exp(log pi(a|s) - log mu(a|s))`` the ratio of the new
policy to the one that acted and ``A_hat`` the advantages normalised within the minibatch::

    L = -mean(min(r A_hat, clip(r, 1 - eps, 1 + eps) A_hat))        policy
        + value_coef * mean((V(s) - R)^2)                            value
        - entropy_coef * mean(H(pi(.|s)))                            entropy

Gradients used below (``p`` the action probabilities, ``onehot`` the action taken):
``d log pi(a|s) / d logits = onehot - p``; ``d H / d logits = -p * (log p + H)``; the min
passes the gradient of ``r A_hat`` unless the clipped term is the smaller and ``r`` is outside
the clip range, where the gradient is zero.
"""

from __future__ import annotations

import numpy as np


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """Log-probabilities (B, A) of action logits (B, A), computed stably (max subtracted)."""
    shifted = logits - logits.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


class NumpyActorCritic:
    """The weights of a policy MLP and a value MLP (tanh hidden layers) in one flat vector.

    ``layer_shapes`` lists ``(name, out, in)`` for every linear layer in ``state_dict`` order:
    ``policy.0``, ``policy.2``, ... then ``value.0``, ``value.2``, ... (the torch names).
    """

    def __init__(self, state_dict: dict):
        names = [k[: -len(".weight")] for k in state_dict if k.endswith(".weight")]
        self.layer_names = names
        sizes = [int(np.prod(state_dict[f"{n}.weight"].shape)) + state_dict[f"{n}.bias"].shape[0] for n in names]
        self.theta = np.zeros(sum(sizes), dtype=np.float32)
        self.grad = np.zeros_like(self.theta)
        self.weights, self.biases, self.grad_weights, self.grad_biases = [], [], [], []
        start = 0
        for n in names:
            out, inp = state_dict[f"{n}.weight"].shape
            for flat, ws, bs in ((self.theta, self.weights, self.biases), (self.grad, self.grad_weights, self.grad_biases)):
                ws.append(flat[start : start + out * inp].reshape(out, inp))
                bs.append(flat[start + out * inp : start + out * inp + out])
            start += out * inp + out
        self.load(state_dict)
        self.policy_layers = [i for i, n in enumerate(names) if n.startswith("policy.")]
        self.value_layers = [i for i, n in enumerate(names) if n.startswith("value.")]

    def load(self, state_dict: dict) -> None:
        """Copy weights from a torch ``state_dict`` (tensors or arrays) into ``theta``."""
        for i, n in enumerate(self.layer_names):
            self.weights[i][...] = np.asarray(state_dict[f"{n}.weight"], dtype=np.float32)
            self.biases[i][...] = np.asarray(state_dict[f"{n}.bias"], dtype=np.float32)

    def state_dict(self) -> dict:
        """The weights as a torch ``state_dict`` (copies), for ``ActorCriticNet.load_state_dict``."""
        import torch

        out = {}
        for i, n in enumerate(self.layer_names):
            out[f"{n}.weight"] = torch.from_numpy(self.weights[i].copy())
            out[f"{n}.bias"] = torch.from_numpy(self.biases[i].copy())
        return out

    def _forward(self, layers: list[int], x: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        """Output of an MLP and the input of each layer (tanh after every layer but the last)."""
        inputs = []
        h = x
        for k, i in enumerate(layers):
            inputs.append(h)
            h = h @ self.weights[i].T + self.biases[i]
            if k < len(layers) - 1:
                h = np.tanh(h)
        return h, inputs

    def _backward(self, layers: list[int], inputs: list[np.ndarray], grad_out: np.ndarray) -> None:
        """Write the gradient of the MLP's parameters into ``self.grad`` given d loss / d output."""
        g = grad_out
        for k in range(len(layers) - 1, -1, -1):
            i = layers[k]
            np.matmul(g.T, inputs[k], out=self.grad_weights[i])
            np.sum(g, axis=0, out=self.grad_biases[i])
            if k > 0:
                # inputs[k] = tanh(pre-activation): d tanh = 1 - tanh^2
                g = (g @ self.weights[i]) * (1.0 - inputs[k] * inputs[k])

    def forward(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Action logits (B, A) and state values (B,) of states (B, d)."""
        logits, _ = self._forward(self.policy_layers, states)
        values, _ = self._forward(self.value_layers, states)
        return logits, values[:, 0]

    def loss_and_grad(self, states, actions, old_logps, advantages, returns, clip: float | None, value_coef: float,
                      entropy_coef: float) -> float:
        """The minibatch loss (see the module docstring); its gradient is left in ``self.grad``.
        ``clip=None`` gives the plain actor-critic policy loss ``-mean(A_hat * log pi(a|s))``.

        states (B, d) float32; actions (B,) int; old_logps, advantages, returns (B,) float32.
        """
        b = states.shape[0]
        logits, p_inputs = self._forward(self.policy_layers, states)
        values, v_inputs = self._forward(self.value_layers, states)
        values = values[:, 0]
        logp_all = log_softmax(logits)
        probs = np.exp(logp_all)
        rows = np.arange(b)
        logp = logp_all[rows, actions]
        adv = (advantages - advantages.mean()) / (advantages.std(ddof=1) + 1e-8)
        if clip is None:
            policy_loss = -(adv * logp).mean()
        else:
            ratio = np.exp(logp - old_logps)
            clipped = np.clip(ratio, 1 - clip, 1 + clip)
            policy_loss = -np.minimum(ratio * adv, clipped * adv).mean()
        entropy = -(probs * logp_all).sum(axis=1)
        value_err = values - returns
        loss = policy_loss + value_coef * (value_err**2).mean() - entropy_coef * entropy.mean()

        # d loss / d logp: the unclipped branch carries the gradient except where clipping binds
        if clip is None:
            g_logp = (-adv / b).astype(np.float32)
        else:
            binds = ((adv > 0) & (ratio > 1 + clip)) | ((adv < 0) & (ratio < 1 - clip))
            g_logp = np.where(binds, 0.0, -adv * ratio / b).astype(np.float32)
        g_logits = -g_logp[:, None] * probs
        g_logits[rows, actions] += g_logp
        g_logits += (entropy_coef / b) * probs * (logp_all + entropy[:, None])
        g_values = (2.0 * value_coef / b) * value_err
        self._backward(self.policy_layers, p_inputs, g_logits.astype(np.float32))
        self._backward(self.value_layers, v_inputs, g_values[:, None].astype(np.float32))
        return float(loss)


class Adam:
    """``torch.optim.Adam`` on a flat parameter vector, with ``clip_grad_norm_`` before each step."""

    def __init__(self, theta: np.ndarray, lr: float, eps: float = 1e-5, betas=(0.9, 0.999)):
        self.theta, self.lr, self.eps, self.betas = theta, lr, eps, betas
        self.m = np.zeros_like(theta)
        self.v = np.zeros_like(theta)
        self.t = 0

    def step(self, grad: np.ndarray, max_norm: float | None = None) -> None:
        """One Adam step on ``theta`` in place; ``grad`` is first scaled to norm <= ``max_norm``."""
        if max_norm is not None:
            norm = float(np.sqrt(np.dot(grad, grad)))
            scale = max_norm / (norm + 1e-6)
            if scale < 1.0:
                grad = grad * np.float32(scale)
        b1, b2 = self.betas
        self.t += 1
        self.m *= b1
        self.m += (1 - b1) * grad
        self.v *= b2
        self.v += (1 - b2) * grad * grad
        bias1 = 1 - b1**self.t
        bias2 = 1 - b2**self.t
        denom = np.sqrt(self.v) / np.float32(np.sqrt(bias2)) + np.float32(self.eps)
        self.theta -= np.float32(self.lr / bias1) * self.m / denom
