"""The course's claims as the instructor audits them: the notebooks' claims
(``course_utils.claims``) and the claims only the solution notebooks make, about the figures of a
model answer (``course_admin.lunar.claims``).

``course release --check`` fails when a stored result contradicts one of them
(``contradicted()``), and ``course claims`` prints the table a reviewer audits
(``claims_table()``): every claim, where the notebook makes it, the figures, and whether it holds.
"""

from __future__ import annotations

from course_utils import claims as notebook_claims
from course_utils.claims import Claim


def all_claims() -> dict[str, Claim]:
    """Every claim by name: the notebooks' (in notebook order), then the model answers'."""
    from course_admin.lunar.claims import CLAIMS as LUNAR_MODEL_ANSWERS

    return notebook_claims.all_claims(extra=LUNAR_MODEL_ANSWERS)


def claim(name: str) -> Claim:
    """A notebook's or a model answer's claim by name."""
    return notebook_claims.claim(name, all_claims())


def contradicted(claims: dict[str, Claim] | None = None) -> list[str]:
    """One line per stored-result claim that its stored result contradicts (or cannot be read)."""
    problems = []
    for c in (claims or all_claims()).values():
        if not c.stored:
            continue
        try:
            holds, figures = c.check()
        except Exception as error:  # a renamed key or a missing file: as wrong as a false claim
            problems.append(f"claim {c.name} ({c.where}): cannot be checked on {c.source}: {error!r}")
            continue
        if not holds:
            problems.append(f"claim {c.name} ({c.where}) does not hold on {c.source}: {c.says.format(**figures)}")
    return problems


def claims_table(claims: dict[str, Claim] | None = None) -> str:
    """A markdown table of every claim: where, source, the sentence with its figures, holds."""
    rows = ["| claim | where | rests on | says (stored figures) | holds |", "|---|---|---|---|---|"]
    for c in (claims or all_claims()).values():
        if c.stored:
            try:
                holds, figures = c.check()
                says, verdict = c.says.format(**figures), "yes" if holds else "**NO**"
            except Exception as error:
                says, verdict = f"cannot be checked: {error!r}", "**NO**"
        else:
            says, verdict = c.says, "tests, at the notebook's size"
        rows.append(f"| `{c.name}` | {c.where} | {c.source} | {says.replace('|', '/')} | {verdict} |")
    return "\n".join(rows)
