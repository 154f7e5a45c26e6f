"""Turns findings (nodes) into hazards (source spans and messages a user reads)."""

from __future__ import annotations

from collections.abc import Callable

from gradguard.analysis.findings import Finding
from gradguard.analysis.hazard import Fix, Hazard

# How a finding's fix plan becomes edits of the source (``gradguard.fixes.edits.fix_of``):
# fix code, above the analysis, handed in by whoever wants hazards with their fixes.
FixOf = Callable[[Finding], Fix | None]


def to_hazard(finding: Finding, fix_of: FixOf | None = None) -> Hazard:
    """The hazard a user reads; with its fix when ``fix_of`` renders one."""
    return Hazard(finding.code, finding.span(), finding.message(), finding.severity(),
                  finding.confidence, tuple(finding.related()),
                  None if fix_of is None else fix_of(finding))
