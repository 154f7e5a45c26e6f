"""``gradguard check --fix`` / ``--diff``: rewrite files safely, or show what would change."""

from __future__ import annotations

import difflib
import os
import sys
import tempfile
from pathlib import Path

from gradguard.analysis import Hazard, Selection, SourceError, analyze_source
from gradguard.analysis.analyze import analysis_in_project
from gradguard.analysis.report import not_analysed
from gradguard.analysis.syntax import parse
from gradguard.cli.files import read
from gradguard.cli.notebook import CellMap, NotebookError, parse_notebook
from gradguard.fixes.apply import FixResult, fix_text
from gradguard.text import BOM, lines_with_ends


def write_atomically(path: str, text: str) -> None:
    """Write through a temporary file and a rename, keeping the file's mode: an
    interrupted run leaves no half-written file."""
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


def fix_file(path: str, selection: Selection, diff: bool,
             roots: tuple[str, ...] = ()) -> tuple[int, list[Hazard], CellMap | None]:
    """Fix one file (or print its diff), analysed in the project of ``roots`` (its
    imports followed, as ``check`` does); returns (hazards fixed, hazards left, the
    cells of a notebook, which the lines of the hazards left refer to)."""
    source = read(path)
    if source.text is None:
        return 0, [not_analysed(source.error or "cannot read", source.line, source.column)], None
    try:
        if path.endswith(".ipynb"):
            result, new_text, cells = _fix_notebook(source.text, selection)
        else:
            parse(source.text)  # a file that does not parse is not analysed: say so
            analysis = analysis_in_project(os.path.abspath(path), list(roots),
                                           selection=selection)
            result = fix_text(source.text, selection, analysis)
            new_text, cells = result.text, None
    except SourceError as error:
        return 0, [not_analysed(str(error), error.line, error.column)], None
    except NotebookError as error:
        return 0, [not_analysed(str(error))], None
    if result.error is not None:
        print(f"gradguard: {path}: {result.error}", file=sys.stderr)
    if new_text != source.text:
        if diff:
            sys.stdout.writelines(difflib.unified_diff(
                lines_with_ends(source.text), lines_with_ends(new_text),
                fromfile=f"a/{path}", tofile=f"b/{path}"))
        else:
            write_atomically(path, (BOM if source.bom else "") + new_text)
    return result.fixed, result.remaining, cells


def _fix_notebook(text: str, selection: Selection) -> tuple[FixResult, str, CellMap]:
    """Fix a notebook's program, put the cells back; keep the file as it was if unchanged.

    The hazards left are those of the fixed notebook's own program (the one ``check``
    reads), so that their lines map to cells.
    """
    notebook = parse_notebook(text)
    result = fix_text(notebook.program_to_fix(), selection)
    if result.fixed == 0:
        remaining = analyze_source(notebook.program, selection)
        return FixResult(text, 0, remaining, result.error), text, notebook.cells
    fixed = notebook.with_fixed_program(result.text)
    remaining = analyze_source(fixed.program, selection)
    return FixResult(result.text, result.fixed, remaining, result.error), fixed.dumps(), fixed.cells
