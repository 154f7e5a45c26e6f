"""Probe findings as the server keeps them: tied to the code they were found in.

The probe runs a file as it is on disk, and the user goes on editing. Each line a
finding points at is kept as an *anchor*: the text of the top-level block that held it
when the probe ran, the line's offset in that block, and the whole file as probed.
While a block with that very text is in the document the line is found again, wherever
the block has moved (the common case, and cheap). Once the block's text changed, the
file as probed is compared with the document line by line (difflib): a line still there
unchanged is found where it is now; a line that was edited keeps its finding, marked
*stale* (what the probe saw there may no longer hold: run it again); a line deleted
takes its finding with it. The line numbers the message quotes ("saved for backward at
line 12") are the related locations', so they are rewritten as those move.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from gradguard.analysis.blocks import BlockText, split_blocks
from gradguard.analysis.hazard import Span
from gradguard.rules import RULES, SEVERITIES, Severity
from gradguard.text import source_lines


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
    source: str = field(default="", compare=False, repr=False)  # the file as probed

    @property
    def line(self) -> int:
        return self.block_line + self.offset


def anchor_in(blocks: Sequence[BlockText], line: int, source: str = "") -> Anchor | None:
    """The anchor of 1-based ``line`` among a file's blocks (None: outside them all)."""
    for block in blocks:
        if block.start_line <= line < block.start_line + block.line_count:
            return Anchor(block.text, block.start_line, line - block.start_line, source)
    return None


def find(anchor: Anchor, blocks: Sequence[BlockLike]) -> int | None:
    """The line ``anchor`` is at now, if a block still has its block's very text.

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


class LineMap:
    """Lines of the file as probed -> lines of the document now, by a line diff."""

    def __init__(self, before: str, blocks: Sequence[BlockLike]) -> None:
        now: list[str] = []
        for block in sorted(blocks, key=lambda b: b.start_line):
            now.extend(source_lines(block.text))
        matcher = difflib.SequenceMatcher(None, source_lines(before), now, autojunk=False)
        self._opcodes = matcher.get_opcodes()

    def line(self, old: int) -> tuple[int, bool] | None:
        """(1-based line now, whether the line itself was edited); None: deleted."""
        index = old - 1
        for tag, i1, i2, j1, j2 in self._opcodes:
            if i1 <= index < i2:
                if tag == "equal":
                    return j1 + (index - i1) + 1, False
                if tag == "replace":  # edited: the replacement's line at the same rank
                    return min(j1 + (index - i1), j2 - 1) + 1, True
                return None  # deleted
        return None


class Locator:
    """Finds anchors in one state of a document; one diff per file as probed."""

    def __init__(self, blocks: Sequence[BlockLike]) -> None:
        self._blocks = blocks
        self._maps: dict[int, LineMap] = {}

    def locate(self, anchor: Anchor) -> tuple[int, bool] | None:
        line = find(anchor, self._blocks)
        if line is not None:
            return line, False
        if not anchor.source:
            return None
        key = id(anchor.source)  # marks of one probe run share the one string
        line_map = self._maps.get(key)
        if line_map is None:
            line_map = self._maps[key] = LineMap(anchor.source, self._blocks)
        return line_map.line(anchor.line)


@dataclass(frozen=True)
class MarkRelated:
    path: str
    line: int  # 1-based, in the file as probed
    column: int
    message: str
    anchor: Anchor | None  # None: in a file other than the mark's


@dataclass(frozen=True)
class ProbeMark:
    """One probe finding, in the file it points at. ``message`` is a template: ``{0}``,
    ``{1}`` ... stand for the lines of the related locations ``refs`` names (indexes
    into ``related``), so that "saved for backward at line {0}" follows the save."""

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
    refs: tuple[int, ...] = field(default=())


@dataclass(frozen=True)
class PlacedRelated:
    path: str
    line: int
    column: int
    message: str


@dataclass(frozen=True)
class PlacedMark:
    """A probe finding where it is in the document now. ``stale``: its line was edited
    since the probe ran, so what the probe saw there may no longer hold."""

    mark: ProbeMark
    span: Span
    related: tuple[PlacedRelated, ...]
    message: str
    stale: bool = False


def place(marks: Iterable[ProbeMark], blocks: Sequence[BlockLike]) -> list[PlacedMark]:
    """The marks whose line is still in the document, at their lines now."""
    locator = Locator(blocks)
    placed = []
    for mark in marks:
        where = locator.locate(mark.anchor)
        if where is None:
            continue
        line, stale = where
        related = []
        lines_now: dict[int, int] = {}
        for index, item in enumerate(mark.related):
            if item.anchor is None:
                related.append(PlacedRelated(item.path, item.line, item.column, item.message))
                continue
            found = locator.locate(item.anchor)
            if found is not None:
                lines_now[index] = found[0]
                related.append(PlacedRelated(item.path, found[0], item.column, item.message))
        quoted = [lines_now.get(index, mark.related[index].line) for index in mark.refs]
        span = Span(line, mark.column, line + mark.end_offset, mark.end_column)
        placed.append(PlacedMark(mark, span, tuple(related), mark.message.format(*quoted),
                                 stale))
    return placed


_LINE_REF = re.compile(r"at line (\d+)\b")


def _template(message: str, related: Sequence[MarkRelated]) -> tuple[str, tuple[int, ...]]:
    """``message`` with each "at line N" that quotes a related location in the same
    file replaced by a placeholder for that location's line (see ``ProbeMark``)."""
    escaped = message.replace("{", "{{").replace("}", "}}")
    refs: list[int] = []

    def substitute(match: re.Match[str]) -> str:
        number = int(match.group(1))
        for index, item in enumerate(related):
            if item.anchor is not None and item.line == number:
                refs.append(index)
                return f"at line {{{len(refs) - 1}}}"
        return match.group(0)

    return _LINE_REF.sub(substitute, escaped), tuple(refs)


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
        anchor = anchor_in(blocks[path], line, texts[path])
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
            here = anchor_in(blocks[where], at, texts[where]) if where in blocks else None
            if where in blocks and here is None:
                continue
            related.append(MarkRelated(where, at, _number(item.get("column"), 1),
                                       str(item.get("message", "")),
                                       here if where == path else None))
        severity = finding.get("severity")
        torch_error = finding.get("torch_error")
        message, refs = _template(str(finding.get("message", "")), related)
        marks.append(ProbeMark(
            target, path, code,
            severity if severity in SEVERITIES else "error",  # type: ignore[arg-type]
            message, anchor, column, end_line - line, end_column,
            tuple(related), str(torch_error) if torch_error else None, refs))
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
