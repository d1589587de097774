"""The instructor's ``course`` commands, added to the student package's command line
(``course_utils.cli``) where this package is installed:

course train NAME          regenerate a tutorial's checkpoints and update the registry
                           (colour: tutorial 2, harlow: tutorial 1, lunar: tutorial 3)
course bench NAME          print measured figures as one JSON line (see course_admin.bench)
course release [--check]   generate notebooks/ and the harvested solutions from solutions/
                           (or check they are current, and that no stored result
                           contradicts a notebook's claim)
course claims              the table of the notebooks' claims, their stored figures, holds
course autograde SUBS      grade a folder of submissions; write grades CSV and feedback
course bundle OUT          write the student bundle (notebooks, the student wheel, a README)
course where GRADE_ID      every place one graded exercise is written, as path:line
"""

from __future__ import annotations

import sys
from pathlib import Path

TRAINERS = {
    "cartpole": "course_admin.replay.train:train_and_register",
    "colour": "course_admin.colour.train:train_and_register",
    "harlow": "course_admin.harlow.train:train_and_register",
    "harlow-runs": "course_admin.harlow.train:write_stored_runs",
    "lunar": "course_admin.lunar.train:train_and_register",
    "lunar-experiments": "course_admin.lunar.reference:train_experiments",
    "lunar-student-run": "course_admin.lunar.bench:store_student_run",
    "lunar-variance": "course_admin.lunar.variance:store_variance",
}
"""``course train NAME`` calls ``module:function(progress=...)``, which trains, saves the
checkpoints with ``checkpoints.save_checkpoint`` and prints what it wrote."""


INSTRUCTOR_TOOLS = {"nbgrader", "nbclient", "nbformat", "nbconvert", "dask", "distributed", "bleach", "tinycss2"}
"""Installed by ``pip install 'rl-course[grading]'``, not by a student's ``pip install rl-course``."""


def _resolve(target: str):
    import importlib

    module, _, function = target.partition(":")
    return getattr(importlib.import_module(module), function)


def _train(args) -> int:
    _resolve(TRAINERS[args.name])(progress=not args.quiet)
    return 0


def _bench(args) -> int:
    from course_admin import bench

    bench.run(args.name)
    return 0


RELEASE = (
    ("timetable written into", "course_admin.schedule:write_schedule", "course_admin.schedule:stale_schedule"),
    ("harvested", "course_admin.grading.harvest:write_solutions", "course_admin.grading.harvest:stale_solutions"),
    ("released", "course_admin.grading:release", "course_admin.grading:stale_notebooks"),
    ("wrote", "course_admin.grading.student_notebooks:write_names", "course_admin.grading.student_notebooks:stale_names"),
    # after the harvest: the expected values and the check records come from the solutions just written
    ("wrote", "course_admin.lunar.reference:write_expected", "course_admin.lunar.reference:stale_expected"),
    ("wrote", "course_admin.replay.reference:write_expected", "course_admin.replay.reference:stale_expected"),
    ("wrote", "course_admin.colour.expected:write_expected", "course_admin.colour.expected:stale_expected"),
    ("wrote", "course_admin.grading.judging:write_check_records", "course_admin.grading.judging:stale_check_records"),
)
"""What ``course release`` writes, in order, as (verb, ``module:write``, ``module:stale``): each
``write()`` returns the path or paths it wrote, each ``stale()`` the descriptions of what differs
from ``solutions/`` (empty: current)."""


def _stale() -> list[str]:
    """What ``course release`` would change (``course release --check``; ``course bundle``
    refuses a stale tree)."""
    return [line for _, _, stale in RELEASE for line in _resolve(stale)()]


