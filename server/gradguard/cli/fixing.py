"""``gradguard check --fix`` / ``--diff``: rewrite files safely, or show what would change."""

from __future__ import annotations

import difflib
import os
import sys
import tempfile
from pathlib import Path

from gradguard.analysis.analyze import analyze_source
from gradguard.analysis.findings import FileNotAnalysed
from gradguard.analysis.hazard import Hazard
from gradguard.analysis.syntax import SourceError, parse
from gradguard.checking.files import read, shown_path
from gradguard.checking.notebook import CellMap, NotebookError, parse_notebook
from gradguard.config import Selection
from gradguard.fixes import FixResult, fix_cells, fix_files
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


def fix_run(paths: list[str], selection: Selection, diff: bool,
            roots: tuple[str, ...] = ()) -> list[tuple[str, int, list[Hazard], CellMap | None]]:
    """Fix the files of a run (or print their diffs): exactly the fixable hazards
    ``check`` reports for the same files, with the same project analysis, so a hazard
    in an imported file found from the script that calls it is fixed there when that
    file is part of the run too, and reported as left when it is not. Returns, for
    each file given and each other file a hazard is left in: (path as shown, hazards
    fixed, hazards left, the cells of a notebook, which the lines of the hazards left
    refer to).

    A notebook is fixed alone, as its own program: its cells are no module that
    another file imports.
    """
    done: list[tuple[str, int, list[Hazard], CellMap | None]] = []
    sources: dict[str, str] = {}
    shown: dict[str, str] = {}
    for path in paths:
        if path.endswith(".ipynb"):
            done.append((path, *fix_notebook_file(path, selection, diff)))
            continue
        source = read(path)
        if source.text is None:
            unread = FileNotAnalysed(source.error or "cannot read", source.line, source.column)
            done.append((path, 0, [unread.hazard()], None))
            continue
        try:
            parse(source.text)  # a file that does not parse is not analysed: say so
        except SourceError as error:
            unparsed = FileNotAnalysed(str(error), error.line, error.column)
            done.append((path, 0, [unparsed.hazard()], None))
            continue
        absolute = os.path.abspath(path)
        sources[absolute] = (BOM if source.bom else "") + source.text
        shown[absolute] = path
    if sources:
        # Like ruff, a run writes only the files it was given: a hazard found from them
        # in another file (an imported module) is reported there, not fixed.
        results = fix_files(sources, roots, selection, read_source=_read_with_bom)
        # The files given first, in their order, then the others a hazard was found in.
        for absolute in [*sources, *sorted(results.keys() - sources.keys())]:
            result = results.get(absolute)
            if result is None:
                continue
            path = shown.get(absolute) or shown_path(absolute)
            if result.error is not None:
                print(f"gradguard: {path}: {result.error}", file=sys.stderr)
            original = sources.get(absolute) or _read_with_bom(absolute)
            if original is not None and result.text != original:
                _write_or_diff(path, original, result.text, diff)
            if absolute in sources or result.remaining:
                done.append((path, result.fixed, result.remaining, None))
    return done


def _read_with_bom(path: str) -> str | None:
    """A file's text as the fix engine takes it: a BOM is the engine's to keep."""
    source = read(path)
    return None if source.text is None else (BOM if source.bom else "") + source.text


def _write_or_diff(path: str, old: str, new: str, diff: bool) -> None:
    if diff:
        sys.stdout.writelines(difflib.unified_diff(
            lines_with_ends(old.removeprefix(BOM)), lines_with_ends(new.removeprefix(BOM)),
            fromfile=f"a/{path}", tofile=f"b/{path}"))
    else:
        write_atomically(path, new)


def fix_notebook_file(path: str, selection: Selection,
                      diff: bool) -> tuple[int, list[Hazard], CellMap | None]:
    """Fix one notebook (or print its diff)."""
    source = read(path)
    if source.text is None:
        unread = FileNotAnalysed(source.error or "cannot read", source.line, source.column)
        return 0, [unread.hazard()], None
    try:
        result, new_text, cells = _fix_notebook(source.text, selection)
    except SourceError as error:
        return 0, [FileNotAnalysed(str(error), error.line, error.column).hazard()], None
    except NotebookError as error:
        return 0, [FileNotAnalysed(str(error)).hazard()], None
    if result.error is not None:
        print(f"gradguard: {path}: {result.error}", file=sys.stderr)
    if new_text != source.text:
        bom = BOM if source.bom else ""
        _write_or_diff(path, bom + source.text, bom + new_text, diff)
    return result.fixed, result.remaining, cells


def _fix_notebook(text: str, selection: Selection) -> tuple[FixResult, str, CellMap]:
    """Fix a notebook's program, put the cells back; keep the file as it was if unchanged.

    The hazards left are those of the fixed notebook's own program (the one ``check``
    reads), so that their lines map to cells.
    """
    notebook = parse_notebook(text)
    result, cells = fix_cells(notebook.texts, selection)
    if result.fixed == 0:
        remaining = analyze_source(notebook.program, selection)
        return FixResult(text, 0, remaining, result.error), text, notebook.cells
    if cells is None:
        raise NotebookError("a fix moved a cell boundary; notebook left untouched")
    fixed = notebook.with_cells(cells)
    remaining = analyze_source(fixed.program, selection)
    return FixResult(result.text, result.fixed, remaining, result.error), fixed.dumps(), fixed.cells
