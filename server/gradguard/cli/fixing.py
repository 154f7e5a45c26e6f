"""``gradguard check --fix`` / ``--diff``: rewrite files safely, or show what would change."""

from __future__ import annotations

import difflib
import os
import sys
import tempfile
from pathlib import Path

from gradguard.analysis import Hazard, Selection, SourceError
from gradguard.analysis.blocks import split_lines
from gradguard.cli.files import read
from gradguard.fixes.apply import fix_text


def write_atomically(path: str, text: str) -> None:
    """Write through a temporary file and a rename: an interrupted run leaves no half file."""
    target = Path(path)
    mode = target.stat().st_mode
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
            stream.write(text)
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        os.unlink(temporary)
        raise


def fix_file(path: str, selection: Selection, diff: bool) -> tuple[int, list[Hazard]]:
    """Fix one file (or print its diff); returns (hazards fixed, hazards left)."""
    source = read(path)
    if source.text is None:
        print(f"gradguard: {path}: {source.error}", file=sys.stderr)
        return 0, []
    try:
        result = fix_text(source.text, selection)
    except SourceError as error:
        print(f"gradguard: {path}: {error}", file=sys.stderr)
        return 0, []
    if result.error is not None:
        print(f"gradguard: {path}: {result.error}", file=sys.stderr)
    if result.text != source.text:
        if diff:
            sys.stdout.writelines(difflib.unified_diff(
                split_lines(source.text), split_lines(result.text),
                fromfile=f"a/{path}", tofile=f"b/{path}"))
        else:
            write_atomically(path, result.text)
    return result.fixed, result.remaining
