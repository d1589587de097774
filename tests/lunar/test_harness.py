"""What the notebook gives ready-made (``lunar.harness``): batched collection of whole episodes, the training
loop and ``monitor_episode``."""

import contextlib
import io
import json

import numpy as np
import pytest
import torch
from torch import nn

from course_admin.lunar.episodes import collect_episodes
from course_admin.lunar.solutions import (
    ActionEntropyLoss,
    BaselinePolicyGradientLoss,
    Episode,
    PolicyAgent,
    PolicyNet,
    PolicyTrainer,
    TrainBatch,
)
from course_utils.claims import claim
from course_utils.lunar.env import make_env
from course_utils.lunar.harness import VectorBatchDataset, monitor_episode
from course_utils.paths import SOLUTIONS

SOLUTIONS_NOTEBOOK = SOLUTIONS / "03_policy_gradients.ipynb"


def test_collect_episodes_matches_single_env_play():
    """One batched forward for many environments gives exactly the single-env transitions."""
    torch.manual_seed(3)
    net = nn.Linear(8, 4)
    seeds = [5, 6, 7]
    episodes = collect_episodes(net, seeds, deterministic=True, episode_type=Episode)
    for seed, episode in zip(seeds, episodes, strict=True):
        env = make_env()
        state, _ = env.reset(seed=seed)
        for exp in episode.experiences:
            assert np.array_equal(exp.state.numpy(), state)
            action = int(net(torch.as_tensor(state)).argmax())
            assert exp.action == action
            state, reward, terminated, truncated, _ = env.step(action)
            assert exp.reward == reward and exp.is_done == (terminated or truncated)
        assert episode.experiences[-1].is_done
        assert episode.total_reward == pytest.approx(sum(e.reward for e in episode.experiences))


def test_batches_are_the_same_with_one_or_two_worker_processes_which_stop_with_the_loop():
    """``workers`` sets the speed, never the batches; the worker processes live only while the
    batches are read."""
    import multiprocessing as mp

    torch.manual_seed(0)
    net = PolicyNet(8, 4, (16,))
    batches = {}
    for workers in (1, 2):
        dataset = VectorBatchDataset(net, 5, 0.9, seed=3, batch_type=TrainBatch, episode_type=Episode, workers=workers)
        batches[workers] = []
        for batch in dataset:
            assert len([p for p in mp.active_children() if p.name == "lunar-rollout-shard"]) == (2 if workers == 2 else 0)
            batches[workers].append(batch)
            if len(batches[workers]) == 2:
                break
        assert not [p for p in mp.active_children() if p.name == "lunar-rollout-shard"]
    for one, two in zip(batches[1], batches[2], strict=True):
        assert torch.equal(one.states, two.states) and torch.equal(one.actions, two.actions)
        assert torch.equal(one.q_vals, two.q_vals) and torch.equal(one.total_rewards, two.total_rewards)
    first, second = batches[1]
    assert len(first.total_rewards) == 5 and not torch.equal(first.total_rewards, second.total_rewards)


def test_the_batches_keep_older_objects_out_of_garbage_collections_until_the_loop_ends():
    """While the batches are read, what lived before the first two batches is out of the garbage
    collector's reach (``gc.freeze``): a reference cycle made before and dropped meanwhile waits,
    one made later is collected, and the end of the loop puts everything back, where the first is
    collected. A process that had frozen its objects itself (a forked worker) keeps them frozen."""
    import gc
    import weakref

    class Node:
        pass

    torch.manual_seed(0)
    net = PolicyNet(8, 4, (16,))
    dataset = VectorBatchDataset(net, 2, 0.9, seed=3, batch_type=TrainBatch, episode_type=Episode, workers=1)
    assert gc.get_freeze_count() == 0
    node = Node()
    node.me = node
    alive = weakref.ref(node)
    for batch_idx, _ in enumerate(dataset):
        assert gc.get_freeze_count() > 0
        node = None
        gc.collect()
        assert alive() is not None
        if batch_idx == 2:
            later = Node()
            later.me = later
            made_later = weakref.ref(later)
            later = None
            gc.collect()
            assert made_later() is None
        if batch_idx == 3:
            break
    assert gc.get_freeze_count() == 0
    gc.collect()
    assert alive() is None
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        for batch_idx, _ in enumerate(dataset):
            if batch_idx == 1:
                break
        assert gc.get_freeze_count() >= frozen
    finally:
        gc.unfreeze()


