"""Findings as the interpreter records them: nodes, not yet source positions.

One class per kind of finding, each holding what its message needs and no more, and
rendering its message and related locations from the rule catalogue (``rules.py``).
A new rule needs a class here (``tests/test_findings.py`` fails without one). The
interpreter makes findings in its hot path: they are slotted, and frozen because a
summary's findings are shared by every call that replays it.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, ClassVar, Literal

from gradguard.analysis.hazard import Confidence, Hazard, Related, Span
from gradguard.analysis.syntax import Piece
from gradguard.analysis.values import NnModule, Save
from gradguard.rules import (
    CODE_SKIPPED,
    FILE_NOT_ANALYSED,
    FORBIDDEN_VIEW_WRITTEN,
    LEAF_WRITTEN_IN_PLACE,
    PARAMETERS_UPDATED_BEFORE_BACKWARD,
    RULES,
    SAVED_TENSOR_CHANGED_SILENTLY,
    SAVED_TENSOR_OVERWRITTEN,
    UNCERTAIN_SUFFIX,
    UNREACHED_SUFFIX,
    Severity,
)

if TYPE_CHECKING:
    from gradguard.analysis.fix_plans import Plan

# A call site: the node and the piece it was parsed in.
Site = tuple[Piece, ast.AST]

ROLE_WORDS = {
    "output": "the output of",
    "input": "the input of",
    "other": "the second operand of",
}
ROLE_NOUNS = {"output": "its output", "input": "its input", "other": "its second operand"}
# How many saving ops a GG004 message names; the rest are counted, and all are related.
NAMED_SAVES = 2


@dataclass(frozen=True, slots=True, eq=False)
class Finding:
    """What every static finding holds: where (the node of the write, or of the code
    the analysis stopped at), how sure, and how the write was reached."""

    code: ClassVar[str]
    piece: Piece
    node: ast.AST
    op: str
    confidence: Confidence
    saves: tuple[Save, ...] = ()
    # Call sites through which the write was reached, outermost first.
    via: tuple[Site, ...] = ()
    # The in-place layer (``nn.ReLU(inplace=True)``...) that made the write, if one did.
    layer: NnModule | None = None
    plan: Plan | None = None
    # For a write made inside an installed library: the finding stands on the user's
    # call that reached it, and these are the library's call sites below that call,
    # then the write itself (``relocate.py``).
    inside: tuple[Site, ...] = ()

    def key(self) -> tuple[object, ...]:
        return finding_key(self.code, self.node, self.saves)

    def message(self) -> str:
        raise NotImplementedError

    def span(self) -> Span:
        return self.piece.span(self.node)

    def severity(self) -> Severity:
        return RULES[self.code].default_severity if self.confidence == "high" else "warning"

    def suffix(self) -> str:
        return UNCERTAIN_SUFFIX if self.confidence == "medium" else ""

    def related(self) -> list[Related]:
        """The saves' places (for the kinds that name saves), the in-place layer's
        definition and the call sites the write was reached through."""
        home = self.piece.path
        related = [Related(save.piece.span(save.node),
                           f"{code(_saver(save)[0])} saves "
                           f"{ROLE_NOUNS.get(save.role, 'a tensor')} here for backward",
                           _other(save.piece.path, home))
                   for save in self.saves]
        related += self._calls_that_saved(home)
        layer = self.layer
        if layer is not None and layer.node is not self.node:
            related.append(Related(layer.piece.span(layer.node),
                                   "the in-place layer is defined here",
                                   _other(layer.piece.path, home)))
        for piece, call in self.via:
            related.append(Related(piece.span(call), "reached through this call",
                                   _other(piece.path, home)))
        for index, (piece, node) in enumerate(self.inside, 1):
            text = f"{code(self.op)} is run here, in the installed library" \
                if index == len(self.inside) else "the library reaches it through this call"
            related.append(Related(piece.span(node), text, _other(piece.path, home)))
        return related

    def _calls_that_saved(self, home: str) -> list[Related]:
        """For a save made in another file (a helper module, an installed library's
        layer): the call in this file that it was made inside, so that the user's own
        line that saved the tensor is named beside the other file's."""
        found: dict[tuple[int, int], Related] = {}
        for save in self.saves:
            if save.piece.path == home:
                continue
            ours = [(piece, call) for piece, call in save.via if piece.path == home]
            if ours:
                piece, call = ours[-1]
                span = piece.span(call)
                found.setdefault((span.line, span.column), Related(
                    span, f"{code(_saver(save)[0])} saves "
                          f"{ROLE_NOUNS.get(save.role, 'a tensor')} inside this call"))
        return list(found.values())

    def replayed(self, saves: tuple[Save, ...], via: tuple[Site, ...],
                 layer: NnModule | None) -> Finding:
        """This finding of a summary, as a call site that replays it reports it."""
        return replace(self, saves=saves, via=via, layer=layer)

    def _saved(self, saves: tuple[Save, ...]) -> list[str]:
        """Each save as a static message names it."""
        rule = RULES[self.code]
        parts = []
        for save in saves:
            label, aten = _saver(save)
            line = save.piece.span(save.node).line
            where = f"line {line}"
            if save.piece.path != self.piece.path:
                where = f"{_near(save.piece.path, self.piece.path)}:{line}"
            parts.append(rule.message("static.save", role=ROLE_WORDS.get(save.role,
                                                                         "a tensor saved by"),
                                      saver=code(label), where=where, aten=aten))
        return parts


