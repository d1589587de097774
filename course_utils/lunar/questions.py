"""Tutorial 3's concept checks, its numeric question and its ungraded Think! question
(``course_utils.questions``).

The three written questions of the notebook's last section are graded by hand: their model
answers are only in the instructor's notebook, never here.
"""

from __future__ import annotations

from course_utils.questions import ConceptCheck, Mistake, NumericQuestion, Option, ThinkQuestion

BASELINE = ConceptCheck(
    "Subtracting a baseline b(s) from the weight of log pi(a | s) leaves the expected gradient unchanged. Why?",
    (
        Option("Because b is small compared with the returns, so the change it makes is negligible.", False,
               "size has nothing to do with it: b = 1000 would leave the expectation unchanged too (and add variance). "
               "The reason is an identity, not an approximation."),
        Option("Because Adam rescales the gradient, so shifting all the weights by b does not matter.", False,
               "the optimiser sees one batch's gradient, and that does change with b (that is the point: its noise "
               "shrinks). What is unchanged is the average over many batches, whatever the optimiser."),
        Option("Because b is subtracted at every step, so it cancels in the mean over the batch.", False,
               "b multiplies grad log pi(a_t|s_t), which differs from step to step: it does not cancel in a single "
               "batch. It cancels only in expectation over the actions."),
        Option("Because E_{a ~ pi(.|s)}[grad log pi(a|s)] = 0, so E[b(s) grad log pi(a|s)] = 0 too.", True,
               "sum_a pi(a|s) grad log pi(a|s) = grad sum_a pi(a|s) = grad 1 = 0. It holds for any b that does not "
               "depend on the action taken, so b may depend on the state (a critic's v(s))."),
    ),
)
"""After the derivation (Section 4): why a baseline adds no bias."""

TRUNCATION = ConceptCheck(
    "An episode is cut off at the 300-step limit while the lander still hovers. What does your q-hat of its last "
    "step (Exercise 3) assume about what comes next?",
    (
        Option("That the lander keeps hovering forever, so the future is worth the hovering reward.", False,
               "nothing in the sum looks past the last reward: the running sum starts at 0, so the future counts "
               "as 0, not as more of the same."),
        Option("Nothing: with gamma = 0.99 the rewards after the cut are too far off to matter.", False,
               "gamma = 0.99 weighs a reward 100 steps ahead by 0.37: the +100 or -100 that the episode never reached "
               "would still count for a lot at the steps just before the cut."),
        Option("That nothing comes next: the future is worth 0, as after a crash or a landing.", True,
               "calc_qvals starts the sum from 0 at the end of every episode. After a landing or a crash that is right; "
               "at the time limit the lander had a future (it might still land, or crash) that the estimate drops."),
    ),
)
"""After the truncation paragraph (Section 3): where the student's targets are biased."""

DETACH = ConceptCheck(
    "In the actor-critic loss, why is v(s) detached in the policy term -(q-hat - v(s)) log pi(a|s)?",
    (
        Option("To save memory and time: the backward pass would otherwise go through v(s) twice.", False,
               "it does save a little, but that is not why: without detach the result would be wrong, not slower."),
        Option("So that the critic learns only to predict q-hat, not to shrink the policy loss.", True,
               "in the policy term v is only a baseline, a number per state. The critic learns from the value term "
               "alone (delta * (v - q-hat)^2), which makes it estimate v_pi(s)."),
        Option("Because detaching makes q-hat - v(s) an unbiased estimate of the advantage.", False,
               "the estimate is unbiased because v depends on the state only, not on the action; detach does not "
               "change the value of the advantage, only where gradients flow."),
    ),
)
"""In Section 7, with the AAC loss."""

REWARD_TO_GO = NumericQuestion(
    "The last three steps of an episode receive the rewards -1, -1 and +100 (a landing ends it). With gamma = 0.9, "
    "what is the discounted reward-to-go q-hat of the first of these three steps?",
    answer=79.1,
    tolerance=0.05,
    why="q-hat = -1 + 0.9 * (-1) + 0.9^2 * 100 = 79.1. Backwards, as calc_qvals does: 100 at the last step, "
        "-1 + 0.9 * 100 = 89 at the middle one, -1 + 0.9 * 89 = 79.1 at the first.",
    hint="work backwards from the last step, as calc_qvals does: q-hat = r + gamma * (q-hat of the next step), "
         "with 0 after the end of the episode.",
    mistakes=(
        Mistake(98.0, "98 is the sum without the discount: each reward further ahead is multiplied by one more "
                      "factor gamma, -1 + 0.9 * (-1) + 0.81 * 100."),
        Mistake(-1.0, "-1 is only the reward of that step; q-hat adds the discounted rewards that follow it, to the "
                      "end of the episode."),
        Mistake(89.0, "89 is the q-hat of the middle step (-1 + 0.9 * 100); the first step adds its own -1 to 0.9 "
                      "times that."),
        Mistake(0.81 * -1 + 0.9 * -1 + 100, "that discounts from the end of the episode backwards; gamma^k weighs the "
                                            "reward k steps after the step in question, so the step's own -1 counts "
                                            "fully and the landing, two steps later, with 0.81."),
    ),
)
"""After Exercise 3 (Section 3): one reward-to-go worked out by hand."""

VARIANCE = ThinkQuestion(
    "Why does the reward-to-go vary less from batch to batch than the total return, and why does subtracting the "
    "batch mean, or better a critic's v(s), cut the variance so much more?",
    "The total return weighs every step by rewards that came before it, which the action could not have caused: "
    "they only add noise, and the reward-to-go drops them. Both weights are still dominated by their level: early "
    "on every episode crashes (all weights strongly negative), later every episode ends with a large positive total "
    "(all strongly positive, even though most are cut off at 300 steps rather than landed), "
    "so every action is pushed the same way and a batch's gradient mostly says which episodes happened to be "
    "drawn. Subtracting the batch mean centres the weights, so only better-than-usual and worse-than-usual actions "
    "move the policy. A critic goes further: v(s) is the expected reward-to-go from that very state, so q-hat - "
    "v(s) removes what the state already predicts (high up and fast, or nearly landed) and keeps what the action "
    "changed. In the measurement the critic's weight had the lowest variance for both policies, and for the fresh "
    "network the batches with a baseline pointed much closer to the mean gradient than those without.",
)
"""After the gradient-variance measurement (Section 4)."""

CONCEPT_CHECKS = (BASELINE, TRUNCATION, DETACH)
"""Every concept check of the notebook, in the order it shows them."""
