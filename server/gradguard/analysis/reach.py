"""Saves no backward can reach: made by a function none of whose outputs carries
gradient (a block scorer that returns ``topk(...).indices``).

Backward visits only the ops a loss was computed from. A function that returns
integers or booleans, stores nothing, calls no backward and writes no input holds its
intermediate results for itself: a write into one of them after an op saved it breaks
nothing. Such a finding is kept as a warning (``unreached``), never an error: an
unknown call may still have taken the tensor away.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import replace

from gradguard.analysis.findings import Finding, SavedTensorOverwritten
from gradguard.analysis.syntax import Piece
from gradguard.analysis.values import Save, Value, ancestry, lineage_key

# How deep the inputs' attributes and items are searched for what the function stored.
_DEPTH = 4


def without_gradient(value: Value) -> bool:
    """Known to carry no gradient: a constant (not None), an integer or boolean result
    (requires_grad known False), or a tuple of such."""
    if value.kind == "const":
        return value.const is not None
    if value.kind == "tensor":
        return value.requires_grad is False
    if value.kind == "list" and value.items:
        return all(without_gradient(item) for item in value.items)
    return False


def demote_unreached(findings: dict[tuple[object, ...], Finding], piece: Piece,
                     function: ast.AST, returns: list[Value],
                     inputs: Iterable[object], backwards: int) -> None:
    """Mark the GG001 findings of one function run whose saves it made itself and no
    output of it reaches (``returns``: what it returned; ``inputs``: its parameters
    and ``self``, as they are after the run; ``backwards``: how many it ran)."""
    if backwards or not returns or not all(without_gradient(v) for v in returns):
        return
    mine = [f for f in findings.values() if isinstance(f, SavedTensorOverwritten) and f.saves
            and all(_made_in(save, piece, function) for save in f.saves)]
    if not mine:
        return
    reached: set[object] = set()
    for value in [*returns, *_stored(inputs)]:
        reached |= ancestry(value)
    for key, finding in list(findings.items()):
        if finding in mine and not any(save.source is None or
                                       lineage_key(save.source) in reached
                                       for save in finding.saves):
            findings[key] = replace(finding, confidence="medium", unreached=True)


def _made_in(save: Save, piece: Piece, function: ast.AST) -> bool:
    line = getattr(save.node, "lineno", 0)
    return save.piece is piece and \
        getattr(function, "lineno", 0) <= line <= (getattr(function, "end_lineno", 0) or 0)


def _stored(inputs: Iterable[object]) -> Iterator[Value]:
    """The values reachable from the inputs: what the function may have left there."""
    seen: set[int] = set()
    todo = [(value, 0) for value in inputs if isinstance(value, Value)]
    while todo:
        value, depth = todo.pop()
        if id(value) in seen or depth > _DEPTH:
            continue
        seen.add(id(value))
        yield value
        children = list((value.attrs or {}).values()) + list(value.items or [])
        if value.element is not None:
            children.append(value.element)
        todo.extend((child, depth + 1) for child in children)