@dataclass(frozen=True, slots=True, eq=False)
class SavedTensorOverwritten(Finding):
    code: ClassVar[str] = SAVED_TENSOR_OVERWRITTEN
    # No output of the function whose op made the saves carries gradient (``reach.py``).
    unreached: bool = False

    def message(self) -> str:
        saved = "; ".join(self._saved(self.saves))
        text = RULES[self.code].message("static", op=code(self.op), saved=saved)
        return text + (UNREACHED_SUFFIX if self.unreached else self.suffix())


@dataclass(frozen=True, slots=True, eq=False)
class LeafWrittenInPlace(Finding):
    code: ClassVar[str] = LEAF_WRITTEN_IN_PLACE

    def message(self) -> str:
        return RULES[self.code].message("static", op=code(self.op)) + self.suffix()


ForbiddenView = Literal["leaf", "multi", "nograd", "hooked", "custom"]
FORBIDDEN_VIEWS: tuple[ForbiddenView, ...] = ("leaf", "multi", "nograd", "hooked", "custom")


@dataclass(frozen=True, slots=True, eq=False)
class ForbiddenViewWritten(Finding):
    code: ClassVar[str] = FORBIDDEN_VIEW_WRITTEN
    view: ForbiddenView = field(kw_only=True)

    def message(self) -> str:
        rule = RULES[self.code]
        return rule.message("static", op=code(self.op),
                            view=rule.message(f"view.{self.view}")) + self.suffix()


@dataclass(frozen=True, slots=True, eq=False)
class ParametersUpdatedBeforeBackward(Finding):
    code: ClassVar[str] = PARAMETERS_UPDATED_BEFORE_BACKWARD
    # The backward that still needs the parameters (where to move the step).
    backward: Site | None = None
    # That backward comes first in the same block: it runs again after the step.
    runs_again: bool = False

    def message(self) -> str:
        parts = self._saved(self.saves)
        saved = "; ".join(parts[:NAMED_SAVES])
        if len(parts) > NAMED_SAVES:
            others = sorted({save.piece.span(save.node).line
                             for save in self.saves[NAMED_SAVES:]})
            saved += (f"; and {len(parts) - NAMED_SAVES} more saved at line"
                      f"{'s' if len(others) > 1 else ''} "
                      f"{', '.join(str(line) for line in others)}")
        return RULES[self.code].message("static", op=code(self.op), saved=saved,
                                        advice=self._where_to_step()) + self.suffix()

    def _where_to_step(self) -> str:
        """Where the step belongs: after the backward that still needs the parameters."""
        rule = RULES[self.code]
        if self.backward is None:
            return rule.message("advice")
        piece, node = self.backward
        line = piece.span(node).line
        where = f"line {line}"
        if piece.path != self.piece.path:
            where = f"{_near(piece.path, self.piece.path)}:{line}"
        return rule.message("advice.again" if self.runs_again else "advice.at", where=where)

    def replayed(self, saves: tuple[Save, ...], via: tuple[Site, ...],
                 layer: NnModule | None) -> Finding:
        # The backward is the callee's: a caller is told to step after its last one.
        return replace(self, saves=saves, via=via, layer=layer, backward=None,
                       runs_again=False)


