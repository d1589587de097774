import re

import pytest
import torch
from verdicts import not_yet

from course_admin.replay.solutions import CircularMemory  # the exercise's reference (instructor side)
from course_utils.replay.checks import _numbered_batch, check_memory_add
from course_utils.replay.memory import CircularReplayMemory, ReplayMemoryError, cartpole_batches, plot_memory


@pytest.fixture(scope="module")
def batches():
    return cartpole_batches(n_batches=13, batch_size=5, seed=0)


def _cat(*parts):
    return {key: torch.cat([p[key] for p in parts]) for key in parts[0]}


def test_cartpole_batches_have_every_field_with_consistent_shapes(batches):
    first = batches[0]
    assert first["state"].shape == (5, 4) and first["state"].dtype == torch.float32
    assert first["action"].dtype == torch.int64 and first["step"].tolist() == [0, 1, 2, 3, 4]
    assert torch.equal(batches[1]["state"][0], batches[0]["next_state"][-1])  # consecutive steps
    steps = torch.cat([b["step"] for b in batches])
    episodes = torch.cat([b["episode_id"] for b in batches])
    restarts = torch.nonzero(steps[1:] == 0).flatten() + 1
    assert len(restarts) >= 1  # random play drops the pole within 65 steps
    assert torch.all(episodes[restarts] == episodes[restarts - 1] + 1)


def test_the_reference_sequence_fills_overwrites_and_wraps(batches):
    """The story of the reference docs: capacity 20, batches of 5, then a 10-entry batch that wraps."""
    memory = CircularMemory(capacity=20, batch_size=16, warmup=19, seed=0)
    assert len(memory) == 0
    for i in range(4):
        assert memory + batches[i] is memory
        assert len(memory) == 5 * (i + 1)
    assert memory.pointer == 0
    assert torch.equal(memory.memory["state"], _cat(*batches[:4])["state"])
    memory + batches[4]
    assert len(memory) == 20 and memory.pointer == 5
    assert torch.equal(memory.memory["step"], _cat(batches[4], *batches[1:4])["step"])
    memory + batches[5] + batches[6] + batches[7]
    assert torch.equal(memory.memory["step"], _cat(*batches[4:8])["step"]) and memory.pointer == 0
    memory + batches[8] + batches[9] + batches[10]
    assert memory.pointer == 15
    assert torch.equal(memory.memory["state"], _cat(batches[8], batches[9], batches[10], batches[7])["state"])
    memory + _cat(batches[11], batches[12])  # 10 entries from slot 15: 5 at the end, 5 at the start
    assert memory.pointer == 5
    expected = _cat(batches[12], batches[9], batches[10], batches[11])
    for key in expected:
        assert torch.equal(memory.memory[key], expected[key]), key
    assert torch.equal(memory[5:10]["state"], batches[9]["state"])


def test_sampling_refuses_before_warmup_then_visits_every_entry(batches):
    memory = CircularMemory(capacity=20, batch_size=16, warmup=19, seed=3)
    memory + batches[0] + batches[1] + batches[2]
    with pytest.raises(ReplayMemoryError, match="warm-up of 19"):
        memory.sample()
    memory + batches[3] + batches[4]
    seen = set()
    for _ in range(2):  # ceil(20 / 16) calls
        sampled, indices = memory.sample()
        assert indices.shape == (16,) and sampled["state"].shape == (16, 4)
        assert torch.equal(sampled["state"], memory.memory["state"][indices])
        seen |= set(indices.tolist())
    assert seen == set(range(20))
    _, first = CircularMemory(20, 16, 19, seed=3).add(_cat(*batches[:4])).sample()
    _, again = CircularMemory(20, 16, 19, seed=3).add(_cat(*batches[:4])).sample()
    assert torch.equal(first, again)  # seeded


def test_update_td_writes_exactly_those_slots(batches):
    memory = CircularMemory(capacity=20, batch_size=4, warmup=4)
    memory + _cat(*batches[:4])
    memory.update_td(torch.full((5, 1), 1.0), torch.arange(5, 10))
    td = memory.memory["td_error"]
    assert td.sum() == 5 and td[5:10].sum() == 5 and td[6:11].sum() == 4
    with pytest.raises(IndexError, match="0 to 19"):
        memory.update_td(torch.ones(1), torch.tensor([20]))


def test_bad_batches_get_clear_errors(batches):
    memory = CircularMemory(capacity=8, batch_size=2, warmup=2)
    with pytest.raises(TypeError, match="dict of tensors"):
        memory.add([1, 2, 3])
    with pytest.raises(KeyError, match="unknown fields"):
        memory.add({"colour": torch.zeros(3)})
    with pytest.raises(ValueError, match="same first dimension"):
        memory.add({"state": torch.zeros(3, 4), "action": torch.zeros(2)})
    memory.add(batches[0])
    with pytest.raises(ValueError, match="field 'state'"):
        memory.add({**batches[1], "state": torch.zeros(5, 3)})
    with pytest.raises(ValueError, match="warmup"):
        CircularMemory(capacity=4, warmup=5)
    with pytest.raises(ReplayMemoryError, match="empty"):
        CircularMemory(capacity=4, warmup=2)[0:2]


