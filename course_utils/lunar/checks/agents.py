"""Exercise checks of tutorial 3 (policy gradients on LunarLander), exercises 1-5: the policy
network, the agent, ``monitor_episode``, ``Episode.calc_qvals``, ``TrainBatch.from_episodes``
and the episode-batch generator.

Every check tests one piece in isolation: where a piece needs others (an agent needs a
network, a batch needs episodes), the check supplies its own stand-ins (fixed-score networks,
a greedy agent, a scripted agent, the stored episodes), so a student who skipped an early
exercise still gets credit for the later ones. Expected numbers and the stored episodes come
from ``assets/lunar_expected.json`` (``course_utils.lunar.expected``). Nothing here uses the
reference solutions (``course_utils.lunar.solutions``), which students do not get.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from course_utils.checking import Problem, call_student, fmt, verdict
from course_utils.lunar.checks.common import _close, _FakeEnv, _tensor
from course_utils.lunar.env import make_env
from course_utils.lunar.expected import expected_batch, load_expected
from course_utils.lunar.harness import Experience

# ---------------------------------------------------------------------------------------------
# 1. PolicyNet


def check_policy_net(PolicyNet, strict: bool = False) -> bool:
    """``PolicyNet.build_for_env(env, **hp)`` -> module mapping (N, obs) to action scores (N, actions)."""

    def check():
        env = make_env()
        torch.manual_seed(0)
        net = call_student("PolicyNet.build_for_env(env)", PolicyNet.build_for_env, env)
        env.close()
        if not isinstance(net, nn.Module):
            raise Problem(f"build_for_env should return a PolicyNet (an nn.Module), got {type(net).__name__}.")
        params = list(net.parameters())
        if not params:
            raise Problem("your network has no parameters to learn. Build layers (nn.Linear, ...) in __init__.")
        x = torch.randn(5, 8)
        scores = _tensor("the output for a batch of 5 observations", call_student("net(x)", net, x), (5, 4))
        if torch.allclose(scores[0], scores[1]):
            raise Problem("different observations gave the same action scores: does forward use its input?")
        if torch.all(scores >= 0) and torch.allclose(scores.sum(-1), torch.ones(5), atol=1e-4):
            raise Problem(
                "the output looks like probabilities. Return raw scores (logits): no softmax at the end; "
                "the losses and the agent apply the softmax themselves."
            )
        scores.sum().backward()
        if all(p.grad is None or not p.grad.any() for p in params):
            raise Problem("no gradient reaches the parameters: do not detach the output or wrap forward in torch.no_grad().")
        other = call_student(
            "PolicyNet.build_for_env(env with 3 observations, 2 actions)", PolicyNet.build_for_env, _FakeEnv(3, 2)
        )
        out = call_student("net(x)", other, torch.randn(7, 3))
        _tensor("for an environment with 3 observations and 2 actions, the output", out, (7, 2))

    return verdict("PolicyNet", check, strict)


# ---------------------------------------------------------------------------------------------
# 2. PolicyAgent


class _FixedScores(nn.Module):
    """A 'network' returning the same action scores for every state (shape (N, 4))."""

    def __init__(self, scores):
        super().__init__()
        self.scores = torch.as_tensor(scores, dtype=torch.float32)

    def forward(self, x):
        return self.scores.expand(x.shape[0], -1).clone() if x.dim() == 2 else self.scores.clone()


def _linear_net(seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Linear(8, 4)


def check_agent_distribution(PolicyAgent, strict: bool = False, aac: bool = False) -> bool:
    """``PolicyAgent(env, p_net).current_action_distribution()`` -> probabilities (4,) summing to 1."""
    name = "AACPolicyAgent" if aac else "PolicyAgent"

    def check():
        for seed in range(5):
            env = make_env()
            linear = _linear_net(seed)
            net = _PairNet(linear) if aac else linear
            agent = call_student(f"{name}(env, p_net, seed={seed})", PolicyAgent, env, net, seed)
            state = torch.as_tensor(env.reset(seed=seed)[0])
            agent.curr_state = state.clone()
            d = call_student("current_action_distribution()", agent.current_action_distribution)
            d = _tensor("current_action_distribution()", d)
            d = d.detach().reshape(-1)
            if d.numel() != 4:
                raise Problem(f"expected 4 probabilities (one per action), got {d.numel()} values.")
            if (d < 0).any() or not _close(d.sum(), 1.0, 1e-5):
                raise Problem(
                    f"the probabilities {fmt(d)} should be non-negative and sum to 1 (they sum to "
                    f"{float(d.sum()):.4f}). Hint: apply a softmax to the action scores."
                )
            expected = torch.softmax(linear(state), -1).detach()
            if not torch.allclose(d, expected, atol=1e-5):
                raise Problem(
                    f"in state {fmt(state)} the network's scores give probabilities {fmt(expected)}, "
                    f"you returned {fmt(d)}. Use self.p_net on self.curr_state"
                    + (" and take the action scores, the first of the network's two outputs." if aac else ".")
                )
            env.close()

    return verdict(f"{name}.current_action_distribution", check, strict)


class _PairNet(nn.Module):
    """Wrap a scores network as an AAC network returning (scores, zero values (N, 1))."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        scores = self.net(x)
        return scores, torch.zeros(*scores.shape[:-1], 1)


def check_agent_step(PolicyAgent, strict: bool = False) -> bool:
    """``step()`` samples an action, steps the env and returns ``Experience(state, action, reward, is_done)``."""

    def check():
        # A network that always prefers one action makes the episode predictable.
        for action in (2, 0):
            scores = torch.full((4,), -30.0)
            scores[action] = 30.0
            env = make_env()
            twin = make_env()
            agent = call_student("PolicyAgent(env, p_net, seed=3)", PolicyAgent, env, _FixedScores(scores), 3)
            twin_state = twin.reset(seed=3)[0]
            agent.reset(3) if hasattr(agent, "reset") else None
            for t in range(400):
                exp = call_student("step()", agent.step)
                if not (isinstance(exp, tuple) and hasattr(exp, "is_done") and hasattr(exp, "state")):
                    raise Problem(f"step() should return an Experience(state, action, reward, is_done), got {exp!r}.")
                state = np.asarray(exp.state, dtype=np.float32).reshape(-1)
                if not np.allclose(state, twin_state, atol=1e-5):
                    raise Problem(
                        f"at step {t} the Experience's state {fmt(state)} is not the state the action was "
                        f"taken in, {fmt(twin_state)}. Record self.curr_state before moving on to the next state."
                    )
                if int(exp.action) != action:
                    raise Problem(
                        f"with probability ~1 for action {action} your agent took action {exp.action}. "
                        "Sample from current_action_distribution()."
                    )
                twin_state, reward, terminated, truncated, _ = twin.step(action)
                if not _close(exp.reward, reward, 1e-5):
                    raise Problem(f"at step {t} the reward should be {reward:.4f}, got {exp.reward!r}.")
                if bool(exp.is_done) != bool(terminated or truncated):
                    raise Problem(
                        f"at step {t} is_done should be {bool(terminated or truncated)}: an episode ends "
                        "when the environment says terminated OR truncated."
                    )
                if terminated or truncated:
                    break
            else:
                raise Problem("the episode never ended.")
            after = np.asarray(agent.curr_state, dtype=np.float32).reshape(-1)
            if after.shape != (8,) or np.allclose(after, state, atol=1e-6):
                raise Problem("after the last step of an episode the agent should start a new one: call self.reset().")
            env.close()
            twin.close()
        # Sampling, not argmax: with uniform scores all four actions should appear.
        env = make_env()
        torch.manual_seed(0)
        np.random.seed(0)
        agent = call_student("PolicyAgent(env, p_net, seed=0)", PolicyAgent, env, _FixedScores(torch.zeros(4)), 0)
        actions = {int(call_student("step()", agent.step).action) for _ in range(60)}
        env.close()
        if len(actions) < 3:
            raise Problem(
                f"with equal scores for all actions, 60 steps only used actions {sorted(actions)}. "
                "Sample the action from the distribution instead of taking the most probable one."
            )

    return verdict("PolicyAgent.step", check, strict)


# ---------------------------------------------------------------------------------------------
# 3. monitor_episode


class _GreedyAgent:
    """The check's agent for ``monitor_episode``: ``_GreedyAgent(env, p_net, seed)`` steps ``env``
    with the network's most probable action. It never samples, so it is no answer to exercise 2."""

    def __init__(self, env, p_net, seed=None):
        self.env, self.p_net = env, p_net
        self.curr_state = torch.as_tensor(env.reset(seed=seed)[0], dtype=torch.float32)

    def step(self) -> Experience:
        with torch.no_grad():
            choice = int(self.p_net(self.curr_state[None]).flatten().argmax())
        observation, reward, *ends, _ = self.env.step(choice)
        record = Experience(self.curr_state, choice, float(reward), any(ends))
        self.curr_state = torch.as_tensor(self.env.reset()[0] if any(ends) else observation, dtype=torch.float32)
        return record


def check_monitor_episode(monitor_episode, strict: bool = False) -> bool:
    """``monitor_episode(p_net, seed, agent_type)`` -> (frames, n_steps, total_reward), with the check's greedy agent."""

    def check():
        scores = torch.tensor([30.0, -30.0, -30.0, -30.0])  # always "do nothing": a free fall
        frames, n_steps, total = _result(
            call_student(
                "monitor_episode(p_net, seed=5, agent_type=PolicyAgent)",
                monitor_episode,
                _FixedScores(scores),
                seed=5,
                agent_type=_GreedyAgent,
            )
        )
        env = make_env()
        env.reset(seed=5)
        expected_total, expected_steps = 0.0, 0
        while True:
            _, reward, terminated, truncated, _ = env.step(0)
            expected_total += reward
            expected_steps += 1
            if terminated or truncated:
                break
        env.close()
        if n_steps != expected_steps:
            raise Problem(
                f"a free fall from seed 5 lasts {expected_steps} steps, you counted {n_steps}. "
                "Step until the Experience says is_done."
            )
        if not _close(total, expected_total, 1e-4):
            raise Problem(f"its total reward is {expected_total:.2f}, you returned {total:.2f}. Add up every reward.")
        if not expected_steps - 1 <= len(frames) <= expected_steps + 1:
            raise Problem(
                f"expected about one frame per step ({expected_steps}), got {len(frames)}. "
                "Call env.render() after each step and keep the frame."
            )
        frame = np.asarray(frames[-1])
        if frame.ndim != 3 or frame.shape[2] != 3:
            raise Problem(
                f"frames should be RGB images (height, width, 3), got shape {frame.shape}. "
                'Make the environment with render_mode="rgb_array".'
            )
        if np.array_equal(np.asarray(frames[0]), frame):
            raise Problem("the first and last frames are identical: render after each step, not once.")

    return verdict("monitor_episode", check, strict)


def _result(value):
    if not (isinstance(value, tuple) and len(value) == 3):
        raise Problem(f"monitor_episode should return (frames, n_steps, total_reward), got {type(value).__name__}.")
    frames, n_steps, total = value
    try:
        return list(frames), int(n_steps), float(total)
    except (TypeError, ValueError):
        raise Problem(f"monitor_episode returned {value!r:.200}: expected a list of frames, an int and a number.") from None


# ---------------------------------------------------------------------------------------------
# 4. Episode.calc_qvals


def check_calc_qvals(Episode, strict: bool = False) -> bool:
    """``Episode(total_reward, experiences).calc_qvals(gamma)`` -> discounted reward-to-go, one per step."""

    def qvals_of(rewards, gamma):
        experiences = [Experience(None, None, float(r), i == len(rewards) - 1) for i, r in enumerate(rewards)]
        episode = call_student("Episode(total_reward, experiences)", Episode, float(sum(rewards)), experiences)
        got = call_student(f"calc_qvals({gamma})", episode.calc_qvals, gamma)
        try:
            return np.asarray([float(q) for q in got])
        except (TypeError, ValueError):
            raise Problem(f"calc_qvals should return a list of numbers, got {got!r:.200}.") from None

    def compare(rewards, gamma, expected, description):
        got = qvals_of(rewards, gamma)
        expected = np.asarray(expected, dtype=float)
        if got.shape != expected.shape:
            raise Problem(f"for {description}, expected {len(expected)} q-values (one per step), got {got.size}.")
        if np.allclose(got, expected, atol=1e-3, rtol=1e-5):
            return
        rewards = np.asarray(rewards, dtype=float)
        forward = np.array([sum(gamma**k * r for k, r in enumerate(rewards[: t + 1][::-1])) for t in range(len(rewards))])
        if np.allclose(got[::-1], expected, atol=1e-3):
            hint = "your q-values are in reverse order: q_0 belongs to the first step."
        elif np.allclose(got, forward, atol=1e-3):
            hint = "you discounted the past rewards; q_t adds the rewards from step t to the END of the episode."
        elif np.allclose(got, np.cumsum(rewards[::-1])[::-1], atol=1e-3):
            hint = "you forgot the discount: q_t = r_t + gamma * q_(t+1)."
        elif np.allclose(got, expected - rewards, atol=1e-3) or np.allclose(got, gamma * expected, atol=1e-3):
            hint = "the reward of step t itself counts without discount: q_t = r_t + gamma * q_(t+1)."
        else:
            hint = "work backwards from the last step: q_t = r_t + gamma * q_(t+1), with q after the end = 0."
        raise Problem(f"for {description}: expected {fmt(expected)}, got {fmt(got)}. Hint: {hint}")

    def check():
        compare([0.0, 0.0, 10.0], 0.9, [8.1, 9.0, 10.0], "rewards [0, 0, 10] with gamma 0.9")
        compare([1.0, 1.0, 1.0], 0.5, [1.75, 1.5, 1.0], "rewards [1, 1, 1] with gamma 0.5")
        compare([-3.0], 0.99, [-3.0], "a one-step episode")
        data = load_expected()["calc_qvals"]
        compare(data["rewards"], data["gamma"], data["qvals"], "100 stored random rewards, gamma 0.9")

    return verdict("Episode.calc_qvals", check, strict)


# ---------------------------------------------------------------------------------------------
# 5. TrainBatch.from_episodes and the episode-batch generator


def check_from_episodes(TrainBatch, strict: bool = False) -> bool:
    """``TrainBatch.from_episodes(episodes, gamma)`` on the stored episodes (``expected.StoredEpisode``: ``experiences``,
    ``total_reward`` and ``calc_qvals(gamma)`` returning the stored q-values)."""

    def check():
        expected = load_expected()
        episodes, ref, _, _ = expected_batch(expected)
        batch = call_student("TrainBatch.from_episodes(episodes, 0.9)", TrainBatch.from_episodes, episodes, 0.9)
        n = len(ref)
        states = _tensor("batch.states", batch.states, (n, 8))
        actions = _tensor("batch.actions", batch.actions, (n,))
        q_vals = _tensor("batch.q_vals", batch.q_vals, (n,))
        totals = _tensor("batch.total_rewards", batch.total_rewards, (4,))
        if not torch.allclose(states.float(), ref.states):
            raise Problem("batch.states should stack the states of all experiences, episode after episode, in order.")
        if actions.dtype not in (torch.int64, torch.int32) or not torch.equal(actions.long(), ref.actions):
            raise Problem("batch.actions should hold the actions (integers, dtype torch.long) in order.")
        if not torch.allclose(q_vals.float(), ref.q_vals, atol=1e-4):
            hint = ""
            if torch.allclose(q_vals.float(), TrainBatch_qvals(episodes, 1.0), atol=1e-3):
                hint = " Hint: pass gamma to calc_qvals."
            raise Problem(
                f"batch.q_vals should be each episode's calc_qvals(gamma), concatenated: expected starting "
                f"{fmt(ref.q_vals[:3])}, got {fmt(q_vals[:3])}.{hint}"
            )
        if not torch.allclose(totals.float(), ref.total_rewards, atol=1e-4):
            raise Problem(
                f"batch.total_rewards should be each episode's total_reward: {fmt(ref.total_rewards)}, got {fmt(totals)}."
            )

    return verdict("TrainBatch.from_episodes", check, strict)


