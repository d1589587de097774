"""Tutorial 3's concept checks and its ungraded Think! question (``course_utils.questions``).

The three written questions of the notebook's last section are graded by hand: their model
answers are only in the instructor's notebook, never here.
"""

from __future__ import annotations

from course_utils.questions import ConceptCheck, Option, ThinkQuestion

BASELINE = ConceptCheck(
    "Subtracting a baseline b(s) from the weight of log pi(a | s) leaves the expected gradient unchanged. Why?",
    (
        Option("Because b is small compared with the returns.", False,
               "size has nothing to do with it: b = 1000 would leave the expectation unchanged too (and add variance). "
               "The reason is an identity, not an approximation."),
        Option("Because E over a ~ pi(.|s) of grad log pi(a|s) is 0, so E[b(s) grad log pi(a|s)] = b(s) * 0.", True,
               "sum_a pi(a|s) grad log pi(a|s) = grad sum_a pi(a|s) = grad 1 = 0. It holds for any b that does not "
               "depend on the action taken, so b may depend on the state (a critic's v(s))."),
        Option("Because Adam rescales the gradient, so shifting the weights does not matter.", False,
               "the optimiser sees one batch's gradient, and that does change with b (that is the point: its noise "
               "shrinks). What is unchanged is the average over many batches, whatever the optimiser."),
        Option("Because b is subtracted from every step, so it cancels in the mean over the batch.", False,
               "b multiplies grad log pi(a_t|s_t), which differs from step to step: it does not cancel in a single "
               "batch. It cancels only in expectation over the actions."),
    ),
)
"""After the derivation (Section 4): why a baseline adds no bias."""

TRUNCATION = ConceptCheck(
    "An episode is cut off at the 300-step limit while the lander still hovers. What does your q-hat of its last "
    "step (Exercise 4) assume about what comes next?",
    (
        Option("That nothing comes next: the future is worth 0, as after a crash or a landing.", True,
               "calc_qvals starts the sum from 0 at the end of every episode. After a landing or a crash that is right; "
               "at the time limit the lander had a future (it might still land, or crash) that the estimate drops."),
        Option("That the lander keeps hovering forever, so the future is worth the hovering reward.", False,
               "nothing in the sum looks past the last reward: the running sum starts at 0, so the future counts "
               "as 0, not as more of the same."),
        Option("Nothing: the discount makes the missing future negligible.", False,
               "gamma = 0.99 weighs a reward 100 steps ahead by 0.37: the +100 or -100 that the episode never reached "
               "would still count for a lot at the steps just before the cut."),
    ),
)
"""After the truncation paragraph (Section 3): where the student's targets are biased."""

DETACH = ConceptCheck(
    "In the actor-critic loss, why is v(s) detached in the policy term -(q-hat - v(s)) log pi(a|s)?",
    (
        Option("To save memory and time in the backward pass.", False,
               "it does save a little, but that is not why: without detach the result would be wrong, not slower."),
        Option("Otherwise the policy term would train the critic too, pushing v(s) to change the policy loss instead "
               "of to predict the return.", True,
               "in the policy term v is only a baseline, a number per state. The critic learns from the value term "
               "alone (delta * (v - q-hat)^2), which makes it estimate v_pi(s)."),
        Option("Because detaching makes the advantage estimate unbiased.", False,
               "the estimate is unbiased because v depends on the state only, not on the action; detach does not "
               "change the value of the advantage, only where gradients flow."),
    ),
)
"""In Section 7, with the AAC loss."""

VARIANCE = ThinkQuestion(
    "Why does the reward-to-go vary less from batch to batch than the total return, and why does subtracting the "
    "batch mean, or better a critic's v(s), cut the variance so much more?",
    "The total return weighs every step by rewards that came before it, which the action could not have caused: "
    "they only add noise, and the reward-to-go drops them. Both weights are still dominated by their level: early "
    "on every episode crashes (all weights strongly negative), later every episode lands (all strongly positive), "
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
