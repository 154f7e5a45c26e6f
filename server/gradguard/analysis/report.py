"""Turns findings (nodes) into hazards (source spans and messages a user reads)."""

from __future__ import annotations

import ast
import os

from gradguard.analysis.findings import Finding
from gradguard.analysis.fix_edits import clone_saved_input, layer_fix, plan_fix, switch_fix
from gradguard.analysis.fix_plans import CloneFirst, CloneIfUsedLater, Place
from gradguard.analysis.hazard import Fix, Hazard, Related, Span
from gradguard.analysis.reach import UNREACHED
from gradguard.analysis.values import Save
from gradguard.rules import (
    CODE_SKIPPED,
    FILE_NOT_ANALYSED,
    LEAF_WRITTEN_IN_PLACE,
    PARAMETERS_UPDATED_BEFORE_BACKWARD,
    RULES,
    SAVED_TENSOR_CHANGED_SILENTLY,
    SAVED_TENSOR_OVERWRITTEN,
    UNCERTAIN_SUFFIX,
    UNREACHED_SUFFIX,
    Severity,
)

ROLE_WORDS = {
    "output": "the output of",
    "input": "the input of",
    "other": "the second operand of",
}
ROLE_NOUNS = {"output": "its output", "input": "its input", "other": "its second operand"}
# How many saving ops a GG004 message names; the rest are counted, and all are related.
NAMED_SAVES = 2


def _saver(save: Save) -> tuple[str, str]:
    label, _, aten = save.op.partition("|")
    return label, aten or label


def code(op: str) -> str:
    """``self.relu (ReLU, inplace=True)`` as `self.relu` (ReLU, inplace=True)."""
    name, space, note = op.partition(" (")
    if space and note.endswith(")") and "(" not in name:
        return f"`{name}` ({note}"
    return f"`{op}`"


def _severity(finding: Finding) -> Severity:
    return RULES[finding.code].default_severity if finding.confidence == "high" else "warning"


def _skipped_message(finding: Finding) -> str:
    if finding.op:  # a root: a function, a method or the script
        what = "the script" if finding.op == "<module>" else \
            f"`{finding.op.split()[-1]}`"
        return RULES[CODE_SKIPPED].message("static.function", what=what, why=finding.detail)
    return RULES[CODE_SKIPPED].message("static", what=finding.detail)


def to_hazard(finding: Finding) -> Hazard:
    span = finding.piece.span(finding.node)
    if finding.code == CODE_SKIPPED and finding.op:  # a whole function: its first line says it
        first = finding.piece.line(getattr(finding.node, "lineno", 1))
        span = Span(span.line, span.column, span.line, len(first.rstrip()) + 1)
    related: list[Related] = []
    rule = RULES[finding.code]
    if finding.code in (SAVED_TENSOR_OVERWRITTEN, PARAMETERS_UPDATED_BEFORE_BACKWARD,
                        SAVED_TENSOR_CHANGED_SILENTLY):
        parts = []
        for save in finding.saves:
            label, aten = _saver(save)
            save_span = save.piece.span(save.node)
            words = ROLE_WORDS.get(save.role, "a tensor saved by")
            where = f"line {save_span.line}"
            if save.piece.path != finding.piece.path:
                where = f"{_near(save.piece.path, finding.piece.path)}:{save_span.line}"
            parts.append(rule.message("static.save", role=words, saver=code(label),
                                      where=where, aten=aten))
            noun = ROLE_NOUNS.get(save.role, "a tensor")
            related.append(Related(save_span, f"{code(label)} saves {noun} here for backward",
                                   _other(save.piece.path, finding.piece.path)))
        what = "; ".join(parts)
        if finding.code in (SAVED_TENSOR_OVERWRITTEN, SAVED_TENSOR_CHANGED_SILENTLY):
            message = rule.message("static", op=code(finding.op), saved=what)
        else:
            what = "; ".join(parts[:NAMED_SAVES])
            if len(parts) > NAMED_SAVES:
                others = sorted({r.span.line for r in related[NAMED_SAVES:]})
                what += (f"; and {len(parts) - NAMED_SAVES} more saved at line"
                         f"{'s' if len(others) > 1 else ''} "
                         f"{', '.join(str(line) for line in others)}")
            message = rule.message("static", op=code(finding.op), saved=what,
                                   advice=_where_to_step(finding))
    elif finding.code == CODE_SKIPPED:
        message = _skipped_message(finding)
    elif finding.code == LEAF_WRITTEN_IN_PLACE:
        message = rule.message("static", op=code(finding.op))
    else:
        view_kind = f"view.{finding.detail}"
        view = rule.message(view_kind) if view_kind in rule.messages else "a view"
        message = rule.message("static", op=code(finding.op), view=view)
    if finding.detail == UNREACHED:
        message += UNREACHED_SUFFIX
    elif finding.confidence == "medium":
        message += UNCERTAIN_SUFFIX
    layer = finding.layer
    if layer is not None and layer.node is not finding.node:
        related.append(Related(layer.piece.span(layer.node),
                               "the in-place layer is defined here",
                               _other(layer.piece.path, finding.piece.path)))
    for piece, call in finding.via:
        related.append(Related(piece.span(call), "reached through this call",
                               _other(piece.path, finding.piece.path)))
    return Hazard(finding.code, span, message, _severity(finding), finding.confidence,
                  tuple(related), _fix(finding))


