"""Running nbgrader for the course: its configuration and its converters in this process.

``course_config(course)`` is the repository's ``nbgrader_config.py`` pointed at a course
folder; ``run_converter`` runs an nbgrader converter (``GenerateAssignment``, ``Autograde``,
``GenerateFeedback``) in this process, as nbgrader's own ``NbGraderAPI`` does.
"""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

from course_utils.paths import ROOT


def tools_on_path() -> None:
    """nbgrader runs the ``alembic`` command by name: make this environment's scripts findable
    even when the environment is not activated."""
    scripts = str(Path(sys.executable).parent)
    if scripts not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = scripts + os.pathsep + os.environ.get("PATH", "")


def course_config(course: Path):
    """The course's nbgrader_config.py, pointed at the course folder ``course``."""
    from traitlets.config import Config
    from traitlets.config.loader import PyFileConfigLoader

    config = Config()
    if (ROOT / "nbgrader_config.py").exists():
        config = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config()
    config.CourseDirectory.root = str(course)
    config.CourseDirectory.db_url = f"sqlite:///{course / 'gradebook.db'}"
    return config


@functools.lru_cache(maxsize=1)
def alembic_head() -> str:
    """The revision nbgrader stamps on every new gradebook, from alembic's Python API.

    nbgrader finds it by running the ``alembic heads`` command, a new Python process that
    took 3.5 s here, and ``course autograde`` creates two new gradebooks per run (the
    instructor's, the template). Same answer once per process (a test compares the two)."""
    from alembic.config import Config
    from alembic.script import ScriptDirectory
    from nbgrader import dbutil

    config = Config()
    config.set_main_option("script_location", dbutil.ALEMBIC_DIR)
    return ScriptDirectory.from_config(config).get_current_head()


def run_converter(converter_class, config, assignment: str, student: str | None = None) -> dict:
    """Run an nbgrader converter (Autograde, GenerateFeedback, GenerateAssignment) in this
    process, as nbgrader's own ``NbGraderAPI`` does: {"success", "log", "error"}."""
    import nbgrader.api
    from nbgrader.coursedir import CourseDirectory

    nbgrader.api.get_alembic_version = alembic_head  # see alembic_head
    from nbgrader.utils import capture_log, temp_attrs

    coursedir = CourseDirectory(config=config)
    names = {"assignment_id": assignment, **({"student_id": student} if student else {})}
    with temp_attrs(coursedir, **names):
        app = converter_class(coursedir=coursedir, config=config)
        app.force = True
        for flag in ("create_student", "create_assignment"):
            if hasattr(app, flag):
                setattr(app, flag, True)
        return capture_log(app)
