"""Tutorial 1's concept checks (instant feedback) and its numeric question. Its one Think!
question is graded by hand: its model answer lives only in the instructor's notebook."""

from course_utils.questions import ConceptCheck, Mistake, NumericQuestion, Option

DETACHED_ADVANTAGE = ConceptCheck(
    "In the actor term, the advantage G - V(s) is detached (its gradient is stopped). What would go wrong "
    "without it?",
    (
        Option("Nothing in the gradient: detaching only saves the memory and time of backpropagating through "
               "V(s).", False,
               "detaching changes the gradient, not just the memory: without it, the actor term has a gradient with "
               "respect to V(s) too, and the critic would be trained by the actor's loss."),
        Option("The value term's gradient would flow into the actor head, pulling the policy towards predicting "
               "the returns.", False,
               "the detach sits in the actor term, so it cannot change where the value term's gradient goes: that "
               "term never involves the actor head, with or without the detach."),
        Option("The actor term would also train the critic: V(s) would chase a smaller policy loss instead of the "
               "returns.", True,
               "the critic should learn V(s) from the value term alone (its squared error to the returns); through an "
               "attached advantage, the actor term would pull V(s) wherever it makes the policy loss smaller."),
    ),
)

FRESH_TASKS = ConceptCheck(
    "The fitness trains a COPY of the agent on each of 10 NEW tasks, and the agent itself never changes. Why?",
    (
        Option("Because training the agent itself on the 10 tasks, one after another, would take ten times longer.",
               False,
               "a copy trains at the same speed, so copying saves no time; the copy is there so that each task starts "
               "again from the agent's own weights."),
        Option("Because what is scored, and inherited, is how fast the agent's starting point learns new tasks.",
               True,
               "under the Baldwin effect the genes are the starting weights and the hyperparameters; what a copy "
               "learns on one task is thrown away, so a good fitness means learning fast from that start."),
        Option("Because a fixed set of 10 tasks would give an agent the same score every time it is evaluated.",
               False,
               "scores are random anyway (actions are sampled); new tasks are there so that evolution cannot favour "
               "agents that already know particular digits."),
    ),
)

LAMARCKIAN_CHILD = ConceptCheck(
    "In the Lamarckian run, what does a child start its life from?",
    (
        Option("Its parents' learned weights (each one's mean over its 10 tasks) and hyperparameters, crossed "
               "over and mutated.", True,
               "Lamarckian inheritance passes on what the parents acquired: here the mean of the weights each "
               "parent's copies reached on its 10 tasks; the hyperparameters are inherited as before."),
        Option("The weights its parents were born with, crossed over and mutated; what the parents learned is "
               "thrown away.", False,
               "that is the Baldwinian algorithm: what the parents learned is lost."),
        Option("The weights each parent reached on its last task, the most recent thing that parent learned.",
               False,
               "one task's weights lean towards that task's rewarded digit, which pays in only one new task in ten; "
               "the mean over the 10 tasks keeps what the tasks share."),
        Option("The weights of the best agent found so far, mutated, so that no good learner is ever lost.", False,
               "neither algorithm copies the best individual: parents are drawn from the tournament of the 20 best, "
               "and a child mixes two of them."),
    ),
)

CONCEPT_CHECKS = (DETACHED_ADVANTAGE, FRESH_TASKS, LAMARCKIAN_CHILD)

BEST_SURVIVES = NumericQuestion(
    "Your update_population runs one generation on a population of 50 with 5 offspring. What is the probability "
    "that the best individual of the old population is still in the population afterwards?",
    answer=0.9,
    tolerance=0.001,
    why="5 of the 50 old individuals are removed at random, whatever their scores, so each of them, the best "
        "included, stays with probability 45/50 = 0.9. Only selection looks at the scores; replacement does not "
        "(this algorithm has no elitism).",
    hint="look at how update_population picks the old individuals it removes, and whether their scores play "
         "any part in it.",
    mistakes=(
        Mistake(1.0, "replacement ignores the scores: the 5 individuals removed are drawn at random from all 50 old "
                     "ones, the best included. The tournament, which picks parents, is the only step that looks "
                     "at scores."),
        Mistake(0.1, "5/50 = 0.1 is the probability that it is removed; the question asks for the probability "
                     "that it stays."),
        Mistake(49 / 50 * 49 / 50 * 49 / 50 * 49 / 50 * 49 / 50,
                "(49/50)^5 treats the 5 removals as draws from all 50 each time, but each one removes an "
                "individual from those left: surviving all five has probability 49/50 * 48/49 * 47/48 * 46/47 * "
                "45/46."),
    ),
)
"""After Exercise 2: what random replacement means for the best individual."""
