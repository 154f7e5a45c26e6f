"""Reading the files a run is asked to check, with clear errors instead of crashes."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SKIPPED_DIRS = {".git", ".hg", ".venv", "venv", "__pycache__", "node_modules", ".tox",
                ".mypy_cache", ".ruff_cache", "build", "dist"}


@dataclass(frozen=True)
class SourceFile:
    path: str
    text: str | None
    error: str | None = None


def walk(paths: list[str]) -> Iterator[str]:
    """Every ``*.py`` file under the given paths, in a stable order."""
    for given in paths:
        path = Path(given)
        if path.is_dir():
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
                for name in sorted(files):
                    if name.endswith(".py"):
                        yield os.path.join(root, name)
        else:
            yield given


def read(path: str) -> SourceFile:
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        return SourceFile(path, None, f"cannot read: {error.strerror or error}")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        return SourceFile(path, None,
                          f"not UTF-8 (byte {error.start}: {data[error.start]:#04x}); "
                          "GradGuard reads Python source as UTF-8")
    return SourceFile(path, text)
