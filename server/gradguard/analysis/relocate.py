"""Findings made inside an installed library, moved onto the user's code that reached it.

A library's file is not the user's to fix, and no front end shows its diagnostics: a
write the analysis finds in a library layer (CANINE's question-answering head clamping
the caller's labels in place) is reported on the user's call that reached it, with the
library's line as related information, so both lines are named. Notes about code the
analysis skipped inside a library are the analysis's own business and are dropped.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from dataclasses import replace

from gradguard.analysis.findings import Finding
from gradguard.analysis.fix_plans import CloneArgument, Place
from gradguard.analysis.syntax import Piece, contains_skipped
from gradguard.rules import CODE_SKIPPED


def relocate(findings: Iterable[Finding], in_library: Callable[[str], bool]) -> list[Finding]:
    """``findings`` with each one made in a library file moved onto the innermost call
    site of the user's code it was reached through (dropped if it has none)."""
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
        moved.append(replace(finding, piece=piece, node=call, via=finding.via[:at],
                             inside=(*finding.via[at + 1:], (finding.piece, finding.node)),
                             plan=_clone_argument(piece, call, finding.node)))
    return moved


def _clone_argument(piece: Piece, call: ast.AST, write: ast.AST) -> CloneArgument | None:
    """The fix on the user's side: hand the library a copy of the tensor it writes,
    when the call names it by the keyword the library writes it under
    (``start_positions=start_positions`` and ``start_positions.clamp_(...)``)."""
    written = _written_name(write)
    if written is None or not isinstance(call, ast.Call):
        return None
    given = [keyword.value for keyword in call.keywords if keyword.arg == written]
    if len(given) != 1 or contains_skipped(call):
        return None
    statement = ast.copy_location(ast.Expr(value=call), call)
    return CloneArgument(given[0], Place(statement, (statement,), piece))


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
