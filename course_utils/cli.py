"""The ``course`` command: train, bench, release, autograde.

course train colour        regenerate tutorial 2's checkpoints and update the registry
course bench colour        print measured speed and memory figures as one JSON line
course release [--check]   generate notebooks/ from solutions/ (or check it is current)
course autograde SUBS      grade a folder of submissions; write grades CSV and feedback
"""

from __future__ import annotations

import argparse
import sys
import time


def _train(args) -> int:
    from course_utils import checkpoints

    if args.name == "colour":
        from course_utils.colour import train_colour_agents

        start = time.perf_counter()
        agents = train_colour_agents(seed=1, progress=not args.quiet)
        for name, agent in agents.items():
            entry = checkpoints.save_checkpoint(agent.state_dict(), f"colour_{name}", "course train colour")
            print(f"colour_{name}: {entry['file']} {entry['size']} bytes sha256 {entry['sha256'][:12]}...")
        print(f"trained in {time.perf_counter() - start:.1f} s; registry: {checkpoints.REGISTRY}")
    return 0


def _bench(args) -> int:
    from course_utils import bench

    bench.run(args.name)
    return 0


def _release(args) -> int:
    from course_utils import grading

    if args.check:
        stale = grading.stale_notebooks()
        if stale:
            for line in stale:
                print(f"stale: {line}", file=sys.stderr)
            print("notebooks/ does not match solutions/: run `course release` and commit the result.", file=sys.stderr)
            return 1
        print("notebooks/ is up to date with solutions/.")
        return 0
    for path in grading.release():
        print(f"released {path}")
    return 0


def _autograde(args) -> int:
    from course_utils import grading

    report = grading.autograde(args.submissions, out=args.out)
    print(report.summary())
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="course", description="rl-course tools for students and instructors.")
    sub = parser.add_subparsers(dest="command", required=True)

    train = sub.add_parser("train", help="train and register pretrained checkpoints")
    train.add_argument("name", choices=["colour"])
    train.add_argument("--quiet", action="store_true", help="no progress bars")
    train.set_defaults(func=_train)

    bench = sub.add_parser("bench", help="print measured figures as one JSON line")
    bench.add_argument("name", choices=["colour", "per"])
    bench.set_defaults(func=_bench)

    release = sub.add_parser("release", help="generate student notebooks from solutions/")
    release.add_argument("--check", action="store_true", help="fail if notebooks/ is stale instead of writing")
    release.set_defaults(func=_release)

    grade = sub.add_parser("autograde", help="autograde a folder of submitted notebooks or zips")
    grade.add_argument("submissions", help="folder with <student>.ipynb, <student>.zip or <student>/<notebook>.ipynb")
    grade.add_argument("--out", default="grades", help="folder for grades.csv and feedback (default: grades)")
    grade.set_defaults(func=_autograde)

    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
