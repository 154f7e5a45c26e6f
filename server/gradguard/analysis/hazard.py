"""What the analysis reports: a hazard at a source range, with related locations."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Literal

from gradguard.rules import Severity

Confidence = Literal["high", "medium"]


@dataclass(frozen=True, order=True)
class Span:
    """A source range: 1-based lines, 1-based columns counted in Unicode code points."""

    line: int
    column: int
    end_line: int
    end_column: int

    def shifted(self, lines: int) -> Span:
        return replace(self, line=self.line + lines, end_line=self.end_line + lines)


@dataclass(frozen=True)
class Related:
    span: Span
    message: str
    # The file the location is in, when it is not the hazard's own.
    path: str | None = None


@dataclass(frozen=True)
class TextEdit:
    span: Span
    new_text: str


@dataclass(frozen=True)
class Fix:
    message: str
    edits: tuple[TextEdit, ...]


@dataclass(frozen=True)
class Hazard:
    code: str
    span: Span
    message: str
    severity: Severity
    confidence: Confidence
    related: tuple[Related, ...] = field(default=())
    fix: Fix | None = None

    def shifted(self, lines: int) -> Hazard:
        return replace(
            self,
            span=self.span.shifted(lines),
            related=tuple(r if r.path is not None else Related(r.span.shifted(lines), r.message)
                          for r in self.related),
            fix=None
            if self.fix is None
            else Fix(
                self.fix.message,
                tuple(TextEdit(e.span.shifted(lines), e.new_text) for e in self.fix.edits),
            ),
        )


def distinct(found: Iterable[tuple[str, Hazard]]) -> dict[str, list[Hazard]]:
    """Each hazard once, by the file it is in, sorted by place: a file that several
    analysed files import is analysed from each, and the same hazard comes back from
    each of them; the one kept is the one with the fewest related locations (found
    closest to where it is)."""
    best: dict[str, dict[tuple[object, ...], Hazard]] = {}
    for where, hazard in found:
        kept = best.setdefault(where, {})
        key = (hazard.code, hazard.span, hazard.message)
        known = kept.get(key)
        if known is None or len(hazard.related) < len(known.related):
            kept[key] = hazard
    return {where: sorted(hazards.values(), key=lambda h: (h.span, h.code, h.message))
            for where, hazards in best.items()}
