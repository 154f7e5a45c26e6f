"""What a fix will do, decided where the analysis knows the code: which rewrite, where.

A plan holds libcst nodes; :mod:`gradguard.fixes.render` turns it into text edits once
positions are known. Plans are made only where the rewrite keeps what the code computes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst


@dataclass(frozen=True, eq=False)
class Place:
    """A small statement, the line holding it, and the statement list holding the line."""

    small: cst.BaseSmallStatement
    line: cst.SimpleStatementLine
    block: Sequence[cst.CSTNode]

    @property
    def index(self) -> int:
        return next(i for i, s in enumerate(self.block) if s is self.line)


@dataclass(frozen=True, eq=False)
class OutOfPlace:
    """``x.add_(y)`` -> ``x = x.add(y)``: the out-of-place call, assigned back."""

    call: cst.Call
    replacement: cst.Call
    rebind: cst.BaseExpression | None
    place: Place


@dataclass(frozen=True, eq=False)
class AugmentedToBinary:
    """``x += y`` -> ``x = x + y``."""

    node: cst.AugAssign
    symbol: str


@dataclass(frozen=True, eq=False)
class CloneFirst:
    """``x[i] = v`` -> ``x = x.clone()`` before it: the write goes to a copy."""

    root: cst.BaseExpression
    place: Place


@dataclass(frozen=True, eq=False)
class CloneIfUsedLater:
    """An in-place layer writes the caller's ``x``, which later code reads.

    Building the layer out of place would hand those reads the unwritten values; a copy
    keeps them: ``x = x.clone()`` before the call. When nothing reads ``x`` afterwards,
    building the layer out of place is the simpler fix and computes the same.
    """

    root: cst.BaseExpression
    place: Place
    later: tuple[cst.CSTNode, ...]


@dataclass(frozen=True, eq=False)
class DropOut:
    """``torch.add(a, b, out=y)`` -> ``y = torch.add(a, b)``."""

    call: cst.Call
    target: cst.BaseExpression
    place: Place


@dataclass(frozen=True, eq=False)
class MoveAfter:
    """``opt.step()`` moved after the backward that still needs the old parameters."""

    place: Place
    after: Place


Plan = OutOfPlace | AugmentedToBinary | CloneFirst | CloneIfUsedLater | DropOut | MoveAfter


def receiver_root(node: cst.BaseExpression) -> cst.BaseExpression | None:
    """The name a chain of views starts from: ``x`` in ``x[..., 0].t()``."""
    while True:
        if isinstance(node, (cst.Name, cst.Attribute)) and _is_dotted(node):
            return node
        if isinstance(node, cst.Subscript):
            node = node.value
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            node = node.func.value
        elif isinstance(node, cst.Attribute):
            node = node.value
        else:
            return None


def _is_dotted(node: cst.BaseExpression) -> bool:
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name)


def is_dotted(node: cst.BaseExpression) -> bool:
    return isinstance(node, (cst.Name, cst.Attribute)) and _is_dotted(node)


def without_argument(call: cst.Call, keyword: str | None, position: int | None) -> cst.Call:
    """``call`` without one argument (by keyword, else by position), commas kept right."""
    args = list(call.args)
    for index, arg in enumerate(args):
        named = arg.keyword is not None and arg.keyword.value == keyword
        positional = arg.keyword is None and not arg.star and index == position
        if named or positional:
            del args[index]
            break
    else:
        return call
    if args:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return call.with_changes(args=args)


def renamed_method(call: cst.Call, name: str) -> cst.Call:
    assert isinstance(call.func, cst.Attribute)
    return call.with_changes(func=call.func.with_changes(attr=cst.Name(name)))
