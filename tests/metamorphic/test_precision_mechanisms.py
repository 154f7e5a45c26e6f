"""Issue 27's four mechanisms of false reports, written in every shape the
transformations give: the rule cases that must stay quiet (a save in one arm of a branch
and a write after the join, an in-place op that keeps its own copy, code that runs only
without a graph, a branch decidable under this torch) stay quiet in every transformed
program too. Torch runs each of them clean, as it runs the originals (the bench judges
every transformed program: ``python -m bench.accuracy --metamorphic``).
"""

from __future__ import annotations

import sys

import pytest

from tests.metamorphic.run import metamorphic_run

QUIET = (
    "rule/GG001: pow_ with a scalar exponent keeps its own copy of the input",
    "rule/GG001: the write is in the arm that runs only when no graph is recorded",
    "rule/GG001: the fast in-place path is taken only with grad mode off",
    "rule/GG001: a helper says whether a graph is being recorded",
    "rule/GG001: a vendor build's branch, never taken under this torch",
    "rule/GG001: a helper blends in place the layer's new output or the unsaved input",
)


@pytest.mark.parametrize("subject", QUIET, ids=[s.split(": ", 1)[1] for s in QUIET])
def test_a_quiet_mechanism_case_stays_quiet_in_every_shape(subject: str) -> None:
    outcome = metamorphic_run(("rule",), only=subject,
                              log=lambda line: print(line, file=sys.stderr, flush=True))
    variants = [v for v in outcome.verdicts if v.subject == subject]
    assert len(variants) >= 15, "most transformations apply to a rule case"
    loud = [f"{v.transformation}: {v.findings}" for v in variants if v.false_positive]
    assert not loud