def _release(args) -> int:
    if args.check:
        from course_admin import claims

        contradicted = claims.contradicted()
        for line in contradicted:
            print(f"contradicted: {line}", file=sys.stderr)
        if contradicted:
            print("a stored result contradicts what a notebook says (`course claims` shows the table): change the "
                  "text and its claim in <tutorial>/claims.py, or the run.", file=sys.stderr)
            return 1
        stale = _stale()
        if stale:
            for line in stale:
                print(f"stale: {line}", file=sys.stderr)
            print("notebooks/, the harvested solutions or the expected values do not match solutions/: "
                  "run `course release` and commit the result.", file=sys.stderr)
            return 1
        print("notebooks/, the harvested solutions and the expected values are up to date with solutions/.")
        return 0
    for verb, write, _ in RELEASE:
        written = _resolve(write)()
        for path in written if isinstance(written, list | tuple) else [written]:
            print(f"{verb} {path}")
    return 0


def _claims(args) -> int:
    from course_admin import claims

    print(claims.claims_table())
    return 1 if claims.contradicted() else 0


def _bundle(args) -> int:
    from course_admin.grading.bundle import BundleError, build_bundle

    try:
        result = build_bundle(args.out, stale=_stale())
    except BundleError as error:
        print(f"course bundle: {error}", file=sys.stderr)
        return 1
    print(f"bundle: {result['folder']} and {result['zip']}")
    print(f"student wheel: {result['wheel'].name}; left out: the instructor package ({len(result['dropped'])} files)")
    return 0


def _where(args) -> int:
    from course_admin.where import WhereError, report

    try:
        print(report(args.grade_id))
    except WhereError as error:
        print(f"course where: {error}", file=sys.stderr)
        return 2
    return 0


def _count(low: int):
    """An argparse type: a whole number of at least ``low``, else a message saying so."""
    import argparse

    def read(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{value} is less than {low}")
        return value

    return read


def _positive(text: str) -> float:
    """An argparse type: a number above 0."""
    import argparse

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text} is not above 0")
    return value


def _autograde(args) -> int:
    from course_admin import grading
    from course_admin.grading.dispatch import SchedulerUnreachable
    from course_admin.grading.intake import IntakeLimits
    from course_admin.grading.late import TimesError
    from course_admin.grading.roster import RosterError
    from course_admin.grading.sandbox import Limits
    from course_admin.grading.student_notebooks import GradebookConflict
    from course_admin.grading.term import TermError

    limits = Limits(
        cell_timeout=args.cell_timeout,
        wall_timeout=args.timeout,
        memory_mb=args.memory,
        output_mb=args.output_mb,
        notebook_mb=args.notebook_mb,
        landlock=not args.no_landlock,
        skip_given=not args.run_every_cell,
    )
    if not Path(args.submissions).is_dir():
        print(f"course autograde: {args.submissions} is not a folder: unzip the LMS's download (or put one notebook "
              "or zip per student) in a folder and give that folder", file=sys.stderr)
        return 2
    try:
        report = grading.autograde(
            args.submissions,
            out=args.out,
            workers=args.workers,
            scheduler=args.scheduler,
            limits=limits,
            intake=IntakeLimits(notebook_mb=args.max_notebook_mb),
            force=args.force,
            roster=args.roster,
            term=args.term,
            times=args.times,
        )
    except (RosterError, TermError, TimesError, SchedulerUnreachable, GradebookConflict) as error:  # what to fix; nothing graded
        print(f"course autograde: {error}", file=sys.stderr)
        return 2
    print(report.summary())  # student names and messages are escaped: nothing reaches the terminal raw
    print(f"summary: {report.summary_path}")
    for path in report.exports:
        print(f"LMS import: {path}")
    if report.similar:
        print(f"similar answers: {len(report.similar)} pairs, see {report.summary_path.parent / 'similarity.html'}")
    return 0


