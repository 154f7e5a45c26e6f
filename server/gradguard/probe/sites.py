"""Where in the user's code something happened: frames filtered to the user's files.

A finding must point at the user's line, not at the torch function that ran the op, so
every event is located at the innermost frame whose file is the user's. Locating is
split in two because it runs on every saved tensor: ``Point`` is what the hot path
keeps (a code object, an instruction offset and a line; no frame, so no locals are
kept alive), and ``Site`` (columns from the instruction's source position) is computed
only for the few points that end up in a finding. Pure Python, no torch.
"""

from __future__ import annotations

import linecache
import os
import sysconfig
from collections.abc import Iterable
from dataclasses import dataclass
from types import CodeType, FrameType, TracebackType
from typing import NamedTuple


class Point(NamedTuple):
    """A position in running code: enough to find the source range later."""

    code: CodeType
    lasti: int
    line: int


@dataclass(frozen=True)
class Site:
    """A source range: 1-based lines, 1-based columns in code points (as ``check``)."""

    path: str
    line: int
    column: int
    end_line: int
    end_column: int


def library_dirs() -> list[str]:
    """Directories whose files are never the user's: the stdlib and installed packages."""
    paths = sysconfig.get_paths()
    dirs = {paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib") if key in paths}
    # The probe's own frames (child, tracker) sit between user code and torch.
    dirs.add(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return sorted(dirs)


class UserFiles:
    """Which source files are the user's: everything but the stdlib, site-packages, torch
    and gradguard, and always the target file's own directory (even if installed)."""

    def __init__(self, excluded: Iterable[str], included: Iterable[str] = ()) -> None:
        self._excluded = tuple(os.path.join(os.path.abspath(d), "") for d in excluded)
        self._included = tuple(os.path.join(os.path.abspath(d), "") for d in included)
        self._cache: dict[str, bool] = {}

    def __contains__(self, filename: str) -> bool:
        known = self._cache.get(filename)
        if known is None:
            known = self._cache[filename] = self._judge(filename)
        return known

    def _judge(self, filename: str) -> bool:
        if not filename or filename.startswith("<"):  # <string>, <frozen runpy>
            return False
        path = os.path.abspath(filename)
        if path.startswith(self._included):
            return True
        return not path.startswith(self._excluded)

    def innermost(self, frame: FrameType | None) -> FrameType | None:
        """The innermost frame (from ``frame`` outwards) that runs the user's code."""
        cache = self._cache
        while frame is not None:
            filename = frame.f_code.co_filename
            user = cache.get(filename)
            if user is None:
                user = cache[filename] = self._judge(filename)
            if user:
                return frame
            frame = frame.f_back
        return None

    def innermost_in_traceback(self, tb: TracebackType | None) -> Point | None:
        """The deepest user frame of a traceback: where an exception left the user's code."""
        found = None
        while tb is not None:
            if tb.tb_frame.f_code.co_filename in self:
                found = Point(tb.tb_frame.f_code, tb.tb_lasti, tb.tb_lineno)
            tb = tb.tb_next
        return found


def point(frame: FrameType) -> Point:
    return Point(frame.f_code, frame.f_lasti, frame.f_lineno)


_POSITIONS: dict[CodeType, list[tuple[int | None, int | None, int | None, int | None]]] = {}


def site(where: Point) -> Site:
    """The source range of the instruction at ``where`` (the call or subscript itself on
    Python 3.11+, whose code objects carry column positions; the whole line before)."""
    path = os.path.abspath(where.code.co_filename)
    positions = _POSITIONS.get(where.code)
    if positions is None and hasattr(where.code, "co_positions"):
        positions = _POSITIONS[where.code] = list(where.code.co_positions())
    if positions and 0 <= where.lasti // 2 < len(positions):
        line, end_line, column, end_column = positions[where.lasti // 2]
        if line == where.line and end_line is not None and column is not None \
                and end_column is not None:
            return Site(path, line, _code_points(path, line, column) + 1, end_line,
                        _code_points(path, end_line, end_column) + 1)
    text = linecache.getline(path, where.line).rstrip("\r\n")
    indent = len(text) - len(text.lstrip())
    return Site(path, where.line, indent + 1, where.line, len(text) + 1)


def _code_points(path: str, line: int, byte_offset: int) -> int:
    """CPython positions count UTF-8 bytes; the JSON schema counts code points."""
    text = linecache.getline(path, line)
    return len(text.encode("utf-8")[:byte_offset].decode("utf-8", errors="ignore"))


def source_text(at: Site) -> str:
    """The code a site covers (its first line only, for a multi-line statement)."""
    text = linecache.getline(at.path, at.line).rstrip("\r\n")
    end = at.end_column - 1 if at.end_line == at.line else len(text)
    return text[at.column - 1:end].strip() or text.strip()