def _where_to_step(finding: Finding) -> str:
    """Where a GG004 step belongs: after the backward that still needs the parameters."""
    rule = RULES[PARAMETERS_UPDATED_BEFORE_BACKWARD]
    if finding.backward is None:
        return rule.message("advice")
    piece, node = finding.backward
    line = piece.span(node).line
    where = f"line {line}"
    if piece.path != finding.piece.path:
        where = f"{_near(piece.path, finding.piece.path)}:{line}"
    kind = "advice.again" if finding.detail == "again" else "advice.at"
    return rule.message(kind, where=where)


def _in_statement(save: Save, place: Place) -> bool:
    # Line numbers count from the start of each piece (a block of the editor's text).
    line = getattr(save.node, "lineno", 0)
    statement = place.statement
    return save.piece is place.piece and \
        statement.lineno <= line <= (statement.end_lineno or statement.lineno)


def _near(path: str, home: str) -> str:
    """Another file's path as seen from the hazard's file (``layers.py``, ``../model.py``)."""
    return os.path.relpath(path, os.path.dirname(home) or ".") if os.path.isabs(path) and \
        os.path.isabs(home) else path


def _other(path: str, home: str) -> str | None:
    """The file a related location is in, when it is not the hazard's own."""
    return None if path == home else path


def _fix(finding: Finding) -> Fix | None:
    plan = finding.plan
    if isinstance(plan, (CloneFirst, CloneIfUsedLater)) and \
            any(_in_statement(save, plan.place) for save in finding.saves):
        # ``x[1] = conv(x[1])``: a copy made before the statement is what the conv
        # reads too; the conv gets the copy instead.
        fix = clone_saved_input(finding.saves, plan.place.piece, plan.root)
        written = ast.dump(plan.root)
        if fix is None and not any(ast.dump(part) == written for save in finding.saves
                                   for part in ast.walk(save.node)):
            # The op saved a view taken earlier (``h_t[layer] = tanh(input_t @ w)``): a
            # copy made before the statement leaves that view alone.
            fix = plan_fix(plan)
    else:
        fix = plan_fix(plan) if plan is not None else None
    if fix is None and finding.layer is not None and \
            finding.layer.piece.path == finding.piece.path:
        fix = layer_fix(finding.layer)
    if fix is None and finding.layer is not None and finding.layer.switched is not None:
        fix = switch_fix(*finding.layer.switched)
    if fix is not None and finding.plan is not None and \
            finding.plan.place.piece.path != finding.piece.path:
        return None  # an edit in another file than the one reported on
    return fix


def not_analysed(reason: str, line: int = 0, column: int = 0) -> Hazard:
    """The status of a file that could not be analysed, as a finding of its own (GG900):
    at the error's place when it has one, else at the top of the file."""
    line, column = max(line, 1), max(column, 1)
    rule = RULES[FILE_NOT_ANALYSED]
    return Hazard(rule.code, Span(line, column, line, column),
                  rule.message("static", reason=reason), rule.default_severity, "high")