def add_commands(sub) -> None:
    """Add the instructor's commands to ``course``'s subparsers (``course_utils.cli.main``)."""

    train = sub.add_parser("train", help="train and register pretrained checkpoints")
    train.add_argument("name", choices=sorted(TRAINERS))
    train.add_argument("--quiet", action="store_true", help="no progress bars")
    train.set_defaults(func=_train)

    bench = sub.add_parser("bench", help="print measured figures as one JSON line")
    from course_admin.bench import BENCHMARKS

    bench.add_argument("name", choices=sorted(BENCHMARKS))
    bench.set_defaults(func=_bench)

    release = sub.add_parser("release", help="generate student notebooks from solutions/")
    release.add_argument("--check", action="store_true", help="fail if notebooks/ is stale instead of writing")
    release.set_defaults(func=_release)

    claims = sub.add_parser("claims", help="every claim the notebooks make, its stored figures, and whether it holds")
    claims.set_defaults(func=_claims)

    bundle = sub.add_parser("bundle", help="write the student bundle: notebooks, the student wheel, a README")
    bundle.add_argument("out", help="a new folder for the bundle (a zip of it is written beside it)")
    bundle.set_defaults(func=_bundle)

    where = sub.add_parser("where", help="every place one graded exercise is written: index, cells, check, solution, tests")
    where.add_argument("grade_id", help="a graded cell's grade id (test_aac_loss) or its solution cell's (aac_loss)")
    where.set_defaults(func=_where)

    grade = sub.add_parser("autograde", help="autograde a folder of submitted notebooks or zips")
    grade.add_argument("submissions", help="folder with <student>.ipynb, <student>.zip or <student>/<notebook>.ipynb")
    grade.add_argument("--out", default="grades", help="folder for grades.csv and feedback (default: grades)")
    grade.add_argument("--workers", type=_count(0), default=None, help="local Dask workers (default: one per core; 0: no Dask)")
    grade.add_argument("--scheduler", default=None, help="address of an existing Dask scheduler, e.g. tcp://10.0.0.5:8786")
    grade.add_argument("--cell-timeout", type=_count(1), default=120,
                       help="seconds per cell before it is interrupted (default 120)")
    grade.add_argument("--timeout", type=_count(1), default=900,
                       help="seconds per submission, then its kernel is killed (default 900)")
    grade.add_argument("--memory", type=_count(1), default=4096, help="address-space limit of each kernel in MB (default 4096)")
    grade.add_argument("--output-mb", type=_positive, default=2.0, help="output kept per notebook in MB (default 2)")
    grade.add_argument("--notebook-mb", type=_positive, default=8.0,
                       help="largest autograded notebook and feedback page kept in MB (default 8)")
    grade.add_argument("--max-notebook-mb", type=_positive, default=50.0,
                       help="largest notebook read, on disk or in a zip, in MB (default 50)")
    grade.add_argument("--no-landlock", action="store_true", help="do not restrict the kernel's filesystem and network access")
    grade.add_argument("--run-every-cell", action="store_true",
                       help="run the given cells no grade depends on too (demonstrations, plots): slower, fuller feedback")
    grade.add_argument("--force", action="store_true", help="grade every submission again, even unchanged ones")
    grade.add_argument("--roster", default=None,
                       help="the class list: Canvas's gradebook export, Moodle's grading worksheet, or a CSV with id, login,"
                       " name and section columns (students with no submission get a 0 row; strangers are listed apart)")
    grade.add_argument("--term", default=None,
                       help="the term file (TOML): due dates, extensions, late policy, feedback policy, similarity threshold")
    grade.add_argument("--times", action="append", default=[], metavar="[TUTORIAL=]CSV",
                       help="submission times: a CSV with ids and Canvas's submitted_at, or Moodle's grading worksheet;"
                       " repeat per tutorial")
    grade.set_defaults(func=_autograde)


def run(args) -> int:
    """Run the parsed command; a missing instructor tool is named with how to install it."""
    try:
        return args.func(args)
    except ModuleNotFoundError as error:
        if error.name not in INSTRUCTOR_TOOLS:
            raise
        print(
            f"`course {args.command}` needs the instructor's tools ({error.name} is not installed): "
            "pip install 'rl-course[grading]'",
            file=sys.stderr,
        )
        return 2
