"""Reference solutions of tutorial 3's graded exercises, harvested by `course release`
from the solution cells of solutions/03_policy_gradients.ipynb: edit the notebook, not this file.

The instructor package uses them to train checkpoints, compute expected values and run
benchmarks; the student package does not hold them."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from course_utils.lunar.harness import Experience, TrainerLoop


# Solution cell 'policy_net'
class PolicyNet(nn.Module):
    '''Observations (N, in_features) -> action scores (N, out_actions).'''

    def __init__(self, in_features, out_actions, hidden_layers=(128, 128)):
        super().__init__()
        sizes = [in_features, *hidden_layers]
        layers = []
        for a, b in zip(sizes[:-1], sizes[1:], strict=True):
            layers += [nn.Linear(a, b), nn.ReLU()]
        layers.append(nn.Linear(sizes[-1], out_actions))
        self.layers = nn.Sequential(*layers)

    def forward(self, x):
        return self.layers(x)

    @classmethod
    def build_for_env(cls, env, **hp):
        '''A PolicyNet sized for env; hp may hold hidden_layers (other keys are ignored).'''
        return cls(env.observation_space.shape[0], env.action_space.n, hidden_layers=hp.get("hidden_layers", (128, 128)))


# Solution cell 'policy_agent'
class PolicyAgent:
    '''Plays env with the policy network p_net, one step at a time.'''

    def __init__(self, env, p_net, seed=None):
        self.env = env
        self.p_net = p_net
        self.curr_state = None
        self.reset(seed)

    def reset(self, seed=None):
        state, _ = self.env.reset(seed=seed)
        self.curr_state = torch.as_tensor(state, dtype=torch.float32)

    def current_action_distribution(self):
        '''Probability of each action in self.curr_state: tensor (n_actions,) summing to 1.'''
        with torch.no_grad():
            scores = self.p_net(self.curr_state.unsqueeze(0))
        return torch.softmax(scores, dim=-1).squeeze(0)

    def step(self):
        '''Sample an action, take it, move on; returns Experience(state, action, reward, is_done).'''
        probs = self.current_action_distribution()
        action = int(torch.multinomial(probs, 1).item())
        next_state, reward, terminated, truncated, _ = self.env.step(action)
        is_done = bool(terminated or truncated)
        experience = Experience(self.curr_state, action, float(reward), is_done)
        if is_done:
            self.reset()
        else:
            self.curr_state = torch.as_tensor(next_state, dtype=torch.float32)
        return experience


# Solution cell 'calc_qvals'
class Episode:
    '''A full episode: its total_reward and its list of experiences.'''

    def __init__(self, total_reward, experiences):
        self.total_reward = total_reward
        self.experiences = experiences

    def calc_qvals(self, gamma):
        '''Discounted reward-to-go of every step: a list of floats, one per experience.'''
        qvals = []
        running = 0.0
        for experience in reversed(self.experiences):
            running = experience.reward + gamma * running
            qvals.append(running)
        return qvals[::-1]

    def __repr__(self):
        return f"Episode(total_reward={self.total_reward:.2f}, steps={len(self.experiences)})"


# Solution cell 'from_episodes'
class TrainBatch:
    '''states (N, 8), actions (N,) long, q_vals (N,), total_rewards (num_episodes,).'''

    def __init__(self, states, actions, q_vals, total_rewards):
        self.states, self.actions, self.q_vals, self.total_rewards = states, actions, q_vals, total_rewards

    @classmethod
    def from_episodes(cls, episodes, gamma=0.99):
        states, actions, q_vals = [], [], []
        for episode in episodes:
            for experience in episode.experiences:
                states.append(torch.as_tensor(experience.state, dtype=torch.float32))
                actions.append(experience.action)
            q_vals.extend(episode.calc_qvals(gamma))
        return cls(torch.stack(states), torch.tensor(actions, dtype=torch.long),
                   torch.tensor(q_vals, dtype=torch.float32),
                   torch.tensor([episode.total_reward for episode in episodes], dtype=torch.float32))

    def __len__(self):
        return len(self.q_vals)

    def __repr__(self):
        return (f"TrainBatch(states {tuple(self.states.shape)}, actions {tuple(self.actions.shape)}, "
                f"q_vals {tuple(self.q_vals.shape)}, {len(self.total_rewards)} episodes)")


# Solution cell 'score_function'
def score_function_gradient(theta, actions, rewards, baseline=0.0):
    '''Estimate of grad J(theta), J = E_{a ~ softmax(theta)}[r(a)], from S sampled actions and their rewards.

    theta: preferences, tensor (K,) that requires grad; actions: long tensor (S,); rewards: tensor (S,);
    baseline: b, a number or a one-number tensor. Returns mean_i (r_i - b) * grad log pi(a_i): tensor (K,).
    '''
    log_pi = torch.log_softmax(theta, dim=-1)[actions]  # log pi(a_i), (S,)
    weights = torch.as_tensor(rewards - baseline).detach()  # plain numbers: no gradient through r or b
    surrogate = (weights * log_pi).mean()
    (gradient,) = torch.autograd.grad(surrogate, theta)
    return gradient


# Solution cell 'vpg_loss'
class VanillaPolicyGradientLoss(nn.Module):
    def forward(self, batch, action_scores):
        log_p = torch.log_softmax(action_scores, dim=-1).gather(1, batch.actions.view(-1, 1)).squeeze(1)
        loss_p = -(batch.q_vals * log_p).mean()
        return loss_p, dict(loss_p=loss_p.item())


# Solution cell 'bpg_loss'
class BaselinePolicyGradientLoss(nn.Module):
    def forward(self, batch, action_scores):
        baseline = batch.q_vals.mean()
        log_p = torch.log_softmax(action_scores, dim=-1).gather(1, batch.actions.view(-1, 1)).squeeze(1)
        loss_p = -((batch.q_vals - baseline) * log_p).mean()
        return loss_p, dict(loss_p=loss_p.item(), baseline=baseline.item())


# Solution cell 'entropy_loss'
class ActionEntropyLoss(nn.Module):
    def __init__(self, n_actions, beta=1.0):
        super().__init__()
        self.n_actions = n_actions
        self.beta = beta
        self.max_entropy = self.calc_max_entropy()

    def calc_max_entropy(self):
        return float(np.log(self.n_actions))

    def forward(self, batch, action_scores):
        log_p = torch.log_softmax(action_scores, dim=-1)
        entropy = -(log_p.exp() * log_p).sum(dim=-1)
        loss_e = -self.beta * (entropy / self.max_entropy).mean()
        return loss_e, dict(loss_e=loss_e.item())


# Solution cell 'policy_trainer'
class PolicyTrainer(TrainerLoop):
    def train_batch(self, batch):
        output = self.model(batch.states)
        total, losses = 0.0, {}
        for loss_fn in self.loss_fns:
            loss, info = loss_fn(batch, self.loss_input(loss_fn, output))
            total = total + loss
            losses.update(info)
        self.optimizer.zero_grad()
        total.backward()
        self.optimizer.step()
        return total.item(), losses


# Solution cell 'aac_net'
class AACPolicyNet(nn.Module):
    '''Observations (N, in_features) -> (action scores (N, out_actions), state values (N, 1)).'''

    def __init__(self, in_features, out_actions, hidden_layers=(128, 128)):
        super().__init__()
        def mlp(out):
            sizes = [in_features, *hidden_layers]
            layers = []
            for a, b in zip(sizes[:-1], sizes[1:], strict=True):
                layers += [nn.Linear(a, b), nn.ReLU()]
            return nn.Sequential(*layers, nn.Linear(sizes[-1], out))

        self.actor = mlp(out_actions)
        self.critic = mlp(1)

    def forward(self, x):
        return self.actor(x), self.critic(x)

    @classmethod
    def build_for_env(cls, env, **hp):
        return cls(env.observation_space.shape[0], env.action_space.n, hidden_layers=hp.get("hidden_layers", (128, 128)))


# Solution cell 'aac_agent'
class AACPolicyAgent(PolicyAgent):
    def current_action_distribution(self):
        with torch.no_grad():
            scores, _ = self.p_net(self.curr_state.unsqueeze(0))
        return torch.softmax(scores, dim=-1).squeeze(0)


# Solution cell 'aac_loss'
class AACPolicyGradientLoss(nn.Module):
    needs_values = True

    def __init__(self, delta=1.0):
        super().__init__()
        self.delta = delta

    def forward(self, batch, model_output):
        action_scores, state_values = model_output
        state_values = state_values.reshape(-1)
        advantage = batch.q_vals - state_values.detach()
        log_p = torch.log_softmax(action_scores, dim=-1).gather(1, batch.actions.view(-1, 1)).squeeze(1)
        loss_p = -(advantage * log_p).mean()
        loss_v = ((state_values - batch.q_vals) ** 2).mean()
        loss = loss_p + self.delta * loss_v
        return loss, dict(loss_p=loss_p.item(), loss_v=loss_v.item(), adv_m=advantage.mean().item())


# Solution cell 'optional_bootstrap'
def bootstrapped_qvals(rewards, gamma, truncated, last_value):
    '''Discounted reward-to-go of every step (a list of floats); after a truncation the future is last_value.'''
    future = last_value if truncated else 0.0
    result = [0.0] * len(rewards)
    for t in range(len(rewards) - 1, -1, -1):
        future = rewards[t] + gamma * future
        result[t] = future
    return result


# Solution cell 'optional_gae'
def gae(rewards, values, next_values, ends, gamma, lam):
    '''Generalised advantage estimates of T consecutive steps of one environment: a list of T floats.'''
    advantages = [0.0] * len(rewards)
    carried = 0.0
    for t in reversed(range(len(rewards))):
        td_error = rewards[t] + gamma * next_values[t] - values[t]
        carried = td_error + gamma * lam * (1.0 - ends[t]) * carried
        advantages[t] = carried
    return advantages
