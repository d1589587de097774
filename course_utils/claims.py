"""The course's claims as data: each quantitative or comparative statement a notebook's text
makes, declared once, as a predicate over the result it rests on.

A ``Claim`` names the result (``source``: a stored result in ``assets/``, read by a loader its
tutorial declares in ``<tutorial>/claims.py`` as ``RESULTS``), computes the figures its sentence
quotes (``figures(result) -> dict``), says the sentence (``says``: a format string over those
figures) and the condition that makes it true (``holds(figures) -> bool``). Each tutorial
declares its claims in ``<tutorial>/claims.py`` (``CLAIMS``); this module collects them.

- The notebook prints the sentence with ``show_claim(name)``: the numbers in the text are the
  result's, so the text cannot drift from the figure beside it.
- ``course release --check`` fails when a stored result contradicts a claim, and ``course
  claims`` prints the table a reviewer audits (``course_admin.claims``, which adds the claims
  only the solution notebooks make, about a model answer's figures).
- Claims over a result the notebook computes live (``source="live:..."``) are checked by the
  tests that run that computation at the notebook's size (and full size under ``--run-slow``),
  with the same ``figures`` and ``holds``.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from dataclasses import dataclass

TUTORIALS = ("harlow", "colour", "lunar", "replay")


@dataclass(frozen=True)
class Claim:
    """One statement of a notebook, and what makes it true.

    ``name``: ``<tutorial>.<short_name>``. ``where``: the notebook section that makes it.
    ``source``: a stored result's name (``stored_loaders``), or ``live:<what computes it>``.
    ``figures(result)``: the numbers the sentence quotes, by name. ``says``: the sentence, a
    format string over ``figures`` (``"{aac:.0f}"``). ``holds(figures)``: True when the result
    bears the sentence out."""

    name: str
    where: str
    source: str
    figures: Callable[[dict], dict]
    says: str
    holds: Callable[[dict], bool]

    @property
    def stored(self) -> bool:
        return not self.source.startswith("live:")

    def text(self, result: dict | None = None) -> str:
        """The sentence with the figures of ``result`` (default: the stored one) filled in."""
        return self.says.format(**self.figures(self._result(result)))

    def check(self, result: dict | None = None) -> tuple[bool, dict]:
        """(holds, figures) for ``result`` (default: the stored one)."""
        figures = self.figures(self._result(result))
        return bool(self.holds(figures)), figures

    def _result(self, result):
        if result is not None:
            return result
        if not self.stored:
            raise ValueError(f"claim {self.name} rests on a live result ({self.source}): pass that result.")
        return stored_result(self.source)


def stored_loaders() -> dict[str, Callable[[], dict]]:
    """Stored result name -> its loader: each tutorial's ``claims.RESULTS`` (the tutorial's own
    reader of what ``course train ...`` wrote)."""
    loaders: dict[str, Callable[[], dict]] = {}
    for tutorial in TUTORIALS:
        loaders |= getattr(importlib.import_module(f"course_utils.{tutorial}.claims"), "RESULTS", {})
    return loaders


@functools.cache
def stored_result(source: str) -> dict:
    """The stored result ``source`` (read once per process)."""
    loaders = stored_loaders()
    if source not in loaders:
        raise KeyError(f"no stored result {source!r}: the stored results are {sorted(loaders)}.")
    return loaders[source]()


def all_claims(extra: tuple[Claim, ...] = ()) -> dict[str, Claim]:
    """Every tutorial's claims by name, in notebook order, then ``extra`` (the claims only the
    solution notebooks make, which the instructor's audit adds: ``course_admin.claims``)."""
    claims: dict[str, Claim] = {}
    notebooks = (c for tutorial in TUTORIALS for c in importlib.import_module(f"course_utils.{tutorial}.claims").CLAIMS)
    for claim in (*notebooks, *extra):
        if claim.name in claims:
            raise ValueError(f"claim {claim.name} is declared twice.")
        claims[claim.name] = claim
    return claims


def claim(name: str, claims: dict[str, Claim] | None = None) -> Claim:
    """Claim ``name`` of ``claims`` (default: every notebook's)."""
    claims = all_claims() if claims is None else claims
    if name not in claims:
        raise KeyError(f"no claim {name!r}; `course claims` lists them.")
    return claims[name]


def show_claim(name: str, result: dict | None = None) -> str:
    """Print claim ``name``'s sentence with the figures of ``result`` (default: the stored
    result); the notebook's way to state a number. A result that does not bear the sentence out
    (a short run of the student's, say) gets a line that says so. Returns what was printed."""
    c = claim(name)
    holds, figures = c.check(result)
    text = c.says.format(**figures)
    if not holds:
        text += "\n(This run does not bear that sentence out: the text around it describes the course's full-size runs.)"
    print(text)
    return text
