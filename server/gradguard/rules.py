"""The rule catalogue, as data: each rule's code, name, default severity, summary,
message templates and documentation page.

Everything that reports a rule reads it here: the static analysis and the torch probe
(their messages), ``gradguard check`` (``--select``/``--ignore``, SARIF rule metadata),
the language server (code descriptions, settings) and the docs (``docs/rules/CODE.md``
is checked against it). It imports nothing of GradGuard's and no libcst, so the probe's
child process and the settings can read it cheaply.

To add a rule: a constant for its code, a ``Rule`` in ``RULES``, its page under
``docs/rules/`` and its case file under ``tests/rules/``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

Severity = Literal["error", "warning", "information", "hint"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "information", "hint")

DOCS_BASE = "https://github.com/gradguard/gradguard/blob/main/docs/rules"

SAVED_TENSOR_OVERWRITTEN = "GG001"
LEAF_WRITTEN_IN_PLACE = "GG002"
FORBIDDEN_VIEW_WRITTEN = "GG003"
PARAMETERS_UPDATED_BEFORE_BACKWARD = "GG004"
SAVED_TENSOR_CHANGED_SILENTLY = "GG005"
# Statuses rather than hazards: what the analysis could not look at.
FILE_NOT_ANALYSED = "GG900"
CODE_SKIPPED = "GG901"

# How a static GG001 or GG004 message names each op whose saved tensor is written.
_SAVE_PHRASE = "{role} {saver} at {where}, which {aten}'s backward needs"

# Appended to a static finding that holds only if tensors of unknown origin require grad.
UNCERTAIN_SUFFIX = " (if these tensors require grad)"
# Appended to a static GG001 whose saving op's output no output of its function carries.
UNREACHED_SUFFIX = (" (if a backward ever reaches it: what this function returns carries"
                    " no gradient, so no loss computed from it does)")


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    summary: str
    # Messages by kind, ``str.format`` templates; which fields each takes is the
    # template's business, and the caller's (tests render every one).
    messages: Mapping[str, str] = field(default_factory=dict)
    # A finding whose every fact is known; one that depends on what the analysis cannot
    # see (whether an argument requires grad) is a warning whatever the rule.
    default_severity: Severity = "error"

    @property
    def doc_url(self) -> str:
        return f"{DOCS_BASE}/{self.code}.md"

    def message(self, kind: str, **fields: object) -> str:
        return self.messages[kind].format(**fields)


RULES: dict[str, Rule] = {
    rule.code: rule
    for rule in (
        Rule(
            SAVED_TENSOR_OVERWRITTEN,
            "saved-tensor-overwritten",
            "An in-place write to a tensor (or a view of it) that an earlier op saved for "
            "backward.",
            {
                "static": "{op} overwrites {saved}",
                "static.save": _SAVE_PHRASE,
                "probe": "`{op}`{module} overwrites {saved}{view}, saved for backward{where} "
                         "({versions})",
                "probe.stale": "{saved} was modified in place before backward used it, by a "
                               "write the probe did not see (no dispatch: a C extension, or "
                               "another mode); autograd's check failed",
            },
        ),
        Rule(
            LEAF_WRITTEN_IN_PLACE,
            "leaf-inplace",
            "An in-place write to a leaf tensor that requires grad, outside no_grad.",
            {
                "static": "{op} writes in place into a leaf tensor that requires grad; "
                          "autograd forbids this outside torch.no_grad()",
                "probe": "`{op}` writes in place into a leaf tensor that requires grad, "
                         "outside no_grad; autograd refused it",
            },
        ),
        Rule(
            FORBIDDEN_VIEW_WRITTEN,
            "forbidden-view-inplace",
            "An in-place write to a view autograd forbids modifying: an output of "
            "split/chunk/unbind, a view of a leaf, a view made under no_grad, an input "
            "or output of a module with a full backward hook, or a view a custom autograd "
            "Function returned.",
            {
                "static": "{op} writes in place into {view}",
                "view.multi": "an output of split/chunk/unbind (or of iterating a tensor), a "
                              "view that autograd forbids modifying in place; write to a "
                              "clone, or use torch.cat/torch.stack",
                "view.leaf": "a view of a leaf tensor that requires grad; do it under "
                             "torch.no_grad() or on a clone",
                "view.nograd": "a view created under torch.no_grad() while grad mode is on; "
                               "create the view with grad enabled, or write to a clone",
                "view.hooked": "an input or output of a module with a full backward hook "
                               "(the hook's BackwardHookFunction hands them on as views "
                               "autograd forbids modifying in place); build the in-place "
                               "layer with inplace=False, or hook the tensor instead",
                "view.custom": "an output of a custom autograd Function that is a view (an "
                               "input returned as it was, or a view made in its forward), "
                               "which autograd forbids modifying in place; return a clone, "
                               "or mark an input written in place with ctx.mark_dirty",
                "probe.leaf": "`{op}` writes in place into a view of a leaf tensor that "
                              "requires grad; autograd refused it",
                "probe.multi": "`{op}` writes in place into a view autograd forbids "
                               "modifying (an output of split/chunk/unbind or of a custom "
                               "Function); autograd refused it",
                "probe.nograd": "`{op}` writes in place, with grad enabled, into a view made "
                                "under no_grad; autograd refused it",
            },
        ),
        Rule(
            PARAMETERS_UPDATED_BEFORE_BACKWARD,
            "parameters-updated-before-backward",
            "Parameters written in place (optimizer.step(), weight edits) between a forward "
            "and a backward that still needs them.",
            {
                "static": "{op} updates parameters in place that a later backward still "
                          "needs: {saved}; {advice}",
                "advice": "call it after the last backward through this graph",
                "advice.at": "call it after the backward at {where}",
                "advice.again": "the backward at {where} runs again after it (the next pass "
                                "of its loop, or the next call) through this graph: call it "
                                "after the last such backward, or detach what carries the "
                                "graph from one pass to the next",
                "static.save": _SAVE_PHRASE,
                "probe": "{actor} updates {what} in place, but {saved} saved it{where} for a "
                         "backward that has not run yet ({versions})",
            },
        ),
        Rule(
            SAVED_TENSOR_CHANGED_SILENTLY,
            "saved-tensor-changed-through-data",
            "A write through `.data` into a tensor that an earlier op saved for backward: "
            "autograd raises nothing, and the gradients come out wrong.",
            {
                "static": "{op} writes through `.data` into {saved}; `.data` has a version "
                          "counter of its own, so backward raises nothing and computes its "
                          "gradients from the new values; write into a clone, or after "
                          "backward",
                "static.save": _SAVE_PHRASE,
                "probe": "`{op}`{module} writes into {saved}, saved for backward{where}, "
                         "through `.data` or another alias autograd does not track: backward "
                         "then used the new values without an error",
                "probe.confirmed": ", so its gradients are silently wrong (confirmed: "
                                   "recomputed without the write, they differ by up to "
                                   "{difference:.3g})",
                "probe.unconfirmed": ", so its gradients are probably wrong (not confirmed: "
                                     "the probe could not recompute them without the write)",
            },
            default_severity="warning",
        ),
        Rule(
            FILE_NOT_ANALYSED,
            "file-not-analysed",
            "A file that could not be read or parsed (not UTF-8, a syntax error, deeper than "
            "Python accepts) or whose analysis failed: nothing in it was checked.",
            {
                "static": "not analysed: {reason}",
                "crash": "GradGuard's analysis failed ({error}); please report it",
            },
        ),
        Rule(
            CODE_SKIPPED,
            "code-skipped",
            "Code the analysis could not follow to its end (an expression or a chain of "
            "calls nested too deeply): hazards in it are not reported; the rest of the file "
            "is.",
            {
                "static.function": "GradGuard could not follow {what} to its end ({why}): "
                                   "what it found on the way is reported, hazards further "
                                   "on are not",
                "static": "GradGuard skipped {what}: it takes its value as "
                           "unknown, and analyses the rest of the file",
            },
            default_severity="information",
        ),
    )
}


def message(code: str, kind: str, **fields: object) -> str:
    """Rule ``code``'s message of ``kind``, filled in."""
    return RULES[code].message(kind, **fields)
