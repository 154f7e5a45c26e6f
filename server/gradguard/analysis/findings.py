"""Findings as the interpreter records them: nodes, not yet source positions."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gradguard.analysis.hazard import Confidence
from gradguard.analysis.syntax import Piece
from gradguard.analysis.values import NnModule, Save

if TYPE_CHECKING:
    from gradguard.analysis.fix_plans import Plan

# A call site: the node and the piece it was parsed in.
Site = tuple[Piece, ast.AST]


@dataclass(eq=False)
class Finding:
    code: str
    piece: Piece
    node: ast.AST
    op: str
    confidence: Confidence
    saves: tuple[Save, ...] = ()
    detail: str = ""
    # Call sites through which the write was reached, outermost first.
    via: tuple[Site, ...] = ()
    # The in-place layer (``nn.ReLU(inplace=True)``...) that made the write, if one did.
    layer: NnModule | None = None
    plan: Plan | None = None
    # GG004: the backward that still needs the parameters (where to move the step).
    backward: tuple[Piece, ast.AST] | None = None

    def key(self) -> tuple[object, ...]:
        return (self.code, id(self.node), tuple(id(s.node) for s in self.saves))


def better(new: Finding, old: Finding) -> bool:
    """Of two reports of one hazard, the surer one, then the one with the shorter path."""
    rank = {"high": 0, "medium": 1}
    return (rank[new.confidence], len(new.via)) < (rank[old.confidence], len(old.via))
