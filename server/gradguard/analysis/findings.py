"""Findings as the interpreter records them: nodes, not yet source positions."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from gradguard.analysis.hazard import Confidence
from gradguard.analysis.values import NnModule, Save
from gradguard.fixes.plans import Plan


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
    # The in-place layer (``nn.ReLU(inplace=True)``...) that made the write, if one did.
    layer: NnModule | None = None
    plan: Plan | None = None

    def key(self) -> tuple[object, ...]:
        return (self.code, id(self.node), tuple(id(s.node) for s in self.saves))
