"""Parsing with Python's own parser, and where a parsed node lies in its document.

The analysis reads ``ast`` trees: CPython's parser is about ten times faster than a
concrete syntax tree's, and the analysis needs no formatting. Fixes, which do, parse
the few statements they rewrite with libcst (``gradguard.fixes.edits``).

A :class:`Piece` is a stretch of a document parsed together (a whole file, or in an
editor one function, method or block of statements). Nodes keep the line numbers of
the parse they came from; the piece says where that parse's lines are in the document
now, so an unchanged function keeps its tree (and what was computed from it) while the
lines above it change.
"""

from __future__ import annotations

import ast
import sys
import threading
import weakref
from dataclasses import dataclass, field

from gradguard.analysis.hazard import Span
from gradguard.text import source_lines


class SourceError(Exception):
    """The text cannot be analysed (it does not parse)."""

    def __init__(self, message: str, line: int = 0, column: int = 0) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


# How deep an expression the analysis follows: its evaluator recurses once a level (real
# code stays well below 30), so a deeper part is cut off and taken as an unknown value.
MAX_NESTING = 64
# Python's own recursion limit (1,000) stops ``ast.parse`` at about 3,000 levels, which a
# long sum reaches (``a + a + ...``, one level a term). Such a text is parsed again in a
# thread of its own with a deep stack and a higher limit: the parser's C code recurses
# once a level, about a few hundred bytes of stack each.
_DEEP_LIMIT = 40_000
_DEEP_STACK = 512 * 1024 * 1024


def parse(text: str) -> ast.Module:
    """The text's tree, with every expression deeper than :data:`MAX_NESTING` cut off
    (:class:`Skipped`); :class:`SourceError` when it does not parse."""
    try:
        module = ast.parse(text)
    except SyntaxError as error:
        failure = SourceError(f"syntax error: {error.msg}", error.lineno or 0,
                              error.offset or 1)
    except RecursionError:
        module = _parse_deep(text)
        cut_deep_expressions(module, text)
        return module
    except MemoryError:
        failure = SourceError("too large to parse")
    except ValueError as error:  # null bytes
        failure = SourceError(f"cannot parse: {error}")
    else:
        cut_deep_expressions(module, text)
        return module
    # Raised outside the handler: the error keeps no parser frames (an editor keeps it
    # for as long as the block stays broken).
    raise failure


def _parse_deep(text: str) -> ast.Module:
    outcome: list[ast.Module | BaseException] = []

    def run() -> None:
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, _DEEP_LIMIT))
        try:
            outcome.append(ast.parse(text))
        except BaseException as error:  # noqa: BLE001 - handed to the caller's thread
            outcome.append(error)
        finally:
            sys.setrecursionlimit(limit)

    size = threading.stack_size(_DEEP_STACK)
    try:
        worker = threading.Thread(target=run, name="gradguard-deep-parse")
        worker.start()
    finally:
        threading.stack_size(size)
    worker.join()
    result = outcome[0] if outcome else RecursionError()
    if isinstance(result, ast.Module):
        return result
    if isinstance(result, SyntaxError):
        raise SourceError(f"syntax error: {result.msg}", result.lineno or 0,
                          result.offset or 1)
    if isinstance(result, ValueError):
        raise SourceError(f"cannot parse: {result}")
    raise SourceError("too deeply nested to parse")


class Skipped(ast.expr):
    """Where a tree was cut: an expression nested deeper than :data:`MAX_NESTING`
    levels, which the analysis takes as an unknown value (and says so)."""

    _fields = ()
    # How many levels deep the expression it replaces went, counted from the statement.
    depth: int = 0


# Nodes below an expression that add no level of their own.
_LEAVES = (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)


def cut_deep_expressions(module: ast.Module, text: str | None = None) -> None:
    """Replace each part of an expression deeper than :data:`MAX_NESTING` by a
    :class:`Skipped` node, so that nothing that walks the tree recursively goes deeper.

    Only expressions whose text is longer than the bound are walked: a level takes at
    least one character, so a shorter one cannot be too deep. (With the ``text`` parsed,
    the length of an expression over several lines is known too; without, such an
    expression is walked.)"""
    starts = _line_starts(text) if text is not None else None
    statements: list[ast.AST] = list(module.body)
    while statements:
        statement = statements.pop()
        if not hasattr(statement, "body") and not _longer_than(statement, MAX_NESTING,
                                                               starts):
            continue  # a short simple statement, most of them
        for child in ast.iter_child_nodes(statement):
            if isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case)):
                statements.append(child)
            elif not isinstance(child, _LEAVES) and _longer_than(child, MAX_NESTING, starts):
                _cut(child, starts)


