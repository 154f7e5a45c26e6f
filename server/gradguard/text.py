"""Source text: lines, offsets and code units, with the line breaks the LSP counts.

Lines end at ``\\n``, ``\\r\\n`` or ``\\r`` and nowhere else, as in Python's tokenizer,
in every editor and in the LSP. ``str.splitlines`` also breaks at form feeds,
``\\x0b``, ``\\x1c``-``\\x1e``, ``\\x85``, U+2028 and U+2029: one such character in a
comment shifts every later line, so it is never used on source text. Everything in
GradGuard that counts lines of a source (the analysis, the fixes, the server, the CLI)
counts them here.

Columns here are code points. The LSP counts them in the code units negotiated at
``initialize`` (UTF-16 by default), which ``units`` and ``column_from_units`` convert.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import operator
import re
from typing import Literal

Encoding = Literal["utf-8", "utf-16", "utf-32"]

LINE_BREAK = re.compile(r"\r\n|\r|\n")
_LINE_WITH_END = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
BOM = "\ufeff"


def split_lines(text: str) -> list[str]:
    """The lines of ``text`` without their line breaks, as an LSP client numbers them.

    ``"a\\nb\\n"`` has three lines (the last one empty): position (2, 0) is valid.
    """
    return LINE_BREAK.split(text)


def lines_with_ends(text: str) -> list[str]:
    """The lines of ``text`` with their line breaks; no empty line after a final break
    (``str.splitlines(keepends=True)`` for the three line breaks there are)."""
    return _LINE_WITH_END.findall(text)


def client_lines(text: str) -> list[str]:
    """The lines of ``text`` as an LSP client numbers them, each with its line break:
    they join back to ``text``, and a text ending in a break has a last, empty line
    (``split_lines`` with the breaks kept)."""
    if "\r" not in text:  # the common case, at C speed
        parts = text.split("\n")
        return [part + "\n" for part in parts[:-1]] + [parts[-1]]
    lines, start = [], 0
    for match in LINE_BREAK.finditer(text):
        lines.append(text[start:match.end()])
        start = match.end()
    lines.append(text[start:])
    return lines


def line_break_length(line: str) -> int:
    """How long the line break ending ``line`` is (0 for none)."""
    if line.endswith("\r\n"):
        return 2
    return 1 if line.endswith(("\r", "\n")) else 0


def source_lines(text: str) -> list[str]:
    """The lines of ``text`` without their breaks, numbered as the parser numbers them
    (no empty line after a final break)."""
    return [line.rstrip("\r\n") for line in lines_with_ends(text)]


def count_breaks(text: str) -> int:
    return len(LINE_BREAK.findall(text))


def newline_of(text: str) -> str:
    """The line break ``text`` uses first (``"\\n"`` if it has none): what new lines get."""
    match = LINE_BREAK.search(text)
    return match.group() if match else "\n"


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


class Lines:
    """Where each line of one text starts and ends, to turn (line, column) into offsets
    and back. Lines and columns are 0-based here, columns in code points.

    Building one takes a few milliseconds for 10,000 lines, so it is built on first use:
    a server makes one for every analysed version of a document, on the event loop, and
    needs it only on the analysis thread, and only if there are findings to place.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self._lf_only = "\r" not in text

    @functools.cached_property
    def starts(self) -> list[int]:
        # The common case ("\n" only) is done with C-level iterators: ten times faster
        # than a regex over a 300 kB file.
        if self._lf_only:
            lengths = map(len, self.text.split("\n")[:-1])
            return [0, *map(operator.add, itertools.accumulate(lengths), itertools.count(1))]
        return [0, *(match.end() for match in LINE_BREAK.finditer(self.text))]

    @functools.cached_property
    def _ends(self) -> list[int]:
        return [*(match.start() for match in LINE_BREAK.finditer(self.text)), len(self.text)]

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

    def offset_of(self, line: int, column: int) -> int:
        """The offset of 0-based ``line`` and code-point ``column``, clamped into the text
        (a column past the line's end is its end: never inside a ``\\r\\n``)."""
        if line < 0:
            return 0
        if line >= self.line_count:
            return len(self.text)
        return self.starts[line] + max(0, min(column, self.end(line) - self.starts[line]))

    def line_column(self, offset: int) -> tuple[int, int]:
        """The 0-based line and code-point column of an offset (one between ``\\r`` and
        ``\\n`` is the end of its line)."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self.starts, offset) - 1
        return line, min(offset, self.end(line)) - self.starts[line]


def common_prefix(a: str, b: str) -> int:
    low, high = 0, min(len(a), len(b))
    while low < high:  # slices compare in C: a few passes over the text, not a loop per char
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def common_suffix(a: str, b: str, limit: int) -> int:
    low, high = 0, limit
    while low < high:
        middle = (low + high + 1) // 2
        if a[len(a) - middle:] == b[len(b) - middle:]:
            low = middle
        else:
            high = middle - 1
    return low


def minimal_change(old: str, new: str) -> tuple[int, int, str]:
    """The one replacement that turns ``old`` into ``new``: ``old[start:end]`` becomes
    the returned text. It never starts or ends inside a ``\\r\\n``, which no position
    can name."""
    start = common_prefix(old, new)
    end_trim = common_suffix(old, new, min(len(old), len(new)) - start)
    end = len(old) - end_trim
    if 0 < start and old[start - 1] == "\r" and old[start:start + 1] == "\n":
        start -= 1
    if end < len(old) and old[end] == "\n" and end > 0 and old[end - 1] == "\r":
        end += 1
    return start, end, new[start: len(new) - (len(old) - end)]
