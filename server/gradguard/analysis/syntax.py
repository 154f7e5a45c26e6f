"""Parsing with Python's own parser, and where a parsed node lies in its document.

The analysis reads ``ast`` trees: CPython's parser is about ten times faster than a
concrete syntax tree's, and the analysis needs no formatting. Fixes, which do, parse
the few statements they rewrite with libcst (``gradguard.fixes``).

A :class:`Piece` is a stretch of a document parsed together (a whole file, or in an
editor one function, method or block of statements). Nodes keep the line numbers of
the parse they came from; the piece says where that parse's lines are in the document
now, so an unchanged function keeps its tree (and what was computed from it) while the
lines above it change.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from gradguard.analysis.blocks import split_lines
from gradguard.analysis.hazard import Span


class SourceError(Exception):
    """The text cannot be analysed (it does not parse)."""

    def __init__(self, message: str, line: int = 0, column: int = 0) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


def parse(text: str) -> ast.Module:
    try:
        return ast.parse(text)
    except SyntaxError as error:
        failure = SourceError(f"syntax error: {error.msg}", error.lineno or 0,
                              error.offset or 1)
    except (RecursionError, MemoryError):
        failure = SourceError("too deeply nested to parse")
    except ValueError as error:  # null bytes
        failure = SourceError(f"cannot parse: {error}")
    # Raised outside the handler: the error keeps no parser frames (an editor keeps it
    # for as long as the block stays broken).
    raise failure


def char_column(line: str, offset: int) -> int:
    """The code-point column of UTF-8 byte ``offset`` in ``line`` (what ast gives)."""
    if line.isascii():
        return offset
    return len(line.encode("utf-8")[:offset].decode("utf-8", errors="replace"))


@dataclass(eq=False)
class Piece:
    """Parsed text: ``origin`` is the parse's line number of the document line
    ``start_line``; nodes parsed from ``text`` are placed through it."""

    path: str
    text: str
    origin: int = 1
    start_line: int = 1
    # The last document line the piece may point into: a block that stopped parsing
    # keeps its last good tree, whose lines may now run past the block's end.
    clamp: int | None = None
    _lines: list[str] | None = field(default=None, repr=False)

    def line(self, number: int) -> str:
        """Line ``number`` of the parse (1-based), without its line end."""
        if self._lines is None:
            self._lines = [line.rstrip("\r\n") for line in split_lines(self.text)]
        return self._lines[number - 1] if 0 < number <= len(self._lines) else ""

    def has_line_after(self, number: int) -> bool:
        """Whether the parse has a line after line ``number``."""
        self.line(1)
        assert self._lines is not None
        return number < len(self._lines)

    def document_line(self, number: int) -> int:
        return number - self.origin + self.start_line

    def span(self, node: ast.AST) -> Span:
        line: int = getattr(node, "lineno", 1)
        end_line: int = getattr(node, "end_lineno", None) or line
        column = char_column(self.line(line), getattr(node, "col_offset", 0))
        end_column = char_column(self.line(end_line), getattr(node, "end_col_offset", 0) or 0)
        first, last = self.document_line(line), self.document_line(end_line)
        if self.clamp is not None and last >= self.clamp:
            if first >= self.clamp:
                first, column = self.clamp, 0
            last, end_column = self.clamp, 0
        return Span(first, column + 1, last, end_column + 1)

    def segment(self, node: ast.AST) -> str:
        """The source text of ``node``, as written."""
        line: int = getattr(node, "lineno", 1)
        end_line: int = getattr(node, "end_lineno", None) or line
        start = getattr(node, "col_offset", 0)
        end = getattr(node, "end_col_offset", 0) or 0
        if line == end_line:
            return _bytes_slice(self.line(line), start, end)
        parts = [_bytes_slice(self.line(line), start, None)]
        parts += [self.line(n) for n in range(line + 1, end_line)]
        parts.append(_bytes_slice(self.line(end_line), 0, end))
        return "\n".join(parts)


def _bytes_slice(line: str, start: int, end: int | None) -> str:
    if line.isascii():
        return line[start:end]
    return line.encode("utf-8")[start:end].decode("utf-8", errors="replace")