def test_a_batch_longer_than_the_memory_keeps_its_newest_entries():
    memory = CircularMemory(capacity=4, batch_size=2, warmup=2)
    memory.add(_numbered_batch(0, 3))
    memory.add(_numbered_batch(3, 6))  # numbers 3..8: only 5..8 can stay
    assert sorted(memory.memory["step"].tolist()) == [5, 6, 7, 8] and len(memory) == 4


def test_plot_memory_draws_both_panels(batches):
    import matplotlib.pyplot as plt

    memory = CircularMemory(capacity=20, batch_size=4, warmup=4)
    for batch in batches[:5]:
        memory + batch
    fig = plot_memory(memory)
    assert len(fig.axes) == 3  # two panels and a colour bar
    assert fig.axes[0].get_title() == "TD error stored in each slot"
    plt.close(fig)


# --------------------------------------------------------------------------------------
# The exercise's check


class _NoWrap(CircularReplayMemory):
    def add(self, batch):
        batch, n = self.prepare(batch)
        for key, value in batch.items():
            self.memory[key][self.pointer : self.pointer + n] = value
        self.pointer = (self.pointer + n) % self.capacity
        self.size = min(self.size + n, self.capacity)
        return self


class _WrapToEnd(CircularReplayMemory):
    """Puts the overflow at the end instead of the start: the right entries, wrong slots."""

    def add(self, batch):
        batch, n = self.prepare(batch)
        first = min(n, self.capacity - self.pointer)
        for key, value in batch.items():
            self.memory[key][self.pointer : self.pointer + first] = value[:first]
            if n > first:
                self.memory[key][self.capacity - (n - first) :] = value[first:]
        self.pointer = (self.pointer + n) % self.capacity
        self.size = min(self.size + n, self.capacity)


class _SizeGrows(CircularMemory):
    def add(self, batch):
        super().add(batch)
        self.size = self.size + 0 if self.size < self.capacity else self.size + 1


class _OnlyState(CircularReplayMemory):
    def add(self, batch):
        batch, n = self.prepare(batch)
        idx = (self.pointer + torch.arange(n)) % self.capacity
        for key in ("state", "step"):
            self.memory[key][idx] = batch[key]
        self.pointer = (self.pointer + n) % self.capacity
        self.size = min(self.size + n, self.capacity)


class _ModuloIndexing(CircularReplayMemory):
    """A different correct solution: index with (pointer + arange(n)) % capacity."""

    def add(self, batch):
        batch, n = self.prepare(batch)
        idx = (self.pointer + torch.arange(n)) % self.capacity
        for key, value in batch.items():
            self.memory[key][idx] = value
        self.pointer = (self.pointer + n) % self.capacity
        self.size = min(self.size + n, self.capacity)


class _Todo(CircularReplayMemory):
    def add(self, batch):
        raise NotImplementedError()


def test_the_student_package_leaves_add_to_the_student():
    memory = CircularReplayMemory(capacity=4, batch_size=2, warmup=2)
    with pytest.raises(NotImplementedError, match="Exercise 1.*CircularMemory"):
        memory.add({"state": torch.zeros(2, 4)})
    assert check_memory_add(CircularReplayMemory) is False


def test_check_accepts_correct_solutions(capsys):
    assert check_memory_add(CircularMemory)
    assert check_memory_add(_ModuloIndexing)
    assert "✅" in capsys.readouterr().out


WRONG_ADDS = [
    (_NoWrap, "split|write the first part up to the end"),
    (_WrapToEnd, "goes to the start"),
    (_SizeGrows, "len\\(memory\\)"),
    (_OnlyState, "field 'reward'"),
    (_Todo, "not implemented yet"),
]


@pytest.mark.parametrize("wrong, message", WRONG_ADDS)
def test_check_rejects_common_mistakes_with_a_hint(wrong, message, capsys):
    assert check_memory_add(wrong) is False
    assert "❌" in capsys.readouterr().out
    assert re.search(message, not_yet(check_memory_add, wrong))


def test_the_largest_td_errors_of_the_notebooks_memory_are_on_the_last_steps():
    """Section 1: the trained Q-network's |TD errors| on the transitions the notebook's memory of 20
    slots holds at the end of its story (batches 9 to 12 of ``cartpole_batches(13, 5, seed=0)``)."""
    import torch

    from course_utils.claims import claim
    from course_utils.replay import dqn
    from course_utils.replay.memory import cartpole_batches

    batches = cartpole_batches(n_batches=13, batch_size=5, seed=0)
    held = {key: torch.cat([b[key] for b in batches[9:]]) for key in batches[0]}
    trained_q, gamma = dqn.trained_q_network(), dqn.DQNConfig().gamma
    with torch.no_grad():
        q_taken = trained_q(held["state"]).gather(1, held["action"].unsqueeze(1)).squeeze(1)
        target = held["reward"] + gamma * (1.0 - held["done"]) * trained_q(held["next_state"]).max(dim=1).values
    holds, figures = claim("replay.largest_errors_at_the_end").check({"td_errors": (target - q_taken).abs(),
                                                                       "done": held["done"]})
    assert holds and figures["slots"] == 20, figures

