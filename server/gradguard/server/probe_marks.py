"""Probe findings as the server keeps them: tied to the code they were found in.

The probe runs a file as it is on disk, and the user goes on editing. Each line a
finding points at is kept as an *anchor*: the text of the top-level block that held it
when the probe ran, and the line's offset in that block. While a block with that very
text is in the document the line is found again, wherever the block has moved; once the
block's text changes the finding is dropped for it (the code it was about is gone).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from gradguard.analysis.blocks import BlockText, split_blocks
from gradguard.analysis.hazard import Severity, Span
from gradguard.analysis.rules import RULES

_SEVERITIES = ("error", "warning", "information", "hint")


class BlockLike(Protocol):
    @property
    def text(self) -> str: ...

    @property
    def start_line(self) -> int: ...


@dataclass(frozen=True)
class Anchor:
    block_text: str
    block_line: int  # 1-based, where the block started when the probe ran
    offset: int  # the line's distance from the block's first line


def anchor_in(blocks: Sequence[BlockText], line: int) -> Anchor | None:
    """The anchor of 1-based ``line`` among a file's blocks (None: outside them all)."""
    for block in blocks:
        if block.start_line <= line < block.start_line + block.line_count:
            return Anchor(block.text, block.start_line, line - block.start_line)
    return None


def find(anchor: Anchor, blocks: Sequence[BlockLike]) -> int | None:
    """The line ``anchor`` is at now, or None if no block has its text any more.

    Two blocks with the same text (two identical helpers): the one nearest to where
    the anchored block was."""
    best: BlockLike | None = None
    for block in blocks:
        if block.text == anchor.block_text and (
                best is None
                or abs(block.start_line - anchor.block_line)
                < abs(best.start_line - anchor.block_line)):
            best = block
    return None if best is None else best.start_line + anchor.offset


@dataclass(frozen=True)
class MarkRelated:
    path: str
    line: int  # 1-based, in the file as probed
    column: int
    message: str
    anchor: Anchor | None  # None: in a file other than the mark's


@dataclass(frozen=True)
class ProbeMark:
    """One probe finding, in the file it points at."""

    target: str
    path: str
    code: str
    severity: Severity
    message: str
    anchor: Anchor
    column: int
    end_offset: int  # end line - line
    end_column: int
    related: tuple[MarkRelated, ...] = field(default=())
    torch_error: str | None = None


@dataclass(frozen=True)
class PlacedRelated:
    path: str
    line: int
    column: int
    message: str


@dataclass(frozen=True)
class PlacedMark:
    """A probe finding where it is in the document now."""

    mark: ProbeMark
    span: Span
    related: tuple[PlacedRelated, ...]


def place(marks: Iterable[ProbeMark], blocks: Sequence[BlockLike]) -> list[PlacedMark]:
    """The marks whose block is still in the document, at their lines now."""
    placed = []
    for mark in marks:
        line = find(mark.anchor, blocks)
        if line is None:
            continue
        related = []
        for item in mark.related:
            where = item.line if item.anchor is None else find(item.anchor, blocks)
            if where is not None:
                related.append(PlacedRelated(item.path, where, item.column, item.message))
        span = Span(line, mark.column, line + mark.end_offset, mark.end_column)
        placed.append(PlacedMark(mark, span, tuple(related)))
    return placed


def _number(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 \
        else default


def marks_of(target: str, findings: Iterable[Mapping[str, Any]],
             texts: Mapping[str, str]) -> list[ProbeMark]:
    """Marks for a probe's findings (dicts in the ``gradguard check`` JSON schema).

    ``texts``: the text of each file the findings may point into, as it was on disk when
    the probe ran; a finding in a file missing from it, or at a line outside its blocks,
    is dropped (it cannot be shown against any text).
    """
    blocks = {path: split_blocks(text) for path, text in texts.items()}
    marks = []
    for finding in findings:
        path = os.path.abspath(str(finding.get("path", "")))
        code = str(finding.get("code", ""))
        line = _number(finding.get("line"), 0)
        if path not in blocks or code not in RULES or not line:
            continue
        anchor = anchor_in(blocks[path], line)
        if anchor is None:
            continue
        column = _number(finding.get("column"), 1)
        end_line = max(_number(finding.get("end_line"), line), line)
        end_column = _number(finding.get("end_column"), column)
        if end_line == line:
            end_column = max(end_column, column)
        related = []
        for item in finding.get("related") or []:
            if not isinstance(item, Mapping):
                continue
            where = os.path.abspath(str(item.get("path", path)))
            at = _number(item.get("line"), 0)
            if not at:
                continue
            here = anchor_in(blocks[where], at) if where in blocks else None
            if where in blocks and here is None:
                continue
            related.append(MarkRelated(where, at, _number(item.get("column"), 1),
                                       str(item.get("message", "")),
                                       here if where == path else None))
        severity = finding.get("severity")
        torch_error = finding.get("torch_error")
        marks.append(ProbeMark(
            target, path, code,
            severity if severity in _SEVERITIES else "error",  # type: ignore[arg-type]
            str(finding.get("message", "")), anchor, column, end_line - line, end_column,
            tuple(related), str(torch_error) if torch_error else None))
    return marks


class ProbeStore:
    """The marks of the last run of each probe target, by the file they point into."""

    def __init__(self) -> None:
        self._by_path: dict[str, dict[str, tuple[ProbeMark, ...]]] = {}

    def record(self, target: str, marks: Iterable[ProbeMark]) -> set[str]:
        """Replace what ``target`` found last time; the paths whose marks changed."""
        changed = {path for path, by_target in self._by_path.items() if target in by_target}
        for by_target in self._by_path.values():
            by_target.pop(target, None)
        fresh: dict[str, list[ProbeMark]] = {}
        for mark in marks:
            fresh.setdefault(mark.path, []).append(mark)
        for path, found in fresh.items():
            self._by_path.setdefault(path, {})[target] = tuple(found)
            changed.add(path)
        self._by_path = {p: t for p, t in self._by_path.items() if t}
        return changed

    def for_path(self, path: str | None) -> tuple[ProbeMark, ...]:
        if path is None:
            return ()
        by_target = self._by_path.get(os.path.abspath(path), {})
        return tuple(mark for marks in by_target.values() for mark in marks)