@pytest.mark.parametrize("workers", [1, 2])
def test_batches_played_ahead_are_the_batches_played_in_turn(workers, monkeypatch):
    """``play_ahead`` starts the next batch with the weights of the moment, and the caller goes on
    changing the critic (the ``free`` entries): the batches are those of a loop that plays each
    batch when it is read. When the policy itself changes after a batch was started, the batch is
    played again with the new weights, its draws rewound (once here); and the worker processes
    stop with the loop even with a batch in flight."""
    import multiprocessing as mp

    from course_admin.lunar.solutions import AACPolicyNet
    from course_utils.lunar.rollouts import RolloutCollector

    rewinds = []
    rewind = RolloutCollector.rewind
    monkeypatch.setattr(RolloutCollector, "rewind", lambda self: (rewinds.append(1), rewind(self))[1])

    def batches(ahead: bool) -> list:
        torch.manual_seed(0)
        net = AACPolicyNet(8, 4, (16,))
        free = [name for name, _ in net.named_parameters() if name.startswith("critic.")]
        dataset = VectorBatchDataset(net, 4, 0.9, seed=5, batch_type=TrainBatch, episode_type=Episode, workers=workers)
        read = []
        for k, batch in enumerate(dataset):
            read.append(batch)
            if ahead:
                assert dataset.play_ahead(free=free) and not dataset.play_ahead(free=free)
            if k == 3:
                break
            with torch.no_grad():
                for param in net.critic.parameters():  # what the critic's own steps do
                    param.add_(0.1)
                if k == 1:
                    net.actor[0].bias.add_(0.5)  # the policy changes after its batch was started
        assert not [p for p in mp.active_children() if p.name == "lunar-rollout-shard"]
        return read

    plain, ahead = batches(False), batches(True)
    assert len(rewinds) == 1
    for one, two in zip(plain, ahead, strict=True):
        assert torch.equal(one.states, two.states) and torch.equal(one.actions, two.actions)
        assert torch.equal(one.q_vals, two.q_vals) and torch.equal(one.total_rewards, two.total_rewards)
    # without the comparison, batch 2 would have been played with the policy before the change
    from course_utils.lunar import harness

    monkeypatch.setattr(harness, "_same_weights", lambda *args: True)
    stale = batches(True)
    assert len(stale[2]) != len(plain[2]) or not torch.equal(stale[2].actions, plain[2].actions)


def test_training_with_the_critic_s_steps_is_the_same_with_batches_played_ahead():
    """``TrainerLoop.train`` starts each next batch before the critic's steps (``play_ahead``): the
    curve and the weights are those of a dataloader that cannot play ahead."""
    from course_admin.lunar.solutions import AACPolicyGradientLoss, AACPolicyNet

    class InTurn(VectorBatchDataset):
        play_ahead = None

    runs = []
    for dataset_type in (InTurn, VectorBatchDataset):
        torch.manual_seed(1)
        net = AACPolicyNet(8, 4, (16,))
        dataset = dataset_type(net, 4, 0.99, seed=2, batch_type=TrainBatch, episode_type=Episode, workers=2)
        trainer = PolicyTrainer(net, torch.optim.Adam(net.parameters(), lr=1e-2),
                                [AACPolicyGradientLoss(0.01), ActionEntropyLoss(4, 0.1)], dataset)
        data = trainer.train(max_episodes=24, progress=False, critic_steps=3, critic_learn_rate=5e-3)
        runs.append((data, net.state_dict()))
    (plain, plain_weights), (ahead, ahead_weights) = runs
    assert plain == ahead and len(plain["episode_num"]) == 6
    assert all(torch.equal(plain_weights[k], ahead_weights[k]) for k in plain_weights)


