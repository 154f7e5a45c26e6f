"""Applying fixes to text: one consistent set of edits, and fix-all until nothing is left."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from gradguard.analysis.analyze import Selection, analyze_source
from gradguard.analysis.hazard import Fix, Hazard, TextEdit
from gradguard.analysis.syntax import SourceError, parse

MAX_ROUNDS = 5


def _offsets(text: str) -> list[int]:
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def _offset(starts: list[int], line: int, column: int, size: int) -> int:
    if line > len(starts) - 1:
        return size
    return min(starts[line - 1] + column - 1, size)


def apply_edits(text: str, edits: Sequence[TextEdit]) -> str:
    """The text with non-overlapping edits applied (positions as the analysis gives them)."""
    starts = _offsets(text)
    spans = []
    for edit in edits:
        start = _offset(starts, edit.span.line, edit.span.column, len(text))
        end = _offset(starts, edit.span.end_line, edit.span.end_column, len(text))
        spans.append((start, end, edit.new_text))
    for start, end, new_text in sorted(spans, reverse=True):
        text = text[:start] + new_text + text[end:]
    return text


def combine(fixes: Iterable[Fix]) -> list[TextEdit]:
    """The edits of as many fixes as fit together; a fix that overlaps one taken waits."""
    chosen: list[TextEdit] = []
    for fix in fixes:
        edits = [e for e in fix.edits if e not in chosen]
        if any(_overlap(e, c) for e in edits for c in chosen):
            continue
        chosen.extend(edits)
    return chosen


def _overlap(a: TextEdit, b: TextEdit) -> bool:
    a_start, a_end = (a.span.line, a.span.column), (a.span.end_line, a.span.end_column)
    b_start, b_end = (b.span.line, b.span.column), (b.span.end_line, b.span.end_column)
    if a_start == a_end == b_start == b_end:
        return True  # two inserts at one place: their order would be a guess
    return a_start < b_end and b_start < a_end


@dataclass(frozen=True)
class FixResult:
    text: str
    fixed: int
    remaining: list[Hazard]
    error: str | None = None


def fix_text(source: str, selection: Selection | None = None) -> FixResult:
    """Apply every fix, re-analysing between rounds, until none is left to apply.

    The result is left as the source was if a round would produce text that does not
    parse: a fix must never leave a file broken.
    """
    text = source
    fixed = 0
    hazards = analyze_source(text, selection)
    for _ in range(MAX_ROUNDS):
        fixes = [h.fix for h in hazards if h.fix is not None]
        edits = combine(fixes)
        if not edits:
            break
        candidate = apply_edits(text, edits)
        try:
            parse(candidate)
        except SourceError as error:
            return FixResult(source, 0, analyze_source(source, selection),
                             f"a fix would not parse ({error}); file left untouched")
        before = len(hazards)
        text = candidate
        hazards = analyze_source(text, selection)
        fixed += max(before - len(hazards), 0)
    return FixResult(text, fixed, hazards)


__all__ = ["FixResult", "apply_edits", "combine", "fix_text"]
