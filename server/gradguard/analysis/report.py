"""Turns findings (nodes) into hazards (source spans and messages a user reads)."""

from __future__ import annotations

import ast

from gradguard.analysis.findings import Finding
from gradguard.analysis.fix_edits import clone_saved_input, layer_fix, plan_fix, switch_fix
from gradguard.analysis.fix_plans import CloneFirst, CloneIfUsedLater, Place
from gradguard.analysis.hazard import Fix, Hazard
from gradguard.analysis.values import Save


def to_hazard(finding: Finding) -> Hazard:
    return Hazard(finding.code, finding.span(), finding.message(), finding.severity(),
                  finding.confidence, tuple(finding.related()), _fix(finding))


def _in_statement(save: Save, place: Place) -> bool:
    # Line numbers count from the start of each piece (a block of the editor's text).
    line = getattr(save.node, "lineno", 0)
    statement = place.statement
    return save.piece is place.piece and \
        statement.lineno <= line <= (statement.end_lineno or statement.lineno)


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
