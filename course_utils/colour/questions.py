"""Tutorial 2's concept checks and its Think! question (not graded): shown in the notebook with
``colour.questions.NAME.show()`` and ``colour.questions.NAME.reveal(my_answer)``."""

from course_utils.questions import ConceptCheck, Option, ThinkQuestion

MEMORY_CONTENTS = ConceptCheck(
    "The agent will replay a mode-1 gradient step while it trains on mode 2, with the weights it has by then. "
    "What should the memory keep of that step?",
    (
        Option("The step's loss tensor, to call backward(retain_graph=True) on it again later", False,
               "a stored loss keeps its whole autograd graph alive (many times the size of the trials), and its "
               "gradient is the one of the old weights: replaying it would push the agent the way it needed to "
               "move back then, not now."),
        Option("The inputs, the actions, the rewards, and the probability the agent gave each action", True,
               "that is all the loss needs to be recomputed with the current weights, a few kilobytes per step; the "
               "probabilities let the loss correct for the agent having changed since (the importance ratio)."),
        Option("Only the rewards: they are what the agent learns from", False,
               "rewards alone do not say which colours were shown or which action earned them, so no loss can be "
               "computed from them."),
        Option("A copy of the agent's weights at that step", False,
               "weights say what the agent did, not what happened: replay needs the trials themselves (inputs, "
               "actions, rewards) to compute a loss."),
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
        Option("The trial's reward divided by the largest reward", False,
               "the ratio compares two probabilities of the same action; the reward enters through the advantage, "
               "not through the ratio."),
    ),
)

RATIO_CAP = ConceptCheck(
    "The loss caps the importance ratio at 10. What does the cap cost?",
    (
        Option("The corrected gradient is then only approximately unbiased", True,
               "a capped trial counts less than it should, so the average is no longer exactly the on-policy "
               "gradient; in exchange one rare old action can no longer dominate a step (lower variance)."),
        Option("Nothing: the cap only removes noise", False,
               "it does remove variance, but by changing the weights of some trials, so the estimate acquires a small "
               "bias: a trade-off, not a free lunch."),
        Option("Fresh experience is down-weighted", False,
               "fresh experience has a ratio of exactly 1, far below the cap: only replayed trials can be capped."),
        Option("The memory must store the cap for each trial", False,
               "the cap is one constant of the loss; the memory stores the acting probabilities, nothing more."),
    ),
)

REPLAY_COST = ThinkQuestion(
    "Does the agent learn mode 2 (and green against blue) as quickly with replay as without? What would an animal "
    "gain by replaying only some experiences, and which ones would you pick?",
    "Read it from the learning curves: on mode 2 the replay curve does not rise earlier than the curve without "
    "replay (compare the printed steps to 90%), and each mode-2 step now costs two gradient steps, so replay buys "
    "no speed: it costs computation, and its mode-1 steps pull the shared weights back towards what mode 1 taught. "
    "What it buys is the right-hand plot: mode 1 stays near where it was instead of dipping. Replaying only some "
    "experiences saves time and storage (sleep is finite, and so is a memory). Good candidates are the ones the "
    "agent is about to forget or still gets wrong: trials with a large error (|Q - V|, the idea behind prioritized "
    "replay, Schaul et al. 2015, which tutorial 4 builds), rare or surprising ones, and ones that differ from what "
    "is being learned now (here yellow, which mode 2 never shows), rather than trials that are already well "
    "predicted.",
)

CHECKS = (MEMORY_CONTENTS, FRESH_RATIO, RATIO_CAP)
THINK = (REPLAY_COST,)