def test_policy_trainer_reaches_the_sanity_target_in_few_batches():
    """The notebook's claim: REINFORCE with a baseline passes -150 (mean of 10 episodes) within a few batches."""
    torch.manual_seed(0)
    net = PolicyNet(8, 4, (128, 128))
    dataset = VectorBatchDataset(net, 16, 0.99, seed=0, batch_type=TrainBatch, episode_type=Episode)
    trainer = PolicyTrainer(
        net, torch.optim.Adam(net.parameters(), lr=2e-3), [BaselinePolicyGradientLoss(), ActionEntropyLoss(4, 0.5)], dataset
    )
    data = trainer.train(target_reward=-150, running_mean_len=10, max_episodes=16 * 12, progress=False)
    holds, figures = claim("lunar.sanity_run_passes").check(data)
    assert holds, figures


# ---------------------------------------------------------------------------------------------
# The student's long run: a stop by hand, the live view, the checkpoint beside the course's agent

REWARDS = [-120.0, 35.0, -10.0, 20.0, -60.0]
"""Each batch's one episode total: with a running mean of 1 episode the best is batch 1's."""


def _batches(stop_at=None):
    """TrainBatches of one 4-step episode with the totals of ``REWARDS``; a ``KeyboardInterrupt``
    (the stop button) while batch ``stop_at`` is being collected."""
    generator = torch.Generator().manual_seed(0)
    for k, total in enumerate(REWARDS):
        if k == stop_at:
            raise KeyboardInterrupt()
        yield TrainBatch(
            torch.randn(4, 8, generator=generator),
            torch.randint(0, 4, (4,), generator=generator),
            torch.randn(4, generator=generator),
            torch.tensor([total]),
        )


def _trainer(dataloader, checkpoint):
    torch.manual_seed(0)
    net = PolicyNet(8, 4, (16,))
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    return PolicyTrainer(net, optimizer, [BaselinePolicyGradientLoss()], dataloader, checkpoints_file=checkpoint)


def _weights_after_each_batch(weights):
    def keep(batch_idx, model, batch):
        weights.append({k: v.clone() for k, v in model.state_dict().items()})

    return keep


@pytest.mark.parametrize("where", ["collecting", "showing"])
def test_a_stop_by_hand_keeps_the_best_checkpoint_and_the_curve(tmp_path, capsys, where):
    """The stop button during training (a KeyboardInterrupt while a batch is collected or while the
    agent is shown) ends the training, not the cell: the curve so far comes back, the checkpoint
    holds the best batch's weights, and the message says so."""
    checkpoint, weights = tmp_path / "mine.pt", []
    keep = _weights_after_each_batch(weights)

    def show(batch_idx, model, batch):
        keep(batch_idx, model, batch)
        if where == "showing" and batch_idx == 3:
            raise KeyboardInterrupt()

    trainer = _trainer(_batches(stop_at=3 if where == "collecting" else None), checkpoint)
    data = trainer.train(running_mean_len=1, max_episodes=100, post_batch_fn=show, progress=False, stoppable=True)
    finished = 3 if where == "collecting" else 4
    assert trainer.interrupted
    assert data["mean_reward"] == REWARDS[:finished] and data["episode_num"] == list(range(1, finished + 1))
    assert {len(values) for values in data.values()} == {finished}
    saved = torch.load(checkpoint, weights_only=True)
    assert saved["best_mean_reward"] == max(REWARDS[:finished]) == 35.0 and saved["episodes"] == 2
    for name, value in saved["params"].items():
        assert torch.equal(value, weights[1][name]), name  # batch 1's weights, not the last batch's
    out = capsys.readouterr().out
    assert f"stopped by you after {finished} episodes" in out and str(checkpoint) in out and "35.0" in out


def test_a_stop_before_the_first_batch_says_there_is_nothing_yet(tmp_path, capsys):
    trainer = _trainer(_batches(stop_at=0), tmp_path / "mine.pt")
    data = trainer.train(max_episodes=100, progress=False, stoppable=True)
    assert trainer.interrupted and data["episode_num"] == [] and not (tmp_path / "mine.pt").exists()
    assert "before the first batch finished" in capsys.readouterr().out


