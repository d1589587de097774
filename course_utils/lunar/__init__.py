"""Tutorial 3, policy gradients and advantage actor-critic on LunarLander.

This package's top level is the notebook's front door: it re-exports exactly the names
``solutions/03_policy_gradients.ipynb`` uses as ``lunar.X`` (and ``Experience``, which it
imports). None of them is an exercise's solution: sections that build on the student's classes
use them once they pass their checks (``checking.passes``) and show the course's stored runs
(``stored_results``) or its pretrained agent until then.

Everything else lives in the modules, listed lowest layer first; each imports only modules
listed before it:

- ``env``: ``CourseLunarLander-v0`` (registered on import), ``make_env``, ``LanderVectorEnv``;
  ``sizes``: the notebook's run sizes (``SIZES``); ``questions``: its concept checks and its
  ungraded Think! question
- ``rollouts``: whole episodes of many environments in worker processes (the experiments, the
  student's long run)
- ``critic``: the critic's own regression steps that ``TrainerLoop.train(critic_steps=k)`` gives an
  actor-critic after each batch
- ``harness``: what the notebook gives ready-made: ``Experience``, ``TrainerLoop``,
  ``VectorBatchDataset (batches of whole episodes played on every core), ``monitor_episode``
  (one episode of the student's agent, with its frames), ``greedy_policy``,
  ``save_checkpoint``/``load_checkpoint`` (the notebook's ``lunar.LiveView`` is ``plotting.LiveView``)
- ``experiments``: the vpg/epg/bpg/cpg/aac experiments, every seed side by side, with their
  on-disk cache, and the course's stored runs of them (``assets/lunar_experiments.json``)
- ``evaluation``: the greedy evaluation (``evaluate``) and the course's pretrained agent
  (``load_pretrained``: its checkpoint in a frozen ``PretrainedLander``, no trainable network)
- ``solve``: the bar, ``UntilSolved`` (the student's run stopped at it) and the course's stored run
- ``variance``: the course's stored gradient-variance measurement (the same policy, many batches,
  four weights) and the score identity; ``optional``: the checks of the optional exercises
  (bootstrapping at truncation, GAE), on stored cases
- ``expected``: ``assets/lunar_expected.json`` read as data for the checks (``load_expected``,
  stored episodes; the stored test batch is ``checks.stored_batch``); it uses no solutions
- ``checks/``: the exercise checks, one module per exercise or group of exercises
  (``from course_utils.lunar.checks.agents import check_policy_net``)

The instructor's side of the tutorial is ``course_admin.lunar``: the harvested solutions, the
expected values and stored runs computed from them (``reference``, ``optional_reference``), the
course's own lander (``aac``: its network and trainer; ``numpy_ac``, ``rollouts``, ``episodes``,
``solve``), ``course train lunar`` (``train``), the variance measurement (``variance``) and the
benchmarks (``bench``). None of it ships to students: each answers one of the exercises.
"""

from course_utils.lunar import questions
from course_utils.lunar.env import ACTIONS, EVAL_SEEDS, OBSERVATIONS, make_env, make_env_for
from course_utils.lunar.evaluation import TRAINING_CURVE, evaluate, load_pretrained
from course_utils.lunar.experiments import (
    EXPERIMENTS,
    Experiment,
    critic_report,
    experiment_cache_dir,
    experiment_table,
    loss_scales,
    performance_bar,
    plot_experiment_results,
    run_experiments,
    stored_results,
)
from course_utils.lunar.harness import (
    Experience,
    TrainerLoop,
    VectorBatchDataset,
    greedy_policy,
    load_checkpoint,
    monitor_episode,
)
from course_utils.lunar.sizes import SIZES
from course_utils.lunar.solve import (
    UntilSolved,
    plot_solve_run,
    report_evaluation,
    solve_report,
    student_run_report,
    summary,
)
from course_utils.lunar.variance import plot_variance, score_identity, stored_variance
from course_utils.lunar.variance import report as variance_report
from course_utils.plotting import LiveView

__all__ = [
    "ACTIONS",
    "EVAL_SEEDS",
    "EXPERIMENTS",
    "Experience",
    "Experiment",
    "LiveView",
    "OBSERVATIONS",
    "SIZES",
    "TRAINING_CURVE",
    "TrainerLoop",
    "UntilSolved",
    "VectorBatchDataset",
    "evaluate",
    "critic_report",
    "experiment_cache_dir",
    "experiment_table",
    "greedy_policy",
    "load_checkpoint",
    "load_pretrained",
    "loss_scales",
    "make_env",
    "make_env_for",
    "monitor_episode",
    "performance_bar",
    "plot_experiment_results",
    "plot_variance",
    "questions",
    "run_experiments",
    "score_identity",
    "solve_report",
    "student_run_report",
    "stored_results",
    "stored_variance",
    "summary",
    "plot_solve_run",
    "report_evaluation",
    "variance_report",
]
