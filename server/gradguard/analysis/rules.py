"""The rule catalogue: codes, names, default severities and where each is documented."""

from __future__ import annotations

from dataclasses import dataclass

DOCS_BASE = "https://github.com/gradguard/gradguard/blob/main/docs/rules"


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    summary: str

    @property
    def doc_url(self) -> str:
        return f"{DOCS_BASE}/{self.code}.md"


RULES: dict[str, Rule] = {
    rule.code: rule
    for rule in (
        Rule(
            "GG001",
            "saved-tensor-overwritten",
            "An in-place write to a tensor (or a view of it) that an earlier op saved for "
            "backward.",
        ),
        Rule(
            "GG002",
            "leaf-inplace",
            "An in-place write to a leaf tensor that requires grad, outside no_grad.",
        ),
        Rule(
            "GG003",
            "forbidden-view-inplace",
            "An in-place write to a view autograd forbids modifying: an output of "
            "split/chunk/unbind, a view of a leaf, or a view made under no_grad.",
        ),
        Rule(
            "GG004",
            "parameters-updated-before-backward",
            "Parameters written in place (optimizer.step(), weight edits) between a forward "
            "and a backward that still needs them.",
        ),
        Rule(
            "GG900",
            "file-not-analysed",
            "A file that could not be read or parsed (not UTF-8, a syntax error, deeper than "
            "Python accepts) or whose analysis failed: nothing in it was checked.",
        ),
        Rule(
            "GG901",
            "code-skipped",
            "Code the analysis could not follow to its end (an expression or a chain of "
            "calls nested too deeply): hazards in it are not reported; the rest of the file "
            "is.",
        ),
    )
}
