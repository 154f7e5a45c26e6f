"""Findings as the interpreter records them: nodes, not yet source positions."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from gradguard.analysis.hazard import Confidence
from gradguard.analysis.values import Save


@dataclass(eq=False)
class Finding:
    code: str
    node: cst.CSTNode
    op: str
    confidence: Confidence
    saves: tuple[Save, ...] = ()
    detail: str = ""
    # Call sites through which the write was reached, outermost first.
    via: tuple[cst.CSTNode, ...] = ()
    # Where the in-place layer is defined, when that is not the write site.
    defined_at: cst.CSTNode | None = None

    def key(self) -> tuple[object, ...]:
        return (self.code, id(self.node), tuple(id(s.node) for s in self.saves))
