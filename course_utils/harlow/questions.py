"""Tutorial 1's concept checks (instant feedback). Its one Think! question is graded by hand:
its model answer lives only in the instructor's notebook."""

from course_utils.questions import ConceptCheck, Option

DETACHED_ADVANTAGE = ConceptCheck(
    "In the actor term, the advantage G - V(s) is detached (its gradient is stopped). What would go wrong "
    "without it?",
    (
        Option("The actor term would also move the critic: V(s) would be pushed to make the chosen actions look "
               "better or worse, instead of only towards the returns.", True,
               "the critic should learn V(s) from the value term alone (its squared error to the returns); through an "
               "attached advantage, the actor term would pull V(s) wherever it makes the policy loss smaller."),
        Option("Nothing: detaching only saves memory.", False,
               "detaching changes the gradient, not just the memory: without it, the actor term has a gradient with "
               "respect to V(s) too, and the critic would be trained by the actor's loss."),
        Option("The policy would stop learning, because the advantage would then be zero.", False,
               "the advantage's value is the same detached or not; detaching only stops gradients flowing through it "
               "into the critic."),
    ),
)

FRESH_TASKS = ConceptCheck(
    "The fitness trains a COPY of the agent on each of 10 NEW tasks, and the agent itself never changes. Why?",
    (
        Option("Because what is scored, and inherited, is how well the agent's starting point learns any new task.",
               True,
               "under the Baldwin effect the genes are the starting weights and the hyperparameters; what a copy "
               "learns on one task is thrown away, so a good fitness means learning fast from that start."),
        Option("Because training the agent itself would be slower.", False,
               "a copy trains at the same speed; the copy is there so that each task starts again from the agent's "
               "own weights."),
        Option("Because the same 10 tasks would always give the same score.", False,
               "scores are random anyway (actions are sampled); new tasks are there so that evolution cannot favour "
               "agents that already know particular digits."),
    ),
)

LAMARCKIAN_CHILD = ConceptCheck(
    "In the Lamarckian run, what does a child start its life from?",
    (
        Option("Its parents' weights after they learned their tasks (crossed over and mutated), with inherited "
               "hyperparameters.", True,
               "Lamarckian inheritance passes on what the parents acquired: here the mean of the weights each "
               "parent's copies reached on its 10 tasks."),
        Option("The weights its parents were born with.", False,
               "that is the Baldwinian algorithm: what the parents learned is lost."),
        Option("The weights of the best agent ever found.", False,
               "neither algorithm copies the best individual: parents are drawn from the tournament of the 20 best, "
               "and a child mixes two of them."),
    ),
)

CONCEPT_CHECKS = (DETACHED_ADVANTAGE, FRESH_TASKS, LAMARCKIAN_CHILD)
