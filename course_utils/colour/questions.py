"""Tutorial 2's concept checks, its numeric question and its Think! question (not graded): shown in
the notebook with ``colour.questions.NAME.show()`` and ``colour.questions.NAME.reveal(my_answer)``."""

from course_utils.questions import ConceptCheck, Mistake, NumericQuestion, Option, ThinkQuestion

MEMORY_CONTENTS = ConceptCheck(
    "The agent will replay a mode-1 gradient step while it trains on mode 2, with the weights it has by then. "
    "What should the memory keep of that step?",
    (
        Option("The step's loss tensor, to call backward(retain_graph=True) on it again later", False,
               "a stored loss keeps its whole autograd graph alive (many times the size of the trials), and its "
               "gradient is the one of the old weights: replaying it would push the agent the way it needed to "
               "move back then, not now."),
        Option("The inputs, actions, rewards and the critic's value of each state, to recompute the loss", False,
               "the values are recomputed with the current critic when the step is replayed, like the rest of the "
               "loss. What cannot be recomputed is the probability the agent of back then gave each action: without "
               "it the loss cannot correct for the agent having changed since (the importance ratio of this section)."),
        Option("A copy of the agent's weights at that step, to go back to while replaying", False,
               "weights say what the agent did, not what happened: replay needs the trials themselves (inputs, "
               "actions, rewards) to compute a loss."),
        Option("The inputs, actions, rewards and the probability the agent gave each action", True,
               "that is all the loss needs to be recomputed with the current weights, a few kilobytes per step; the "
               "probabilities let the loss correct for the agent having changed since (the importance ratio)."),
    ),
)

FRESH_RATIO = ConceptCheck(
    "What is the importance ratio rho = pi(a) / mu(a) of a trial the agent has just played, in the gradient step "
    "that follows it?",
    (
        Option("Exactly 1", True,
               "the policy that acted (mu) is the current policy (pi): the ratio only departs from 1 for experience "
               "played by an older version of the agent, which is why plain A2C never needs it."),
        Option("0, because nothing has been replayed yet", False,
               "a ratio of 0 would remove the trial from the actor's loss; fresh trials count fully, with weight 1."),
        Option("10, the cap", False,
               "the cap only bounds ratios that would be larger than 10; on fresh data pi and mu are the same "
               "probability, so the ratio is 1."),
        Option("pi(a) itself: mu is only known for trials read back from the memory", False,
               "mu is the probability the acting agent gave the action, and for a fresh trial that agent is the "
               "current one: mu = pi, so the ratio is 1 whatever pi(a) is."),
    ),
)

RATIO_CAP = ConceptCheck(
    "The loss caps the importance ratio at 10. What does the cap cost?",
    (
        Option("Nothing: capping only removes noise and leaves every trial's expected weight as it was", False,
               "it does remove variance, but by lowering the weights of some trials, which adds a bias: a trade-off, "
               "not a free lunch."),
        Option("Fresh trials are down-weighted, so mode 2 is learned more slowly than without the cap", False,
               "fresh experience has a ratio of exactly 1, far below the cap: only replayed trials can be capped."),
        Option("A bias: capped trials count less than their ratio says, in exchange for lower variance", True,
               "a capped trial counts less than its ratio says, which adds a bias (on top of those the ratio never "
               "corrected: the returns, the critic and the states are the old agent's); in exchange one rare old "
               "action can no longer dominate a step (lower variance)."),
        Option("Rare old actions then weigh more than they should, which raises the variance", False,
               "it is the other way round: the cap lowers the weight of the trials whose ratio is large (rare old "
               "actions the agent now likes), which lowers the variance at the price of a little bias."),
    ),
)

REPLAYED_RATIO = NumericQuestion(
    "A remembered mode-1 trial comes back: when it was played, the agent gave its action the probability "
    "mu(a) = 0.2; the current agent gives the same action the probability pi(a) = 0.6. With the cap of 10, what "
    "importance ratio rho weighs this trial's actor term?",
    answer=3.0,
    tolerance=0.01,
    why="rho = pi(a) / mu(a) = 0.6 / 0.2 = 3, below the cap, so it stays 3: the current agent takes this action three "
        "times as often as the agent that played it, so the trial counts three times.",
    hint="the ratio compares how likely the current agent is to take the remembered action with how likely the "
         "agent that played it was: one probability over the other, then capped.",
    mistakes=(
        Mistake(1 / 3, "that is mu / pi, upside down: the current policy is on top, rho = pi(a) / mu(a), so an action "
                       "the agent now likes more than it did counts more."),
        Mistake(10.0, "the cap only lowers ratios above 10; 0.6 / 0.2 is far below it, so the cap changes nothing "
                      "here."),
        Mistake(1.0, "a ratio of 1 is for fresh trials, played by the current agent itself; this one was played by an "
                     "older agent that gave the action another probability."),
        Mistake(0.4, "the ratio divides the two probabilities, it does not subtract them."),
    ),
)
"""After the cap: the ratio of one replayed trial, worked out by hand."""

REPLAY_COST = ThinkQuestion(
    "Does the agent learn mode 2 (and green against blue) as quickly with replay as without? What would an animal "
    "gain by replaying only some experiences, and which ones would you pick?",
    "Read it from the learning curves: on mode 2 the replay curve does not rise earlier than the curve without "
    "replay (compare the printed steps to 90%), and each mode-2 step now costs two gradient steps, so replay buys "
    "no speed: it costs computation, and its mode-1 steps pull the shared weights back towards what mode 1 taught. "
    "What it buys is the right-hand plot: mode 1 stays near where it was instead of dipping. Replaying only some "
    "experiences saves time and storage (sleep is finite, and so is a memory). Good candidates are the ones the "
    "agent is about to forget or still gets wrong: trials with a large error (|Q - V|, the idea behind prioritized "
    "replay, Schaul et al. 2016, which tutorial 4 builds), rare or surprising ones, and ones that differ from what "
    "is being learned now (here yellow, which mode 2 never shows), rather than trials that are already well "
    "predicted.",
)

CHECKS = (MEMORY_CONTENTS, FRESH_RATIO, RATIO_CAP)
THINK = (REPLAY_COST,)
