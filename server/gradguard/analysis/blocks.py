"""Splitting a document into top-level blocks (imports, classes, functions, statements).

A block starts at a line that begins in column 0 with code, outside a triple-quoted
string; lines that continue a statement (``else:``, ``except``, a closing bracket, the
line after a backslash) and the decorators before a definition stay with their block.
The split is a pure function of the text, fast enough to redo on every keystroke of a
large file, and a half-typed line breaks only its own block.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from gradguard.text import LINE_BREAK, common_prefix, common_suffix, count_breaks, lines_with_ends

_TRIPLE = re.compile(r"'''|\"\"\"")
_CONTINUATION = re.compile(r"(else|elif|except|finally|case)\b|[)\]}]")
_DEFINITION = re.compile(r"(?:[ \t]*@.*\n|[ \t]*#.*\n|\s*\n)*(?:async\s+)?(?:class|def)\s+(\w+)")


def defined_name(block: str) -> str | None:
    """The name of the class or function a block defines, if it is a definition."""
    match = _DEFINITION.match(block)
    return match.group(1) if match else None


@dataclass(frozen=True)
class BlockText:
    start_line: int  # 1-based
    text: str

    @property
    def line_count(self) -> int:
        breaks = count_breaks(self.text)
        return breaks + (0 if self.text.endswith(("\n", "\r")) else 1)


def _string_lines(source: str) -> set[int]:
    """0-based indexes of lines that start inside a triple-quoted string."""
    inside: set[int] = set()
    opener: str | None = None
    open_line = 0
    starts = [m.end() for m in LINE_BREAK.finditer(source)]  # where lines 1, 2, ... start
    for match in _TRIPLE.finditer(source):
        quote = match.group()
        if opener is None:
            line = bisect.bisect_right(starts, match.start())
            # A triple quote after a comment mark opens nothing.
            line_start = starts[line - 1] if line else 0
            if "#" in source[line_start:match.start()]:
                continue
            opener, open_line = quote, line
        elif quote == opener:
            close_line = bisect.bisect_right(starts, match.start())
            inside.update(range(open_line + 1, close_line + 1))
            opener = None
    if opener is not None:
        inside.update(range(open_line + 1, len(starts) + 1))
    return inside


def _starts_block(line: str) -> bool:
    if not line or line[0] in " \t\r\n#\f":
        return False
    return _CONTINUATION.match(line) is None


def split_blocks(source: str) -> list[BlockText]:
    lines = lines_with_ends(source)
    if not lines:
        return []
    in_string = _string_lines(source) if ('"""' in source or "'''" in source) else set()
    starts = [0]
    # Whether the current block holds only decorators so far: then the next line that
    # starts a statement (the definition, or another decorator) belongs to it. Lines that
    # continue a decorator spread over several lines (indented, or a closing bracket)
    # start nothing, so they cannot end the run.
    decorating = lines[0].startswith("@")
    for index in range(1, len(lines)):
        if index in in_string or not _starts_block(lines[index]):
            continue
        if lines[index - 1].rstrip("\r\n").endswith("\\"):
            continue  # the line before goes on here (a backslash continuation)
        if not decorating:
            starts.append(index)
        # Joined or not, the block is still decorators only if this line is one.
        decorating = lines[index].startswith("@")
    blocks = []
    for position, start in enumerate(starts):
        end = starts[position + 1] if position + 1 < len(starts) else len(lines)
        blocks.append(BlockText(start + 1, "".join(lines[start:end])))
    return blocks


def resplit_blocks(old: str, blocks: list[BlockText], new: str) -> list[BlockText]:
    """``split_blocks(new)``, given ``blocks == split_blocks(old)``: only the blocks around
    the changed span are split again.

    Where a block starts, the split of what follows depends only on the text from there
    on (no string is open, and a decorator run starts afresh), so the split is redone
    from a block before the change up to the first block start after it that is a block
    start in the new text too; the blocks before and after are the old ones, moved.
    """
    if not blocks:
        return split_blocks(new)
    prefix = _block_prefix(blocks, new)
    suffix = _block_suffix(blocks, old, new, min(len(old), len(new)) - prefix)
    offsets = [0]
    for block in blocks:
        offsets.append(offsets[-1] + len(block.text))
    # From the block before the one holding the character before the change: a line end
    # typed after "\r", or an indent typed at a block's first line, changes the block
    # before too.
    holding = bisect.bisect_right(offsets, max(prefix - 1, 0)) - 1
    first = max(holding - 1, 0)
    start = offsets[first]
    changed_end = len(old) - suffix  # in the old text
    shift = len(new) - len(old)
    # The first old block that starts after the change, and the one after it: the split
    # is redone up to the end of the latter, so whether the former still starts a block
    # is decided by the split itself.
    after = bisect.bisect_left(offsets, changed_end, lo=first + 1)
    line = blocks[first].start_line
    if after + 1 < len(offsets):
        window = new[start:offsets[after + 1] + shift]
        again = split_blocks(window)
        target = offsets[after] + shift - start
        position = 0
        for index, piece in enumerate(again):
            if position == target:
                moved = line + _line_total(again[:index]) - blocks[after].start_line
                return (blocks[:first] + _moved(again[:index], line - 1) +
                        [BlockText(b.start_line + moved, b.text) if moved else b
                         for b in blocks[after:]])
            position += len(piece.text)
    return blocks[:first] + _moved(split_blocks(new[start:]), line - 1)


def _block_prefix(blocks: list[BlockText], new: str) -> int:
    """``common_prefix(old, new)`` where ``old`` is the blocks' text: whole blocks are
    compared in place first, so only the block holding the change is searched."""
    at = 0
    for block in blocks:
        if not new.startswith(block.text, at):
            return at + common_prefix(block.text, new[at:at + len(block.text)])
        at += len(block.text)
    return at


def _block_suffix(blocks: list[BlockText], old: str, new: str, limit: int) -> int:
    """``common_suffix(old, new, limit)``, block by block from the end likewise."""
    matched = 0
    end = len(new)
    for block in reversed(blocks):
        size = len(block.text)
        if matched + size > limit or not new.endswith(block.text, 0, end):
            tail = new[max(end - size, 0):end]
            return matched + common_suffix(block.text, tail,
                                           min(size, len(tail), limit - matched))
        matched += size
        end -= size
    return matched


def _line_total(pieces: list[BlockText]) -> int:
    return sum(count_breaks(piece.text) for piece in pieces)


def _moved(pieces: list[BlockText], lines: int) -> list[BlockText]:
    return [BlockText(piece.start_line + lines, piece.text) for piece in pieces]
