"""Tutorial 4's ungraded questions: concept checks with instant feedback, a numeric question and
Think! questions with model answers (see ``course_utils.questions``)."""

from course_utils.questions import ConceptCheck, Mistake, NumericQuestion, Option, ThinkQuestion

TERMINAL_TARGET = ConceptCheck(
    "The pole fell on this transition (done = 1). What is its TD target?",
    (
        Option("r + gamma * max_a' Q_target(s', a')", False,
               "that bootstraps from a state after the end of the episode: no reward can follow it, so the terminal "
               "mask (1 - done) removes that term."),
        Option("r", True, "nothing follows the end of an episode, so the target is the last reward alone."),
        Option("0", False, "the reward of the last step still counts; only the bootstrapped future is dropped."),
        Option("max_a' Q(s', a')", False, "the target always starts from the reward actually received, r."),
    ),
)

UNIFORM_WEIGHTS = ConceptCheck(
    "With alpha = 0 every transition has the same sampling probability 1/N. What are the importance weights "
    "w_i = (N P(i))^(-beta) / max_j w_j?",
    (
        Option("All 1, whatever beta", True, "N P(i) = 1 for every i: uniform sampling needs no correction."),
        Option("1/N each", False, "the weights correct the probability relative to uniform, (N P(i))^(-beta), "
               "so they are 1 when P(i) = 1/N, not 1/N."),
        Option("Larger for transitions with larger TD errors", False,
               "it is the reverse when priorities matter (alpha > 0): frequently sampled transitions get smaller "
               "weights. With alpha = 0 the TD errors do not matter at all."),
    ),
)

BETA_BIAS = ConceptCheck(
    "Which beta removes the bias that prioritized sampling brings into the updates?",
    (
        Option("beta = 0", False, "beta = 0 makes every weight 1: no correction at all, the full bias."),
        Option("beta = beta0 = 0.6", False, "0.6 corrects part of it; that is tolerated early in training only."),
        Option("beta = alpha", False, "alpha and beta do different jobs: alpha sets how much priorities shape "
               "sampling, beta how much of the resulting bias is corrected."),
        Option("beta = 1", True, "with beta = 1 each update is multiplied by 1 / (N P(i)), which undoes sampling "
               "with probability P(i) instead of 1/N, up to the normaliser max_j w_j (a learning-rate factor that "
               "drifts as the priorities change); that is why beta is annealed to 1."),
    ),
)

IS_WEIGHT = NumericQuestion(
    "A memory holds N = 4 transitions with priorities p = (9, 4, 1, 4); alpha = 0.5 and beta = 1. What is the "
    "importance-sampling weight w_0 = (N P(0))^(-beta) / max_j w_j of the first transition?",
    answer=1 / 3,
    tolerance=0.005,
    why="p^alpha = (3, 2, 1, 2), whose total is 8, so P(0) = 3/8 and (N P(0))^-1 = 1 / 1.5 = 2/3. The largest "
        "weight is the rarest transition's, (4 * 1/8)^-1 = 2, so w_0 = (2/3) / 2 = 1/3: the transition sampled "
        "most often gets the smallest weight.",
    hint="first P(0) = p_0^alpha / sum_k p_k^alpha, then (N P(0))^(-beta), then divide by the largest weight, "
         "which belongs to the transition with the smallest priority.",
    mistakes=(
        Mistake(2 / 3, "(N P(0))^(-beta) = 2/3 is right so far; the weights are then divided by the largest one, the "
                       "rarest transition's (P = 1/8, weight 2), which keeps them all in (0, 1]."),
        Mistake(3 / 8, "3/8 is the sampling probability P(0); the weight corrects for it: (N P(0))^(-beta), divided "
                       "by the largest weight."),
        Mistake(1 / 9, "that uses the priorities without the exponent alpha: P(i) is proportional to p_i^alpha, here "
                       "the square roots (3, 2, 1, 2)."),
        Mistake(1.5, "1.5 is N P(0); the weight is its inverse to the power beta, then divided by the largest "
                     "weight."),
    ),
)
"""After Exercise 3 (the buffer's sample_batch): one weight worked out by hand."""

REPLAY_MORE = ThinkQuestion(
    "With uniform sampling every held transition is replayed equally often. Which transitions would you replay "
    "more often?",
    "The ones the agent can still learn most from: those whose outcome it predicts worst (a large TD error). On "
    "CartPole these are above all the rare last steps before the pole falls, the only transitions whose target is "
    "the reward alone (done = 1) and which tell the agent what failure looks like; the many ordinary steps "
    "in the middle of long episodes look alike and are soon predicted well. Replaying only the worst-predicted "
    "ones would fixate on a few (and on noisy ones), so they should be replayed more often, not exclusively.",
)

ALPHA_BETA = ThinkQuestion(
    "What would happen with alpha = 1 and beta fixed at 0? And why do new transitions get the maximum priority "
    "rather than, say, the mean?",
    "With alpha = 1 transitions are drawn fully in proportion to their |TD error|, and with beta = 0 every weight "
    "is 1: nothing corrects for that. The updates then follow a different distribution of data than the one the "
    "agent meets, so the Q-values it converges to are biased towards the transitions with large errors (often the "
    "noisy, rare ones), and learning can become unstable. New transitions have no TD error yet; the maximum "
    "priority makes sure each is replayed at least once soon, so that its error is measured. With the mean "
    "priority a new transition could wait a long time, or never be drawn before it is overwritten, and a "
    "surprising new experience would be missed.",
)
