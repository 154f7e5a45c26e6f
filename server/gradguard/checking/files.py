"""Reading the files a run is asked to check, with clear errors instead of crashes."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class SourceFile:
    path: str
    text: str | None
    error: str | None = None
    # Where the error is, when it is at a place in the file (1-based; column in bytes).
    line: int = 0
    column: int = 0
    # Whether the file starts with a UTF-8 BOM (not part of ``text``): kept by ``--fix``.
    bom: bool = False


def read(path: str) -> SourceFile:
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        return SourceFile(path, None, f"cannot read: {error.strerror or error}")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line_start = data.rfind(b"\n", 0, error.start) + 1
        return SourceFile(path, None,
                          f"not UTF-8 (byte {error.start}: {data[error.start]:#04x}); "
                          "GradGuard reads Python source as UTF-8",
                          data.count(b"\n", 0, error.start) + 1, error.start - line_start + 1)
    return SourceFile(path, text, bom=data.startswith(b"\xef\xbb\xbf"))


def shown_path(path: str) -> str:
    """An absolute path as a run shows it: relative to where it runs, if below it."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative
