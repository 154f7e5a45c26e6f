"""Turns a fix plan into text edits, once the positions of its nodes are known.

Edits replace the smallest node that holds the change, rendered by libcst from the
changed tree, so the formatting and comments around it stay as they were.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import libcst as cst
from libcst.metadata import CodeRange

from gradguard.analysis.hazard import Fix, Span, TextEdit
from gradguard.analysis.values import NnModule
from gradguard.fixes.plans import (
    AugmentedToBinary,
    CloneFirst,
    CloneIfUsedLater,
    DropOut,
    MoveAfter,
    OutOfPlace,
    Plan,
    without_argument,
)

_CODEGEN = cst.Module(body=[])
# Expressions that need no parentheses as the right operand of a binary operator.
_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float,
          cst.SimpleString, cst.List, cst.Tuple)

Spans = Callable[[cst.CSTNode], Span]


def code(node: cst.CSTNode) -> str:
    return _CODEGEN.code_for_node(node)


def spans_from(ranges: Mapping[cst.CSTNode, CodeRange]) -> Spans:
    def span(node: cst.CSTNode) -> Span:
        found = ranges[node]
        return Span(found.start.line, found.start.column + 1, found.end.line,
                    found.end.column + 1)

    return span


def layer_fix(layer: NnModule, span: Spans) -> Fix | None:
    """``nn.ReLU(inplace=True)`` -> ``nn.ReLU()``, on the instance that wrote."""
    call = layer.node
    flag = layer.facts.ctor_inplace
    if not isinstance(call, cst.Call) or flag is None:
        return None
    keyword = next((a for a in call.args if a.keyword is not None
                    and a.keyword.value == flag.name), None)
    if keyword is not None:
        changed = without_argument(call, flag.name, None)
    elif flag.position is not None and flag.position < len(call.args) and \
            not any(a.star for a in call.args):
        args = list(call.args)
        args[flag.position] = args[flag.position].with_changes(value=cst.Name("False"))
        changed = call.with_changes(args=args)
    else:
        return None
    name = layer.facts.name.rsplit(".", 1)[-1]
    message = f"Build this {name} out of place (inplace=False)"
    others = len(layer.calls) - 1
    if others > 0:
        message += (f"; the same instance is called at {others} other place"
                    f"{'s' if others > 1 else ''}, which stop writing in place too")
    return Fix(message, (TextEdit(span(call), code(changed)),))


def plan_fix(plan: Plan, span: Spans, lines: Sequence[str]) -> Fix | None:
    if isinstance(plan, OutOfPlace):
        return _out_of_place(plan, span)
    if isinstance(plan, AugmentedToBinary):
        target = code(plan.node.target)
        value = plan.node.value
        right = code(value) if isinstance(value, _ATOMS) else f"({code(value)})"
        text = f"{target} = {target} {plan.symbol} {right}"
        return Fix(f"Compute `{text}` out of place", (TextEdit(span(plan.node), text),))
    if isinstance(plan, CloneIfUsedLater):
        if not _mentions(plan.later, code(plan.root)):
            return None
        return plan_fix(CloneFirst(plan.root, plan.place), span, lines)
    if isinstance(plan, CloneFirst):
        root = code(plan.root)
        where = span(plan.place.line)
        indent = _indent(lines, where.line)
        text = f"{root} = {root}.clone()\n{indent}"
        return Fix(f"Write into a copy: `{root} = {root}.clone()` first",
                   (TextEdit(Span(where.line, where.column, where.line, where.column), text),))
    if isinstance(plan, DropOut):
        small = plan.place.small
        target = code(plan.target)
        call = without_argument(plan.call, "out", None)
        if isinstance(small, cst.Expr) and small.value is plan.call:
            text = f"{target} = {code(call)}"
        elif isinstance(small, cst.Assign) and small.value is plan.call:
            text = "".join(f"{code(t.target)} = " for t in small.targets) + \
                f"{target} = {code(call)}"
        else:
            return None
        return Fix(f"Assign the result instead of writing with out=: `{text}`",
                   (TextEdit(span(small), text),))
    if isinstance(plan, MoveAfter):
        return _move_after(plan, span, lines)
    return None


def _out_of_place(plan: OutOfPlace, span: Spans) -> Fix | None:
    small = plan.place.small
    replacement = code(plan.replacement)
    message = f"Use the out-of-place `{replacement}`"
    if plan.rebind is None:
        return None
    name = code(plan.rebind)
    if isinstance(small, cst.Expr) and _chain_starts_with(small.value, plan.call):
        value = code(small.value.deep_replace(plan.call, plan.replacement))
        text = f"{name} = {value}"
        return Fix(f"{message}: `{text}`", (TextEdit(span(small), text),))
    if isinstance(small, cst.Assign) and _chain_starts_with(small.value, plan.call):
        targets = [code(t.target) for t in small.targets]
        if name not in targets:
            targets.append(name)
        value = code(small.value.deep_replace(plan.call, plan.replacement))
        text = "".join(f"{t} = " for t in targets) + value
        return Fix(f"{message}, assigned back to `{name}`", (TextEdit(span(small), text),))
    if isinstance(small, cst.Return) and small.value is plan.call and \
            isinstance(plan.rebind, cst.Name):
        return Fix(message, (TextEdit(span(plan.call), replacement),))
    if isinstance(plan.rebind, cst.Name):
        return Fix(f"{message}, assigned back to `{name}`",
                   (TextEdit(span(plan.call), f"({name} := {replacement})"),))
    return None


def _chain_starts_with(value: cst.BaseExpression, call: cst.Call) -> bool:
    """Whether ``value`` is ``call`` or a chain of method calls on its result."""
    node: cst.BaseExpression = value
    while True:
        if node is call:
            return True
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            node = node.func.value
        else:
            return False


def _move_after(plan: MoveAfter, span: Spans, lines: Sequence[str]) -> Fix | None:
    moved = span(plan.place.line)
    after = span(plan.after.line)
    if _indent(lines, moved.line) != _indent(lines, after.line):
        return None
    text = "".join(line + "\n" for line in lines[moved.line - 1: moved.end_line])
    delete = TextEdit(Span(moved.line, 1, moved.end_line + 1, 1), "")
    if after.end_line < len(lines):
        insert = TextEdit(Span(after.end_line + 1, 1, after.end_line + 1, 1), text)
    else:
        end = len(lines[after.end_line - 1]) + 1
        insert = TextEdit(Span(after.end_line, end, after.end_line, end),
                          "\n" + text.rstrip("\n"))
    statement = code(plan.place.small).strip()
    return Fix(f"Move `{statement}` after the backward at line {after.line} that still "
               "needs the parameters it updates (their gradients then include that "
               "backward's too)", (delete, insert))


def _indent(lines: Sequence[str], line: int) -> str:
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    return text[: len(text) - len(text.lstrip(" \t"))]


def _mentions(statements: tuple[cst.CSTNode, ...], dotted: str) -> bool:
    """Whether any of the statements reads ``dotted`` (a name or ``self.x``)."""
    head = dotted.split(".")[0]
    return any(head in code(statement) and dotted in _names(statement)
               for statement in statements)


def _names(node: cst.CSTNode) -> set[str]:
    found: set[str] = set()

    class Collect(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            found.add(name.value)

        def visit_Attribute(self, attribute: cst.Attribute) -> None:
            parts = []
            current: cst.BaseExpression = attribute
            while isinstance(current, cst.Attribute):
                parts.append(current.attr.value)
                current = current.value
            if isinstance(current, cst.Name):
                found.add(".".join([current.value, *reversed(parts)]))

    node.visit(Collect())
    return found
