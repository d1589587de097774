"""The ``course`` command. What every install has:

course lab                 start JupyterLab on the notebooks in this folder
course check               check that the install is complete

Where the instructor package (``course_admin``) is installed, its commands join these: ``course
train``, ``bench``, ``release``, ``claims``, ``bundle`` and ``autograde`` (``course_admin.cli``).
The student package does not depend on it: it is looked up by name, and a student's install
does not have it.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys

INSTRUCTOR_COMMANDS = "course_admin.cli"
"""The module whose ``add_commands(subparsers)`` adds the instructor's commands, when installed."""


def _lab(args) -> int:
    import os
    import subprocess
    from pathlib import Path

    command = [sys.executable, "-m", "jupyterlab", "--ServerApp.root_dir=."]
    if Path("notebooks").is_dir():
        command.append("--LabApp.default_url=/lab/tree/notebooks")
    if hasattr(os, "getuid") and os.getuid() == 0:
        command.append("--allow-root")  # containers run as root
    return subprocess.call(command)


def _check(args) -> int:
    from course_utils import install_check

    return 1 if install_check.main() else 0


def _instructor_commands():
    """``course_admin.cli`` where the instructor package is installed, else None."""
    if importlib.util.find_spec("course_admin") is None:
        return None
    return importlib.import_module(INSTRUCTOR_COMMANDS)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="course", description="rl-course tools for students and instructors.")
    sub = parser.add_subparsers(dest="command", required=True)

    lab = sub.add_parser("lab", help="start JupyterLab on the course's notebooks (in this folder)")
    lab.set_defaults(func=_lab)

    check = sub.add_parser("check", help="check that the install is complete: checkpoints, assets, notebook stack")
    check.set_defaults(func=_check)

    admin = _instructor_commands()
    if admin is not None:
        admin.add_commands(sub)
    args = parser.parse_args(argv)
    if admin is None:
        return args.func(args)
    return admin.run(args)


if __name__ == "__main__":
    sys.exit(main())