def test_a_training_that_ends_by_itself_is_not_interrupted(tmp_path, capsys):
    trainer = _trainer(_batches(), tmp_path / "mine.pt")
    data = trainer.train(running_mean_len=1, max_episodes=len(REWARDS), progress=False, stoppable=True)
    assert not trainer.interrupted and len(data["episode_num"]) == len(REWARDS)
    assert "stopped" not in capsys.readouterr().out


def test_stop_when_ends_the_training_and_keeps_the_weights_it_stopped_with(tmp_path):
    """``stop_when`` (the bar, in the notebook) is asked after every batch; when it says stop, the
    checkpoint holds that batch's weights, marked solved, even if the training mean was better before."""
    checkpoint, weights = tmp_path / "mine.pt", []
    asked = []

    def at_the_fourth_batch(model, data):
        asked.append(len(data["episode_num"]))
        return len(data["episode_num"]) == 4

    trainer = _trainer(_batches(), checkpoint)
    data = trainer.train(running_mean_len=1, max_episodes=100, progress=False, stop_when=at_the_fourth_batch,
                         post_batch_fn=_weights_after_each_batch(weights))
    assert asked == [1, 2, 3, 4] and data["episode_num"] == [1, 2, 3, 4] and not trainer.interrupted
    saved = torch.load(checkpoint, weights_only=True)
    assert saved["solved"] is True and saved["best_mean_reward"] == 35.0 and saved["episodes"] == 4
    assert all(torch.equal(value, weights[3][name]) for name, value in saved["params"].items())


def test_the_learning_rate_falls_to_a_tenth_over_the_decay_episodes_then_stays(tmp_path):
    trainer = _trainer(_batches(), tmp_path / "mine.pt")  # one episode per batch, SGD at 0.1
    lrs = []
    trainer.train(running_mean_len=1, max_episodes=len(REWARDS), progress=False, lr_decay_episodes=4,
                  post_batch_fn=lambda i, model, batch: lrs.append(trainer.optimizer.param_groups[0]["lr"]))
    assert lrs == pytest.approx([0.075, 0.05, 0.025, 0.01, 0.01, 0.01][: len(REWARDS)])


def test_the_long_runs_decay_and_critic_steps_in_the_notebook_are_those_the_benchmark_and_the_slow_test_use():
    from course_admin.lunar.reference import FINAL_LR_DECAY_EPISODES

    cells = json.loads(SOLUTIONS_NOTEBOOK.read_text())["cells"]
    (cell,) = [c for c in cells if "final AAC" in "".join(c["source"])]
    assert f"lr_decay_episodes={FINAL_LR_DECAY_EPISODES:_}," in "".join(cell["source"])
    # and, like the aac experiment, the timed run and the slow test, it gives the critic its extra steps
    source = "".join(cell["source"])
    assert 'critic_steps=aac_hp["critic_steps"], critic_learn_rate=aac_hp["critic_learn_rate"]' in source
    assert "print(lunar.student_run_report())" in source


def test_without_stoppable_a_stop_ends_the_cell(tmp_path):
    """The experiments' runs are not stoppable: a stop must not leave a cut-short run that passes
    for a finished one (and is cached as one), nor let the cell go on to the next experiment."""
    trainer = _trainer(_batches(stop_at=2), tmp_path / "mine.pt")
    with pytest.raises(KeyboardInterrupt):
        trainer.train(running_mean_len=1, max_episodes=100, progress=False)


def test_a_stop_while_the_checkpoint_is_written_keeps_the_previous_one(tmp_path, monkeypatch):
    """The checkpoint is written beside the file and renamed: a stop in the middle of writing
    leaves the previous best, never a half-written file."""
    checkpoint = tmp_path / "mine.pt"
    trainer = _trainer(_batches(), checkpoint)
    real_save, calls = torch.save, []

    def save_then_stop(obj, path, *args, **kwargs):
        calls.append(path)
        if len(calls) == 2:  # batch 1's new best: half a file, then the stop button
            with open(path, "wb") as half:
                half.write(b"half")
            raise KeyboardInterrupt()
        return real_save(obj, path, *args, **kwargs)

    monkeypatch.setattr(torch, "save", save_then_stop)
    data = trainer.train(running_mean_len=1, max_episodes=100, progress=False, stoppable=True)
    assert trainer.interrupted and len(calls) == 2
    assert torch.load(checkpoint, weights_only=True)["best_mean_reward"] == REWARDS[0]
    assert len(data["episode_num"]) == 2  # batch 1 was recorded before its checkpoint was written