@dataclass(frozen=True, slots=True, eq=False)
class SavedTensorChangedSilently(Finding):
    code: ClassVar[str] = SAVED_TENSOR_CHANGED_SILENTLY

    def message(self) -> str:
        saved = "; ".join(self._saved(self.saves))
        return RULES[self.code].message("static", op=code(self.op), saved=saved) + \
            self.suffix()


@dataclass(frozen=True, slots=True, eq=False)
class ExpressionSkipped(Finding):
    """An expression nested too deeply to follow (``syntax.Skipped``)."""

    code: ClassVar[str] = CODE_SKIPPED
    op: str = ""
    confidence: Confidence = "high"
    depth: int = field(kw_only=True)

    def message(self) -> str:
        return RULES[self.code].message(
            "static", what=f"an expression nested {self.depth} levels deep")


@dataclass(frozen=True, slots=True, eq=False)
class RootStopped(Finding):
    """A root (a function, a method or the script, named by ``op``) the analysis
    stopped in, reported at its first line."""

    code: ClassVar[str] = CODE_SKIPPED
    confidence: Confidence = "high"
    why: str = field(kw_only=True)

    def message(self) -> str:
        what = "the script" if self.op == "<module>" else f"`{self.op.split()[-1]}`"
        return RULES[self.code].message("static.function", what=what, why=self.why)

    def span(self) -> Span:
        span = self.piece.span(self.node)
        first = self.piece.line(getattr(self.node, "lineno", 1))
        return Span(span.line, span.column, span.line, len(first.rstrip()) + 1)


@dataclass(frozen=True, slots=True)
class FileNotAnalysed:
    """A file that could not be analysed: a finding of its own, at the error's place
    when it has one, else at the top of the file."""

    code: ClassVar[str] = FILE_NOT_ANALYSED
    reason: str
    line: int = 0
    column: int = 0

    def message(self) -> str:
        return RULES[self.code].message("static", reason=self.reason)

    def hazard(self) -> Hazard:
        line, column = max(self.line, 1), max(self.column, 1)
        return Hazard(self.code, Span(line, column, line, column), self.message(),
                      RULES[self.code].default_severity, "high")


# Every kind of finding (``tests/test_findings.py`` holds the catalogue to it).
KINDS: tuple[type[Finding] | type[FileNotAnalysed], ...] = (
    SavedTensorOverwritten, LeafWrittenInPlace, ForbiddenViewWritten,
    ParametersUpdatedBeforeBackward, SavedTensorChangedSilently, ExpressionSkipped,
    RootStopped, FileNotAnalysed)


def finding_key(code: str, node: ast.AST, saves: tuple[Save, ...]) -> tuple[object, ...]:
    """What makes two reports one hazard: the code, the write, the saves it breaks."""
    return (code, id(node), tuple(id(s.node) for s in saves))


_RANK = {"high": 0, "medium": 1}


def better(new: Finding, old: Finding) -> bool:
    """Of two reports of one hazard, the surer one, then the one with the shorter path."""
    return surer(new.confidence, len(new.via), old)


def surer(confidence: Confidence, via: int, old: Finding) -> bool:
    """Would a report of ``old``'s hazard with this confidence and path length be kept
    instead of it?"""
    return (_RANK[confidence], via) < (_RANK[old.confidence], len(old.via))


def code(op: str) -> str:
    """``self.relu (ReLU, inplace=True)`` as `self.relu` (ReLU, inplace=True)."""
    name, space, note = op.partition(" (")
    if space and note.endswith(")") and "(" not in name:
        return f"`{name}` ({note}"
    return f"`{op}`"


def _saver(save: Save) -> tuple[str, str]:
    label, _, aten = save.op.partition("|")
    return label, aten or label


def _near(path: str, home: str) -> str:
    """Another file's path as seen from the finding's file (``layers.py``, ``../model.py``)."""
    return os.path.relpath(path, os.path.dirname(home) or ".") if os.path.isabs(path) and \
        os.path.isabs(home) else path


def _other(path: str, home: str) -> str | None:
    """The file a related location is in, when it is not the finding's own."""
    return None if path == home else path
