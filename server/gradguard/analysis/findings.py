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
        return finding_key(self.code, self.node, self.saves)


def finding_key(code: str, node: ast.AST, saves: tuple[Save, ...]) -> tuple[object, ...]:
    """What makes two reports one hazard: the code, the write, the saves it breaks."""
    return (code, id(node), tuple(id(s.node) for s in saves))


_RANK = {"high": 0, "medium": 1}


def better(new: Finding, old: Finding) -> bool:
    """Of two reports of one hazard, the surer one, then the one with the shorter path."""
    return surer(new.confidence, len(new.via), old)


def surer(confidence: Confidence, via: int, old: Finding) -> bool:
    """Would a report of ``old``'s hazard with this confidence and path length be kept
    instead of it?"""
    return (_RANK[confidence], via) < (_RANK[old.confidence], len(old.via))
