"""The course's one timetable: what each tutorial needs first, its sections and their minutes.

The README's tutorial table, each notebook's time line and the time marks on its section
headings all come from here: ``course release`` writes them (``apply_to_readme``,
``apply_to_notebook``) and ``course release --check`` fails when one of them disagrees.
Minutes are for a student who reads everything, plays the game, writes every exercise and
waits for the runs at full size on a laptop CPU.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

README_START = "<!-- tutorial table: written by `course release` from course_admin/schedule.py -->"
README_END = "<!-- end of tutorial table -->"
TIME_LINE = re.compile(r"^\*\*(Estimated )?[Tt]ime:.*$", re.MULTILINE)
MARK = re.compile(r"\s*\*\(~\d+ min\)\*\s*$")


SECTION_8_OTHER_MINUTES = 10
"""Tutorial 3's Section 8 besides its training cell: reading, the course's stored lander run,
its evaluation and the two agents side by side."""
SECTION_8_UNTIMED_MINUTES = 15
"""Section 8's minutes while the course has no timing of its training cell's current code
(``assets/lunar_student_run.json`` missing): an estimate, used until the cell is timed.
Once ``course train lunar-student-run`` writes the file, ``course release --check`` reports the
timetable stale until ``course release`` writes the timed minutes."""


def section_8_minutes(path=None) -> int:
    """Tutorial 3's Section 8 in minutes: ``SECTION_8_OTHER_MINUTES`` plus the wall-clock minutes
    (rounded up) of the course's own run of its training cell at full size, with the exercise's
    reference classes until they pass the bar: ``assets/lunar_student_run.json``, written by
    ``course train lunar-student-run`` (``path`` another such file); ``SECTION_8_UNTIMED_MINUTES``
    where there is no such file yet. A student waits through that run: its time is measured."""
    from course_utils.paths import ASSETS

    path = path or ASSETS / "lunar_student_run.json"
    if not path.exists():
        return SECTION_8_UNTIMED_MINUTES
    return SECTION_8_OTHER_MINUTES + math.ceil(json.loads(path.read_text())["wall_s"] / 60)


@dataclass(frozen=True)
class Tutorial:
    """One tutorial: its notebook, what it teaches and how long each of its sections takes.

    ``sections`` pairs each timed ``## `` heading of the notebook (without its time mark) with
    its minutes; ``needs`` is what a student should know first; ``reuses`` what it takes from
    earlier tutorials.
    """

    number: int
    notebook: str
    title: str
    summary: str
    sections: tuple[tuple[str, int], ...]
    needs: str
    reuses: str

    @property
    def minutes(self) -> int:
        """Total minutes: the sum of the sections'."""
        return sum(minutes for _, minutes in self.sections)

    def time_line(self) -> str:
        """The bold time line under the notebook's title."""
        return (f"**Time: about {self.minutes} minutes**, split over the sections as their headings show. "
                f"**You need first:** {self.needs}.")


TUTORIALS: tuple[Tutorial, ...] = (
    Tutorial(
        1, "01_harlow_meta_rl", "Harlow meta-RL and the Baldwin effect",
        "learning to learn: play Harlow's experiment, then an A2C agent with an LSTM whose starting point "
        "is evolved by a genetic algorithm (exercises: Baldwinian fitness, the genetic algorithm, Lamarckian "
        "inheritance)",
        (
            ("Section 0: Play the game", 5),
            ("Section 1: Harlow's experiment and an A2C agent", 20),
            ("Section 2: The Baldwin effect", 40),
            # 10 of its minutes are writing Lamarckian inheritance (Exercise 3)
            ("Section 3: Lamarck against Baldwin", 25),
            ("Section 4: A newbie and an evolved agent", 15),
            ("Section 5: You against the agents", 5),
        ),
        needs="Python, NumPy and PyTorch basics (a module, an optimizer step)",
        reuses="nothing: it starts the course and introduces A2C",
    ),
    Tutorial(
        2, "02_colour_replay", "Colour replay",
        "forgetting when the world changes, and a replay memory that prevents it (exercises: a wrap-around "
        "replay memory, the actor loss weighted by the capped importance ratio; the discounted returns, optional)",
        (
            ("Section 0: Play the game", 5),
            ("Section 1: A changing environment", 5),
            # 5 of its minutes are the optional discounted returns: the timetable's student writes every
            # exercise, graded or not
            ("Section 2: An A2C agent in a changing environment", 20),
            # 10 of its minutes are the replay actor loss exercise (Exercise 2)
            ("Section 3: Replay", 45),
        ),
        needs="Python, NumPy and PyTorch basics; tutorial 1's A2C box",
        reuses="tutorial 1's A2C loss (without the LSTM)",
    ),
    # Tutorial 3 stays one notebook of two sittings, with "A good place to stop" at the end of
    # Section 6: its second half builds on the student's first-half classes (AACPolicyAgent extends
    # PolicyAgent; the AAC run uses their PolicyTrainer, Episode, TrainBatch, ActionEntropyLoss),
    # which a second notebook would have to write again or import, and "Run All Above" after a
    # restart is cheap because the experiments reload from their on-disk cache.
    Tutorial(
        3, "03_policy_gradients", "Policy gradients on LunarLander",
        "the policy gradient derived, its score-function estimator checked against the exact gradient of a "
        "bandit, and its variance measured; REINFORCE, baselines, entropy, advantage actor-critic, with every "
        "piece of the RL written by you and a pretrained agent that lands",
        (
            ("Section 1: The lunar lander", 10),
            # the episode recorder and the batch generator are given: read, not written
            ("Section 2: A policy network and an agent", 20),
            ("Section 3: Training data", 20),
            # the derivation, the bandit exercise (15 min: a few lines and the check's variances), the
            # measurement and the losses
            ("Section 4: The policy gradient and three losses", 65),
            ("Section 5: Training", 15),
            ("Section 6: Experiments", 15),
            ("Section 7: Advantage actor-critic (AAC)", 40),
            # its training cell's minutes are the course's timed run of it (lunar_student_run.json)
            ("Section 8: Training longer, and the course's agent", section_8_minutes()),
            ("Questions", 15),
        ),
        needs="Python, NumPy and PyTorch (modules, autograd, optimizers); tutorial 1's A2C box",
        reuses="the discounted return of tutorial 2, the actor-critic of tutorials 1 and 2",
    ),
    Tutorial(
        4, "04_prioritized_replay", "Prioritized replay DQN",
        "a circular batch replay memory, sum/min trees, proportional prioritized replay, the "
        "importance-weighted TD loss of a DQN on CartPole, uniform vs prioritized",
        (
            ("Section 0: Watch a trained agent", 5),
            ("Section 1: A circular replay memory", 20),
            ("Section 2: Prioritized experience replay", 60),
            ("Section 3: Prioritized replay meets the DQN", 25),
            ("Section 4: Uniform or prioritized?", 15),
        ),
        needs="Python, NumPy and PyTorch; Q-learning (the Bellman target); tutorial 2's replay memory",
        reuses="tutorial 2's replay memory, grown into batches and priorities",
    ),
)


