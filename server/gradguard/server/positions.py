"""Positions: code-point columns (the analysis) <-> the client's negotiated code units.

The analysis counts lines from 1 and columns from 1 in Unicode code points. An LSP client
counts both from 0, and columns in the encoding negotiated at ``initialize``: UTF-16 code
units by default (an emoji is 2, a CJK character 1), UTF-8 bytes (a CJK character is 3,
an emoji 4) or UTF-32 (code points). A tab is one unit in all three. Lines are split,
and units counted, by ``gradguard.text``; this module only speaks the LSP's types.
"""

from __future__ import annotations

from lsprotocol import types

from gradguard.analysis.hazard import Span
from gradguard.text import (
    Encoding,
    Lines,
    client_lines,
    column_from_units,
    line_break_length,
    split_lines,
    units,
)

__all__ = ["Encoding", "LineIndex", "apply_change", "column_from_units", "encoding_of",
           "split_lines", "units"]


def encoding_of(kind: str | None) -> Encoding:
    """The encoding pygls negotiated (``ls.workspace.position_encoding``); UTF-16 if unknown."""
    if kind in ("utf-8", "utf-32"):
        return kind  # type: ignore[return-value]
    return "utf-16"


class LineIndex(Lines):
    """The lines of one text, to turn offsets, spans and client positions into each other."""

    def offset(self, position: types.Position, encoding: Encoding) -> int:
        """The code-point offset into the text of a client position (clamped into it)."""
        if position.line < 0:
            return 0
        if position.line >= self.line_count:
            return len(self.text)
        line = self.line(position.line)
        return self.starts[position.line] + column_from_units(line, position.character,
                                                              encoding)

    def offsets(self, range_: types.Range, encoding: Encoding) -> tuple[int, int]:
        start, end = self.offset(range_.start, encoding), self.offset(range_.end, encoding)
        return (start, end) if start <= end else (end, start)

    def position_at(self, offset: int, encoding: Encoding) -> types.Position:
        """The client position of a code-point offset into the text."""
        line, column = self.line_column(offset)
        start = self.starts[line]
        return types.Position(line, units(self.text[start: start + column], encoding))

    def position(self, line: int, column: int, encoding: Encoding) -> types.Position:
        """The client position of a 0-based line and code-point column, clamped into the text.

        Results kept from an older text (a block that does not parse keeps its last good
        findings) can point past a line's end or past the last line; they are moved to the
        nearest position that exists, so every range sent lies inside the document.
        """
        if line >= self.line_count:
            line, column = self.line_count - 1, len(self.line(self.line_count - 1))
        elif line < 0:
            line, column = 0, 0
        text = self.line(line)
        column = max(0, min(column, len(text)))
        return types.Position(line, units(text[:column], encoding))

    def span_range(self, span: Span, encoding: Encoding, line_shift: int = 0) -> types.Range:
        """The client range of an analysis span (1-based lines and code-point columns).

        ``line_shift`` is subtracted from the span's lines first: a notebook cell starts
        at some line of the program made of all the cells.
        """
        start = self.position(span.line - 1 - line_shift, span.column - 1, encoding)
        end = self.position(span.end_line - 1 - line_shift, span.end_column - 1, encoding)
        if (end.line, end.character) < (start.line, start.character):
            end = start
        return types.Range(start, end)

    def line_range(self, line: int, encoding: Encoding) -> types.Range:
        """The client range of the whole text of a 0-based line (clamped into the text)."""
        line = max(0, min(line, self.line_count - 1))
        return types.Range(types.Position(line, 0),
                           types.Position(line, units(self.line(line), encoding)))


def apply_change(text: str, index: LineIndex, change: types.TextDocumentContentChangeEvent,
                 encoding: Encoding) -> str:
    """The text after one ``didChange`` content change (a ranged edit or the whole text)."""
    if isinstance(change, types.TextDocumentContentChangePartial):
        # Columns are clamped to the line's text, so an edit never splits a "\r\n".
        start, end = index.offsets(change.range, encoding)
        return text[:start] + change.text + text[end:]
    return change.text


class EditableLines:
    """A document as a list of lines, for ``didChange``: an edit rewrites the lines it
    touches (and moves the list's pointers), where rebuilding the text and its line
    index costs time in proportion to the whole file. A burst of hundreds of changes
    to a 10,000-line file is applied in milliseconds; the text is joined when read."""

    def __init__(self, text: str) -> None:
        self._lines = client_lines(text)
        self._text: str | None = text

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = "".join(self._lines)
        return self._text

    def _place(self, position: types.Position, encoding: Encoding) -> tuple[int, int]:
        """(line, code-point column) of a client position, clamped into the text."""
        if position.line < 0:
            return 0, 0
        lines = self._lines
        if position.line >= len(lines):
            last = lines[-1]
            return len(lines) - 1, len(last) - line_break_length(last)
        line = lines[position.line]
        content = line[:len(line) - line_break_length(line)]
        return position.line, column_from_units(content, position.character, encoding)

    def apply(self, change: types.TextDocumentContentChangeEvent, encoding: Encoding) -> None:
        if not isinstance(change, types.TextDocumentContentChangePartial):
            self.__init__(change.text)  # type: ignore[misc]
            return
        start, end = sorted([self._place(change.range.start, encoding),
                             self._place(change.range.end, encoding)])
        lines = self._lines
        first, last = start[0], end[0]
        joined = lines[first][:start[1]] + change.text + lines[last][end[1]:]
        if first > 0 and joined.startswith("\n") and lines[first - 1].endswith("\r"):
            first -= 1  # "\r" + "\n": the two lines become one line break
            joined = lines[first] + joined
        replacement = client_lines(joined)
        if replacement[-1] == "" and last + 1 < len(lines):
            replacement.pop()  # the line after the edit goes on from its break
        lines[first:last + 1] = replacement
        self._text = None
