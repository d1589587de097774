"""Tutorial 4's concept checks and Think! questions, its sizes, and the claims of the cells that
connect Section 1's memory to the agent's."""

import numpy as np
import pytest

from course_admin.replay import solutions, vector_per
from course_admin.replay import solutions as _solutions
from course_utils.questions import ConceptCheck, ThinkQuestion
from course_utils.replay import dqn, questions
from course_utils.replay.buffer import ReplayBuffer
from course_utils.replay.sizes import SIZES

CHECKS = [questions.TERMINAL_TARGET, questions.UNIFORM_WEIGHTS, questions.BETA_BIAS]


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.question[:30])
def test_each_concept_check_has_one_right_option_and_feedback_that_explains(check):
    assert isinstance(check, ConceptCheck)
    assert sum(o.correct for o in check.options) == 1
    for i, option in enumerate(check.options):
        assert check.feedback(i).startswith("Right" if option.correct else "Not quite")
        assert len(option.why.split()) >= 6  # says why, not just right or wrong


def test_the_feedback_names_the_misconception():
    wrong = {o.text: o.why for o in questions.TERMINAL_TARGET.options if not o.correct}
    assert "terminal mask" in wrong["r + gamma * max_a' Q_target(s', a')"]
    assert "no correction" in questions.BETA_BIAS.options[0].why
    assert "relative to uniform" in questions.UNIFORM_WEIGHTS.options[1].why


def test_the_right_answers_are_the_ones_the_code_computes():
    """TD target on a terminal step is r; alpha = 0 gives weights 1; beta = 1 is the full correction."""
    import torch

    q = torch.nn.Linear(1, 2)
    batch = dqn.batch_tensors({"obs": np.zeros((1, 1), np.float32), "next_obs": np.ones((1, 1), np.float32),
                               "acts": np.array([0]), "rews": np.array([2.0], np.float32),
                               "done": np.array([1.0], np.float32)})
    with torch.no_grad():
        q_taken = q(batch["obs"])[0, 0].item()
    _, priority = solutions.prioritized_td_loss(q, q, batch, gamma=0.9, prior_eps=0.0)
    assert priority.item() == pytest.approx(abs(2.0 - q_taken), rel=1e-5)  # target = r alone
    config = dqn.DQNConfig(memory_size=8, batch_size=4, alpha=0.0)
    buffer = vector_per.VectorPrioritizedReplayBuffer(1, config)
    for t in range(8):
        buffer.store([t], 0, 0.0, [t], False)
    buffer.update_priorities(np.arange(8), np.arange(1.0, 9.0))
    np.testing.assert_allclose(buffer.sample_batch(beta=0.7, rng=0)["weights"], 1.0)
    assert [o.text for o in questions.BETA_BIAS.options if o.correct] == ["beta = 1"]


@pytest.mark.parametrize("question", [questions.REPLAY_MORE, questions.ALPHA_BETA], ids=["replay_more", "alpha_beta"])
def test_think_questions_reveal_a_model_answer_only_after_an_answer(question, capsys):
    assert isinstance(question, ThinkQuestion)
    assert not question.reveal("\n\n")
    assert question.reveal("the ones with the largest errors because the agent learns most from them")
    assert question.model_answer in capsys.readouterr().out


def test_sizes_full_and_fast(monkeypatch):
    monkeypatch.setenv("COURSE_FAST", "0")
    assert (SIZES.train_frames, SIZES.live_frames) == (10_000, 10_000)
    assert SIZES.train_frames == dqn.DQNConfig().num_frames  # the notebook trains with the stored comparison's length
    monkeypatch.setenv("COURSE_FAST", "1")
    assert SIZES.train_frames < SIZES.full("train_frames")


def test_the_agents_buffer_wraps_as_the_circular_memory_it_keeps_its_transitions_in():
    """Section 1's closing cell: 1005 transitions into 1000 slots of the (here: the course's) memory."""
    ring = ReplayBuffer(obs_dim=1, size=1000, batch_size=32, memory=_solutions.CircularMemory)
    slots = [ring.store([t], 0, float(t), [t + 1], False) for t in range(1005)]
    held = ring.memory.memory["state"][:, 0]
    assert (len(ring), ring.memory.pointer, float(held[0]), float(held[5])) == (1000, 5, 1000, 5)
    assert slots[:3] == [0, 1, 2] and slots[-5:] == [0, 1, 2, 3, 4]
    batch = ring.sample_batch(rng=0)
    assert batch["obs"].shape == (32, 1) and batch["obs"].dtype == np.float32 and batch["acts"].dtype == np.int64
    np.testing.assert_array_equal(batch["next_obs"], batch["obs"] + 1)


def test_the_weight_question_agrees_with_the_courses_buffer():
    """The course's prioritized buffer gives the first transition of the question the weight 1/3."""
    question = questions.IS_WEIGHT
    assert "p = (9, 4, 1, 4); alpha = 0.5 and beta = 1" in question.question

    def first_weight(alpha):
        buffer = vector_per.VectorPrioritizedReplayBuffer(1, dqn.DQNConfig(memory_size=4, batch_size=4, alpha=alpha))
        for t in range(4):
            buffer.store([t], 0, 0.0, [t], False)
        buffer.update_priorities(np.arange(4), np.array([9.0, 4.0, 1.0, 4.0]))
        batch = buffer.sample_batch(beta=1.0, rng=0)
        assert 0 in batch["indices"]  # the first stratum of the total always draws it
        return float(batch["weights"][list(batch["indices"]).index(0)])

    assert question.is_right(first_weight(0.5))
    assert "without the exponent alpha" in question.feedback(first_weight(1.0))  # priorities used as they are
