"""Positions: code-point columns (the analysis) <-> the client's negotiated code units.

The analysis counts lines from 1 and columns from 1 in Unicode code points. An LSP client
counts both from 0, and columns in the encoding negotiated at ``initialize``: UTF-16 code
units by default (an emoji is 2, a CJK character 1), UTF-8 bytes (a CJK character is 3,
an emoji 4) or UTF-32 (code points). A tab is one unit in all three.

Lines end at ``\\n``, ``\\r\\n`` or ``\\r`` and nowhere else. ``str.splitlines`` also
breaks at form feeds, ``\\x1c``-``\\x1e``, ``\\x85``, U+2028 and U+2029, which no editor
and not Python's tokenizer count as line ends, so it is never used on document text here.
"""

from __future__ import annotations

import bisect
import itertools
import operator
import re
from typing import Literal

from lsprotocol import types

from gradguard.analysis.hazard import Span

Encoding = Literal["utf-8", "utf-16", "utf-32"]

LINE_BREAK = re.compile(r"\r\n|\r|\n")


def encoding_of(kind: str | None) -> Encoding:
    """The encoding pygls negotiated (``ls.workspace.position_encoding``); UTF-16 if unknown."""
    if kind in ("utf-8", "utf-32"):
        return kind  # type: ignore[return-value]
    return "utf-16"


def split_lines(text: str) -> list[str]:
    """The lines of ``text`` without their line breaks, as an LSP client numbers them.

    ``"a\\nb\\n"`` has three lines (the last one empty): position (2, 0) is valid.
    """
    return LINE_BREAK.split(text)


def units(text: str, encoding: Encoding) -> int:
    """How many code units of ``encoding`` ``text`` takes."""
    if encoding == "utf-32" or text.isascii():
        return len(text)
    if encoding == "utf-16":
        return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)
    # A lone surrogate (JSON allows "\\ud83d") takes 3 bytes, as WTF-8 would encode it.
    return len(text.encode("utf-8", "surrogatepass"))


def _char_units(char: str, encoding: Encoding) -> int:
    point = ord(char)
    if encoding == "utf-16":
        return 2 if point > 0xFFFF else 1
    if encoding == "utf-8":
        return 1 if point < 0x80 else 2 if point < 0x800 else 3 if point < 0x10000 else 4
    return 1


def column_from_units(line: str, count: int, encoding: Encoding) -> int:
    """The code-point column of the position ``count`` units into ``line``.

    A count past the end of the line means its end (as the LSP says); a count that falls
    inside a character (half of a surrogate pair) rounds down to that character's start.
    """
    if count <= 0:
        return 0
    if encoding == "utf-32" or line.isascii():
        return min(count, len(line))
    used = 0
    for column, char in enumerate(line):
        used += _char_units(char, encoding)
        if used > count:
            return column
        if used == count:
            return column + 1
    return len(line)


class LineIndex:
    """Line starts of one text, to turn offsets, spans and client positions into each other.

    Building one takes about a millisecond for 7,000 lines; converting a position looks
    at one line only.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        # Rebuilt on every keystroke, so the common case ("\n" only) is done with C-level
        # iterators: ten times faster than a regex over a 300 kB file.
        self._lf_only = "\r" not in text
        if self._lf_only:
            lengths = map(len, text.split("\n")[:-1])
            self.starts: list[int] = [0, *map(operator.add, itertools.accumulate(lengths),
                                              itertools.count(1))]
            self._ends: list[int] = []
        else:
            self.starts = [0]
            self._ends = []
            for match in LINE_BREAK.finditer(text):
                self._ends.append(match.start())
                self.starts.append(match.end())
            self._ends.append(len(text))

    def end(self, number: int) -> int:
        """Where the text of 0-based line ``number`` ends (its line break starts)."""
        if not self._lf_only:
            return self._ends[number]
        return self.starts[number + 1] - 1 if number + 1 < len(self.starts) else len(self.text)

    @property
    def line_count(self) -> int:
        return len(self.starts)

    def line(self, number: int) -> str:
        """The text of 0-based line ``number``, without its line break."""
        return self.text[self.starts[number]: self.end(number)]

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
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self.starts, offset) - 1
        # An offset between "\r" and "\n" belongs to the end of the line.
        column = min(offset, self.end(line)) - self.starts[line]
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


def _line_end_length(line: str) -> int:
    if line.endswith("\r\n"):
        return 2
    return 1 if line.endswith(("\r", "\n")) else 0


def lines_with_ends(text: str) -> list[str]:
    """The lines of ``text`` as an LSP client numbers them, each with its line break:
    they join back to ``text``, and a text ending in a break has a last, empty line."""
    if "\r" not in text:
        parts = text.split("\n")
        return [part + "\n" for part in parts[:-1]] + [parts[-1]]
    lines, start = [], 0
    for match in LINE_BREAK.finditer(text):
        lines.append(text[start:match.end()])
        start = match.end()
    lines.append(text[start:])
    return lines


class EditableLines:
    """A document as a list of lines, for ``didChange``: an edit rewrites the lines it
    touches (and moves the list's pointers), where rebuilding the text and its line
    index costs time in proportion to the whole file. A burst of hundreds of changes
    to a 10,000-line file is applied in milliseconds; the text is joined when read."""

    def __init__(self, text: str) -> None:
        self._lines = lines_with_ends(text)
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
            return len(lines) - 1, len(last) - _line_end_length(last)
        line = lines[position.line]
        content = line[:len(line) - _line_end_length(line)]
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
        replacement = lines_with_ends(joined)
        if replacement[-1] == "" and last + 1 < len(lines):
            replacement.pop()  # the line after the edit goes on from its break
        lines[first:last + 1] = replacement
        self._text = None