def _line_starts(text: str) -> list[int]:
    """Where each line starts, in the UTF-8 bytes ``ast`` counts columns in (an upper
    bound on characters: what :func:`_longer_than` needs)."""
    starts = [0]
    ascii_only = text.isascii()
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + (len(line) if ascii_only else len(line.encode("utf-8"))))
    return starts


def _longer_than(node: ast.AST, size: int, starts: list[int] | None = None) -> bool:
    line = getattr(node, "lineno", None)
    if line is None:
        return True  # ``arguments``, ``withitem``, ...: no position of their own
    end_line = getattr(node, "end_lineno", None) or line
    begin = getattr(node, "col_offset", 0)
    end = getattr(node, "end_col_offset", 0) or 0
    if end_line != line:
        if starts is None or end_line >= len(starts):
            return True
        begin += starts[line - 1]
        end += starts[end_line - 1]
    return end - begin > size


def _cut(root: ast.AST, starts: list[int] | None = None) -> None:
    stack: list[tuple[ast.AST, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        for name, value in ast.iter_fields(node):
            items = value if isinstance(value, list) else [value]
            for index, item in enumerate(items):
                if not isinstance(item, ast.AST) or isinstance(item, _LEAVES):
                    continue
                if depth >= MAX_NESTING and isinstance(item, ast.expr) and \
                        _has_children(item):
                    skipped = Skipped()
                    skipped.depth = depth + _height(item)
                    ast.copy_location(skipped, item)
                    if isinstance(value, list):
                        value[index] = skipped
                    else:
                        setattr(node, name, skipped)
                elif _longer_than(item, MAX_NESTING - depth, starts):
                    stack.append((item, depth + 1))  # else too short to reach the bound


def _has_children(node: ast.AST) -> bool:
    return any(not isinstance(child, _LEAVES) for child in ast.iter_child_nodes(node))


def _height(node: ast.AST) -> int:
    """How many levels ``node`` spans (walked without recursion)."""
    height, level = 0, [node]
    while level:
        height += 1
        level = [child for item in level for child in ast.iter_child_nodes(item)
                 if not isinstance(child, _LEAVES)]
    return height


def contains_skipped(node: ast.AST) -> bool:
    """Whether part of ``node`` was cut off (a fix must not rewrite text it cannot see)."""
    return any(isinstance(item, Skipped) for item in ast.walk(node))


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
    # Earlier parses of the same code whose nodes are still referenced (an edit that left
    # a function's summary the same keeps its callers' findings, which point into the
    # earlier parse): they are placed wherever this piece is, for as long as they live.
    _followers: list[weakref.ref[Piece]] = field(default_factory=list, repr=False)

    def place(self, start_line: int, clamp: int | None = None) -> None:
        """Put the piece (and the earlier parses following it) at ``start_line``."""
        # Followers may lead others, and an undo can bring an earlier parse back to
        # lead its own leader: each piece is placed once.
        todo, seen = [self], {id(self)}
        while todo:
            piece = todo.pop()
            piece.start_line, piece.clamp = start_line, clamp
            alive = []
            for ref in piece._followers:
                follower = ref()
                if follower is not None:
                    alive.append(ref)
                    if id(follower) not in seen:
                        seen.add(id(follower))
                        todo.append(follower)
            piece._followers = alive

    def lead(self, earlier: Piece) -> None:
        """``earlier`` (a parse of the same code whose nodes lie where this one's do)
        moves with this piece from now on."""
        if earlier is not self:
            self._followers.append(weakref.ref(earlier))
        self.place(self.start_line, self.clamp)

    def line(self, number: int) -> str:
        """Line ``number`` of the parse (1-based), without its line end."""
        if self._lines is None:
            self._lines = source_lines(self.text)
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
