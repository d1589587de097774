"""Tutorial 2's sizes of long runs, each ``(full, fast)``: the notebook's settings cell reads them."""

from course_utils.runtime import Sizes

SIZES = Sizes(
    gradient_steps=(1000, 300),  # A2C steps of 100 trials per mode
    eval_trials=(5000, 2000),  # trials per confusion matrix
    curve_every=(50, 25),  # gradient steps between two points of a learning curve
    curve_trials=(500, 300),  # trials per mode for each point of a learning curve
)
