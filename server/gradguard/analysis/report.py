"""Turns findings (nodes) into hazards (source spans and messages a user reads)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import libcst as cst
from libcst.metadata import CodeRange

from gradguard.analysis.findings import Finding
from gradguard.analysis.hazard import Fix, Hazard, Related, Severity, Span
from gradguard.analysis.values import Save
from gradguard.fixes.render import layer_fix, plan_fix, spans_from

ROLE_WORDS = {
    "output": "the output of",
    "input": "the input of",
    "other": "the second operand of",
}
ROLE_NOUNS = {"output": "its output", "input": "its input", "other": "its second operand"}
# How many saving ops a GG004 message names; the rest are counted, and all are related.
NAMED_SAVES = 2

VIEW_WORDS = {
    "multi": "an output of split/chunk/unbind (or of iterating a tensor), a view that "
    "autograd forbids modifying in place; write to a clone, or use torch.cat/torch.stack",
    "leaf": "a view of a leaf tensor that requires grad; do it under torch.no_grad() or on "
    "a clone",
    "nograd": "a view created under torch.no_grad() while grad mode is on; create the view "
    "with grad enabled, or write to a clone",
}


def span_of(ranges: Mapping[cst.CSTNode, CodeRange], node: cst.CSTNode) -> Span:
    code_range = ranges[node]
    return Span(
        code_range.start.line,
        code_range.start.column + 1,
        code_range.end.line,
        code_range.end.column + 1,
    )


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
    return "error" if finding.confidence == "high" else "warning"


def to_hazard(finding: Finding, ranges: Mapping[cst.CSTNode, CodeRange],
              lines: Sequence[str]) -> Hazard:
    span = span_of(ranges, finding.node)
    related: list[Related] = []
    if finding.code in ("GG001", "GG004"):
        parts = []
        for save in finding.saves:
            label, aten = _saver(save)
            save_span = span_of(ranges, save.node)
            words = ROLE_WORDS.get(save.role, "a tensor saved by")
            parts.append(f"{words} {code(label)} at line {save_span.line}, which {aten}'s "
                         "backward needs")
            noun = ROLE_NOUNS.get(save.role, "a tensor")
            related.append(Related(save_span, f"{code(label)} saves {noun} here for backward"))
        what = "; ".join(parts)
        if finding.code == "GG001":
            message = f"{code(finding.op)} overwrites {what}"
        else:
            what = "; ".join(parts[:NAMED_SAVES])
            if len(parts) > NAMED_SAVES:
                others = sorted({r.span.line for r in related[NAMED_SAVES:]})
                what += (f"; and {len(parts) - NAMED_SAVES} more saved at line"
                         f"{'s' if len(others) > 1 else ''} "
                         f"{', '.join(str(line) for line in others)}")
            message = (f"{code(finding.op)} updates parameters in place that a later backward "
                       f"still needs: {what}; call it after the last backward through this "
                       "graph")
    elif finding.code == "GG002":
        message = (f"{code(finding.op)} writes in place into a leaf tensor that requires grad; "
                   "autograd forbids this outside torch.no_grad()")
    else:
        view = VIEW_WORDS.get(finding.detail, "a view")
        message = f"{code(finding.op)} writes in place into {view}"
    if finding.confidence == "medium":
        message += " (if these tensors require grad)"
    if finding.layer is not None and finding.layer.node is not finding.node:
        related.append(Related(span_of(ranges, finding.layer.node),
                               "the in-place layer is defined here"))
    for call in finding.via:
        related.append(Related(span_of(ranges, call), "reached through this call"))
    return Hazard(finding.code, span, message, _severity(finding), finding.confidence,
                  tuple(related), _fix(finding, ranges, lines))


def _fix(finding: Finding, ranges: Mapping[cst.CSTNode, CodeRange],
         lines: Sequence[str]) -> Fix | None:
    spans = spans_from(ranges)
    try:
        fix = plan_fix(finding.plan, spans, lines) if finding.plan is not None else None
        if fix is None and finding.layer is not None:
            fix = layer_fix(finding.layer, spans)
        return fix
    except KeyError:
        return None  # a node outside the text analysed (a stale block): no edit is safe