def TrainBatch_qvals(episodes, gamma):
    return torch.tensor([q for ep in episodes for q in ep.calc_qvals(gamma)], dtype=torch.float32)


class _ScriptedAgent:
    """The check's agent for the episode-batch generator: no environment, ``step()`` returns the
    ``Experience`` of a fixed script of episodes, one after the other and round again.

    The episodes have different lengths (one of a single step) and rewards, ``is_done`` only on
    each one's last step, and a large last reward (a landing or a crash), as LunarLander's."""

    LENGTHS = (6, 3, 9, 1, 5, 7, 4)

    def __init__(self):
        rng = np.random.default_rng(11)
        self.script = []
        for k, length in enumerate(self.LENGTHS):
            rewards = np.round(rng.uniform(0.5, 3.0, length) * rng.choice([-1.0, 1.0], length), 3)
            rewards[-1] = 100.0 if k % 2 else -100.0
            states = rng.normal(0.0, 1.0, (length, 8)).astype(np.float32)
            actions = rng.integers(0, 4, length)
            self.script.append(
                [
                    Experience(torch.as_tensor(states[t]), int(actions[t]), float(rewards[t]), t == length - 1)
                    for t in range(length)
                ]
            )
        self.episode, self.t = 0, 0
        self.curr_state = self.script[0][0].state

    def reset(self, seed=None):
        """Start the next episode of the script (a no-op at the start of one), as an agent's reset starts a new one."""
        if self.t:
            self.episode, self.t = (self.episode + 1) % len(self.script), 0
        self.curr_state = self.script[self.episode][0].state

    def step(self) -> Experience:
        experience = self.script[self.episode][self.t]
        self.t += 1
        if experience.is_done:
            self.reset()
        else:
            self.curr_state = self.script[self.episode][self.t].state
        return experience


def check_batch_generator(TrainBatchDataset, strict: bool = False) -> bool:
    """``TrainBatchDataset(agent_fn, episode_batch_size, gamma).episode_batch_generator()`` yields lists of full
    episodes (played with the check's scripted agent)."""

    def check():
        agent_fn = _ScriptedAgent
        torch.manual_seed(0)
        dataset = call_student("TrainBatchDataset(agent_fn, 3, 0.9)", TrainBatchDataset, agent_fn, 3, 0.9)
        generator = call_student("episode_batch_generator()", dataset.episode_batch_generator)
        for k in range(2):
            episodes = call_student("next(generator)", next, generator)
            if not isinstance(episodes, list | tuple) or len(episodes) != 3:
                raise Problem(f"each item should be a list of episode_batch_size=3 episodes, got {episodes!r:.200}.")
            for i, episode in enumerate(episodes):
                experiences = getattr(episode, "experiences", None)
                if not experiences:
                    raise Problem(f"episode {i} has no experiences: build Episode(total_reward, experiences).")
                done = [bool(e.is_done) for e in experiences]
                if not done[-1] or any(done[:-1]):
                    raise Problem(
                        f"batch {k}, episode {i} is not one full episode: only its last experience should have "
                        "is_done=True. Keep stepping the agent until is_done, then start the next episode."
                    )
                total = sum(e.reward for e in experiences)
                if not _close(episode.total_reward, total, 1e-4):
                    raise Problem(
                        f"an episode's total_reward should be the sum of its rewards ({total:.3f}), got {episode.total_reward!r}."
                    )

    return verdict("TrainBatchDataset.episode_batch_generator", check, strict)
