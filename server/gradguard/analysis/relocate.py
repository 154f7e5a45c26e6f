"""Findings made inside an installed library, moved onto the user's code that reached it.

A library's file is not the user's to fix, and no front end shows its diagnostics: a
write the analysis finds in a library layer (CANINE's question-answering head clamping
the caller's labels in place) is reported on the user's call that reached it, with the
library's line as related information, so both lines are named. Notes about code the
analysis skipped inside a library are the analysis's own business and are dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

from gradguard.analysis.findings import Finding
from gradguard.rules import CODE_SKIPPED


def relocate(findings: Iterable[Finding], in_library: Callable[[str], bool]) -> list[Finding]:
    """``findings`` with each one made in a library file moved onto the innermost call
    site of the user's code it was reached through (dropped if it has none)."""
    moved = []
    for finding in findings:
        if not in_library(finding.piece.path):
            moved.append(finding)
            continue
        if finding.code == CODE_SKIPPED:
            continue
        user = [index for index, (piece, _) in enumerate(finding.via)
                if not in_library(piece.path)]
        if not user:
            continue
        at = user[-1]
        piece, call = finding.via[at]
        moved.append(replace(finding, piece=piece, node=call, via=finding.via[:at],
                             inside=(*finding.via[at + 1:], (finding.piece, finding.node)),
                             plan=None))
    return moved
