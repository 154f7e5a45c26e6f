"""Conditions that say whether autograd is recording a graph.

Library code often keeps a fast path for inference: ``if x.requires_grad: <out of
place> else: <in place>``, ``if not torch.is_grad_enabled(): ...``, or a helper that
checks them (``if _eligible(a, b):`` where ``_eligible`` returns ``... and not
(torch.is_grad_enabled() and a.requires_grad)``). A hazard needs a backward, and a
backward needs a graph; so where such a condition's value is not known, the analysis
takes the branch that runs while a graph is recorded, and not the one that runs only
without one.

:func:`polarity` reads a condition without running it: ``GRAPH`` when the condition is
false only if no graph is recorded (``x.requires_grad``, ``torch.is_grad_enabled()``),
``NO_GRAPH`` when it is true only if none is (``torch.is_inference_mode_enabled()``,
``not x.requires_grad``), ``None`` when it says neither.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Literal

Polarity = Literal["graph", "no graph"]
GRAPH: Polarity = "graph"
NO_GRAPH: Polarity = "no graph"

_GRAPH_CALLS = frozenset({"torch.is_grad_enabled"})
_NO_GRAPH_CALLS = frozenset({"torch.is_inference_mode_enabled", "torch.is_inference"})
# How many helpers deep a condition is followed (``_eligible`` calling ``_no_graph``).
_DEPTH = 3


def polarity(expr: ast.expr, qualify: Callable[[ast.expr], str | None],
             returned: Callable[[ast.Call], ast.expr | None], depth: int = 0) -> Polarity | None:
    """``qualify`` names what a call calls (``torch.is_grad_enabled``); ``returned`` is
    the one expression a called helper returns, if its body is just that."""
    if isinstance(expr, ast.Attribute) and expr.attr == "requires_grad":
        return GRAPH
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
        return _flip(polarity(expr.operand, qualify, returned, depth))
    if isinstance(expr, ast.BoolOp):
        parts = [polarity(value, qualify, returned, depth) for value in expr.values]
        # ``a and b`` holds only where each part does; ``a or b`` fails only where each
        # part fails.
        one, every = (NO_GRAPH, GRAPH) if isinstance(expr.op, ast.And) else (GRAPH, NO_GRAPH)
        if one in parts:
            return one
        return every if all(part == every for part in parts) else None
    if isinstance(expr, ast.Call):
        name = qualify(expr.func)
        if name in _GRAPH_CALLS:
            return GRAPH
        if name in _NO_GRAPH_CALLS:
            return NO_GRAPH
        if name in ("any", "all") and len(expr.args) == 1 and \
                isinstance(expr.args[0], (ast.GeneratorExp, ast.ListComp)):
            # ``any(t.requires_grad for t in ts)``: as each of its items.
            return polarity(expr.args[0].elt, qualify, returned, depth)
        if depth < _DEPTH:
            body = returned(expr)
            if body is not None:
                return polarity(body, qualify, returned, depth + 1)
    return None


def _flip(found: Polarity | None) -> Polarity | None:
    if found is None:
        return None
    return NO_GRAPH if found == GRAPH else GRAPH


def returned_expression(function: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.expr | None:
    """The expression a function returns when its body is only ``return <expr>`` (after
    a docstring)."""
    body = function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None:
        return body[0].value
    return None
