"""What a fix will do, decided where the analysis knows the code: which rewrite, where.

A plan holds ast nodes and the piece they were parsed in;
:mod:`gradguard.analysis.fix_edits`
turns it into text edits. Plans are made only where the rewrite keeps what the code
computes.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass

from gradguard.analysis.syntax import Piece


@dataclass(frozen=True, eq=False)
class Place:
    """A statement, the statement list holding it, and the piece it was parsed in."""

    statement: ast.stmt
    block: Sequence[ast.stmt]
    piece: Piece

    @property
    def index(self) -> int:
        return next(i for i, s in enumerate(self.block) if s is self.statement)


@dataclass(frozen=True)
class Rename:
    """The call's method renamed: ``x.add_(y)`` -> ``x.add(y)``."""

    name: str


@dataclass(frozen=True)
class DropArgument:
    """The call without one argument (by keyword, else by position)."""

    keyword: str | None
    position: int | None


CallEdit = Rename | DropArgument


@dataclass(frozen=True, eq=False)
class OutOfPlace:
    """``x.add_(y)`` -> ``x = x.add(y)``: the out-of-place call, assigned back."""

    call: ast.Call
    edit: CallEdit
    rebind: ast.expr | None
    place: Place


@dataclass(frozen=True, eq=False)
class AugmentedToBinary:
    """``x += y`` -> ``x = x + y``."""

    node: ast.AugAssign
    symbol: str
    place: Place


@dataclass(frozen=True, eq=False)
class CloneFirst:
    """``x[i] = v`` -> ``x = x.clone()`` before it: the write goes to a copy."""

    root: ast.expr
    place: Place


@dataclass(frozen=True, eq=False)
class CloneIfUsedLater:
    """An in-place layer writes the caller's ``x``, which later code reads.

    Building the layer out of place would hand those reads the unwritten values; a copy
    keeps them: ``x = x.clone()`` before the call. When nothing reads ``x`` afterwards,
    building the layer out of place is the simpler fix and computes the same.
    """

    root: ast.expr
    place: Place
    later: tuple[ast.stmt, ...]


@dataclass(frozen=True, eq=False)
class DropOut:
    """``torch.add(a, b, out=y)`` -> ``y = torch.add(a, b)``."""

    call: ast.Call
    target: ast.expr
    place: Place


@dataclass(frozen=True, eq=False)
class MoveAfter:
    """``opt.step()`` moved after the backward that still needs the old parameters."""

    place: Place
    after: Place


Plan = OutOfPlace | AugmentedToBinary | CloneFirst | CloneIfUsedLater | DropOut | MoveAfter


def receiver_root(node: ast.expr) -> ast.expr | None:
    """The name a chain of views starts from: ``x`` in ``x[..., 0].t()``."""
    while True:
        if is_dotted(node):
            return node
        if isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            node = node.func.value
        elif isinstance(node, ast.Attribute):
            node = node.value
        else:
            return None


def is_dotted(node: ast.AST) -> bool:
    """A name or an attribute chain on a name: ``x``, ``self.h``."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)
