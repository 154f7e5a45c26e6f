"""Findings made inside an installed library, moved onto the user's code that reached it.

A library's file is not the user's to fix, and no front end shows its diagnostics: a
write the analysis finds in a library layer (CANINE's question-answering head clamping
the caller's labels in place) is reported on the user's call that reached it, with the
library's line as related information, so both lines are named. Notes about code the
analysis skipped inside a library are the analysis's own business and are dropped.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace

from gradguard.analysis.findings import Finding
from gradguard.analysis.fix_plans import CloneArgument, Place
from gradguard.analysis.program import FunctionNode, Program
from gradguard.analysis.syntax import Piece, contains_skipped
from gradguard.rules import CODE_SKIPPED


def relocate(findings: Iterable[Finding], in_library: Callable[[str], bool],
             programs: Mapping[str, Program | None] | None = None) -> list[Finding]:
    """``findings`` with each one made in a library file moved onto the innermost call
    site of the user's code it was reached through (dropped if it has none).
    ``programs`` (the parsed files, by path) tell which library function holds the
    write, so that a tensor the user passes by position can be handed over as a copy."""
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
        # Called directly (no library call between the user's and the write), the
        # written parameter is one the user's call fills: by keyword or by position.
        function = None if at + 1 < len(finding.via) or programs is None else \
            _function_holding(programs.get(finding.piece.path), finding.node)
        moved.append(replace(finding, piece=piece, node=call, via=finding.via[:at],
                             inside=(*finding.via[at + 1:], (finding.piece, finding.node)),
                             plan=_clone_argument(piece, call, finding.node, function)))
    return moved


def _clone_argument(piece: Piece, call: ast.AST, write: ast.AST,
                    function: tuple[FunctionNode, bool] | None) -> CloneArgument | None:
    """The fix on the user's side: hand the library a copy of the tensor it writes,
    when the call names it by the keyword the library writes it under
    (``start_positions=start_positions`` and ``start_positions.clamp_(...)``) or, the
    library function that writes being known, passes it at that parameter's position.
    Not for a function named as in-place (``scale_``): writing is what it is for."""
    written = _written_name(write)
    if written is None or not isinstance(call, ast.Call) or contains_skipped(call):
        return None
    given = [keyword.value for keyword in call.keywords if keyword.arg == written]
    if not given and function is not None:
        given = _positional(call, written, *function)
    if len(given) != 1:
        return None
    statement = ast.copy_location(ast.Expr(value=call), call)
    return CloneArgument(given[0], Place(statement, (statement,), piece))


def _positional(call: ast.Call, written: str, function: FunctionNode,
                bound: bool) -> list[ast.expr]:
    """The argument of ``call`` at the position of ``function``'s parameter ``written``
    (after ``self`` when the function is a method called on an instance)."""
    if function.name.endswith("_") and not function.name.endswith("__"):
        return []
    parameters = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
    if bound:
        parameters = parameters[1:]
    if written not in parameters:
        return []
    index = parameters.index(written)
    before = call.args[:index + 1]
    if len(call.args) <= index or any(isinstance(a, ast.Starred) for a in before):
        return []
    return [call.args[index]]


def _function_holding(program: Program | None,
                      node: ast.AST) -> tuple[FunctionNode, bool] | None:
    """The innermost function or method of ``program`` around ``node``, and whether it
    is a method taking ``self`` (neither a static method nor a function)."""
    if program is None:
        return None
    line = getattr(node, "lineno", 0)
    candidates: list[tuple[FunctionNode, bool]] = [
        (f.node, False) for f in program.functions.values()]
    for info in program.classes.values():
        candidates += [(m.node, name not in info.staticmethods)
                       for name, m in info.methods.items()]
    around = [(f, bound) for f, bound in candidates
              if f.lineno <= line <= (f.end_lineno or f.lineno)]
    return max(around, key=lambda c: c[0].lineno, default=None)


def _written_name(write: ast.AST) -> str | None:
    """The parameter name a library's write goes through: ``x`` in ``x.clamp_(...)``,
    ``x *= ...``, ``x[i] = ...``."""
    target: ast.AST | None = None
    if isinstance(write, ast.AugAssign):
        target = write.target
    elif isinstance(write, ast.Call) and isinstance(write.func, ast.Attribute):
        target = write.func.value
    elif isinstance(write, ast.Assign) and len(write.targets) == 1:
        target = write.targets[0]
    while isinstance(target, ast.Subscript):
        target = target.value
    return target.id if isinstance(target, ast.Name) else None