def tutorial(notebook: str) -> Tutorial:
    """The tutorial whose notebook is named ``notebook`` (stem, e.g. ``"02_colour_replay"``)."""
    for item in TUTORIALS:
        if item.notebook == notebook:
            return item
    raise KeyError(f"No tutorial has the notebook {notebook!r}; known: {[t.notebook for t in TUTORIALS]}.")


def readme_table() -> str:
    """The README's table of tutorials, between its two marker comments."""
    rows = ["| # | tutorial | what you learn | you need first | time |", "|---|---|---|---|---|"]
    for t in TUTORIALS:
        rows.append(f"| {t.number} | [{t.title}](notebooks/{t.notebook}.ipynb) | {t.summary} | {t.needs} | "
                    f"~{t.minutes} min |")
    return "\n".join([README_START, *rows, README_END])


def student_table() -> str:
    """The table of tutorials in the student bundle's README (notebook files, no links)."""
    rows = ["| # | notebook | what you learn | you need first | about |", "|---|---|---|---|---|"]
    rows += [f"| {t.number} | `{t.notebook}.ipynb` | {t.summary} | {t.needs} | {t.minutes} min |" for t in TUTORIALS]
    return "\n".join(rows)


def apply_to_readme(text: str) -> str:
    """``text`` (the README) with its tutorial table rewritten from ``TUTORIALS``."""
    start, end = text.find(README_START), text.find(README_END)
    if start < 0 or end < start:
        raise ValueError(f"The README has no tutorial table between {README_START!r} and {README_END!r}: "
                         "put both markers where the table belongs.")
    return text[:start] + readme_table() + text[end + len(README_END):]


def _heading_text(line: str) -> str:
    return MARK.sub("", line[3:]).strip()


def apply_to_notebook(nb: dict, notebook: str) -> dict:
    """Rewrite ``nb`` (a notebook as JSON) in place: the time line of its first cell and the time
    mark of every section heading listed in the timetable. Returns ``nb``.

    Raises ``ValueError`` when the first cell has no time line or a listed heading is missing, so
    renaming a section without updating the timetable fails at release time.
    """
    t = tutorial(notebook)
    first = nb["cells"][0]
    source = "".join(first["source"])
    if not TIME_LINE.search(source):
        raise ValueError(f"{notebook}: the first cell needs a line starting with '**Time:' for the timetable.")
    first["source"] = _lines(TIME_LINE.sub(lambda _: t.time_line(), source, count=1))
    minutes = dict(t.sections)
    found = set()
    for cell in nb["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        lines = "".join(cell["source"]).split("\n")
        changed = False
        for i, line in enumerate(lines):
            if line.startswith("## ") and _heading_text(line) in minutes:
                heading = _heading_text(line)
                found.add(heading)
                new = f"## {heading} *(~{minutes[heading]} min)*"
                if new != line:
                    lines[i], changed = new, True
        if changed:
            cell["source"] = _lines("\n".join(lines))
    missing = [h for h in minutes if h not in found]
    if missing:
        raise ValueError(f"{notebook}: the timetable lists sections the notebook does not have: {missing}. "
                         "Update course_admin/schedule.py.")
    return nb


def _lines(text: str) -> list[str]:
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _updated_files() -> dict:
    """Every file the timetable writes, as {path: (current text, text it should have)}."""
    from course_utils.paths import ROOT, SOLUTIONS

    files = {}
    readme = ROOT / "README.md"
    if readme.exists():
        text = readme.read_text()
        files[readme] = (text, apply_to_readme(text))
    for t in TUTORIALS:
        path = SOLUTIONS / f"{t.notebook}.ipynb"
        if not path.exists():
            continue
        text = path.read_text()
        nb = apply_to_notebook(json.loads(text), t.notebook)
        files[path] = (text, json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    return files


def write_schedule() -> list:
    """Write the timetable into the README and the solution notebooks; returns the files changed."""
    changed = []
    for path, (old, new) in _updated_files().items():
        if old != new:
            path.write_text(new)
            changed.append(path)
    return changed


def stale_schedule() -> list[str]:
    """Files whose tutorial table, time line or section marks disagree with the timetable."""
    return [f"{path.name} disagrees with course_admin/schedule.py" for path, (old, new) in _updated_files().items()
            if old != new]