def test_the_progress_bar_survives_the_live_view(tmp_path):
    """In a real kernel, the view of the agent (shown at batch 0 and every batch after) is
    replaced in place: the progress bar above it stays in the cell's output."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    code = """
import torch
from course_utils import lunar
from course_admin.lunar.solutions import BaselinePolicyGradientLoss, PolicyNet, PolicyTrainer, TrainBatch

def batches():
    for k in range(4):
        yield TrainBatch(torch.randn(4, 8), torch.randint(0, 4, (4,)), torch.randn(4), torch.tensor([float(k)]))

net = PolicyNet(8, 4, (8,))
trainer = PolicyTrainer(net, torch.optim.SGD(net.parameters(), lr=0.1), [BaselinePolicyGradientLoss()], batches())
view = lunar.LiveView()
trainer.train(max_episodes=4, post_batch_fn=lambda i, model, batch: view.show(f"after batch {i}"), desc="final AAC")
"""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    resources = {"metadata": {"path": str(tmp_path)}}
    client = nbclient.NotebookClient(notebook, timeout=120, kernel_name="python3", resources=resources)
    client.execute()
    outputs = notebook.cells[0].outputs
    bars = [o for o in outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})
            or "final AAC" in o.get("text", "")]
    views = [o for o in outputs if "after batch" in str(o.get("data", {}).get("text/html", ""))]
    assert bars, outputs
    assert len(views) == 1 and "after batch 3" in views[0]["data"]["text/html"], outputs


def _evaluation_cell() -> str:
    """The solutions notebook's cell that evaluates the student's checkpoint beside the course's agent."""
    notebook = json.loads(SOLUTIONS_NOTEBOOK.read_text())
    cells = ["".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "code"]
    (cell,) = [source for source in cells if "lunar.load_checkpoint(" in source]
    return cell


def _run_evaluation_cell(passes_checks=True):
    """Run the evaluation cell with stand-ins: the course's network class as the student's, a random
    actor-critic as "the course's agent", three evaluation landscapes. Returns (its printout, its namespace)."""
    from course_admin.lunar.solutions import AACPolicyNet
    from course_utils import lunar
    from course_utils.animation import animate, record_episode, side_by_side

    torch.manual_seed(5)
    course_agent = AACPolicyNet(8, 4, (8,))
    seeds = lunar.EVAL_SEEDS[:3]
    shown = []
    namespace = {
        "lunar": lunar, "AACPolicyNet": AACPolicyNet, "aac_hp": {"hidden_layers": (16,)}, "env": make_env(),
        "seeds": seeds, "pretrained": course_agent, "returns": lunar.evaluate(course_agent, seeds),
        "passes": lambda check, answer: passes_checks, "check_aac_net": None,
        "record_episode": record_episode, "animate": animate, "side_by_side": side_by_side, "display": shown.append,
    }
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(_evaluation_cell(), namespace)
    namespace["shown"] = shown
    return out.getvalue(), namespace


def test_the_evaluation_cell_puts_the_students_checkpoint_beside_the_course_agent(tmp_path, monkeypatch):
    from course_admin.lunar.solutions import AACPolicyNet
    from course_utils import lunar
    from course_utils.lunar.harness import save_checkpoint

    monkeypatch.setenv("COURSE_CACHE", str(tmp_path))
    torch.manual_seed(9)
    mine = AACPolicyNet(8, 4, (16,))
    lunar.experiment_cache_dir().mkdir(parents=True)
    save_checkpoint(mine, lunar.experiment_cache_dir() / "my_aac_checkpoint.pt", best_mean_reward=-42.5, episodes=96)
    out, namespace = _run_evaluation_cell()
    my_returns, course_returns = lunar.evaluate(mine, lunar.EVAL_SEEDS[:3]), namespace["returns"]
    assert np.array_equal(namespace["my_returns"], my_returns)
    assert "same 3 landscapes" in out and "-42.5" in out
    assert f"{my_returns.mean():.1f} ± {my_returns.std():.1f}" in out
    assert f"{course_returns.mean():.1f} ± {course_returns.std():.1f}" in out
    assert f"yours {my_returns[0]:.1f}, the course's {course_returns[0]:.1f}" in out  # the landing shown is the first landscape's
    (animation,) = namespace["shown"]
    assert "<img" in animation.data or "data:image/png" in animation.data


def test_the_evaluation_cell_says_which_cell_to_run_without_a_checkpoint(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_CACHE", str(tmp_path))
    out, namespace = _run_evaluation_cell()
    assert "no checkpoint of your agent yet" in out and 'the training cell under "Your agent" (Section 8)' in out
    assert namespace["shown"] == [] and "my_returns" not in namespace
    out, _ = _run_evaluation_cell(passes_checks=False)
    assert "does not pass its check yet" in out


def test_the_evaluation_cell_says_what_to_do_with_a_checkpoint_of_other_sizes(tmp_path, monkeypatch):
    from course_admin.lunar.solutions import AACPolicyNet
    from course_utils import lunar
    from course_utils.lunar.harness import save_checkpoint

    monkeypatch.setenv("COURSE_CACHE", str(tmp_path))
    lunar.experiment_cache_dir().mkdir(parents=True)
    save_checkpoint(AACPolicyNet(8, 4, (32, 32)), lunar.experiment_cache_dir() / "my_aac_checkpoint.pt", best_mean_reward=0.0)
    out, namespace = _run_evaluation_cell()
    assert "does not fit the network built here" in out and "Run the training cell" in out
    assert namespace["shown"] == []


def test_both_cells_name_the_same_checkpoint_file():
    notebook = json.loads(SOLUTIONS_NOTEBOOK.read_text())
    lines = {
        line.split("#")[0].strip()
        for cell in notebook["cells"]
        for line in "".join(cell["source"]).splitlines()
        if line.startswith("checkpoint_file = ")
    }
    assert len(lines) == 1, lines


def test_monitor_episode_plays_one_whole_episode_with_a_frame_per_step():
    """The episode of the agent it is given, step for step: its length and total reward are those of
    the same agent played without pictures, and the frames change (one before the first step and
    one after each step but the last)."""
    torch.manual_seed(0)
    net = nn.Linear(8, 4)
    frames, n_steps, total = monitor_episode(net, seed=4, agent_type=PolicyAgent)
    torch.manual_seed(0)
    nn.Linear(8, 4)  # the same draws as above, so the agent samples the same actions
    agent, rewards = PolicyAgent(make_env(), net, seed=4), []
    while True:
        experience = agent.step()
        rewards.append(experience.reward)
        if experience.is_done:
            break
    assert n_steps == len(rewards) and total == pytest.approx(sum(rewards))
    assert len(frames) == n_steps and frames[0].shape == (400, 600, 3)
    assert not np.array_equal(frames[0], frames[-1])


def test_monitor_episode_stops_at_max_steps():
    frames, n_steps, _ = monitor_episode(nn.Linear(8, 4), seed=1, agent_type=PolicyAgent, max_steps=5)
    assert n_steps == 5 and len(frames) == 6


def test_monitor_episode_can_keep_a_picture_every_few_steps():
    """``every=3``: the same episode (steps and total reward), with the first picture and one after
    every third step but the last; ``every`` must be a positive integer."""
    torch.manual_seed(0)
    net = nn.Linear(8, 4)
    all_frames, n_steps, total = monitor_episode(net, seed=4, agent_type=PolicyAgent)
    torch.manual_seed(0)
    net = nn.Linear(8, 4)
    frames, n_thin, total_thin = monitor_episode(net, seed=4, agent_type=PolicyAgent, every=3)
    assert (n_thin, total_thin) == (n_steps, total)
    # the same flight; the engines' particles fade as pictures are drawn (gymnasium ages them in
    # render), so only the first picture is the same to the pixel
    assert len(frames) == 1 + (n_steps - 1) // 3 and np.array_equal(frames[0], all_frames[0])
    assert not np.array_equal(frames[0], frames[-1])
    with pytest.raises(ValueError, match="every must be a positive integer"):
        monitor_episode(net, agent_type=PolicyAgent, every=0)
