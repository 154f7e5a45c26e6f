"""``gradguard check``: analyse files (in parallel across cores) and report hazards."""

from __future__ import annotations

import os
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from gradguard.analysis import Hazard, Selection, SourceError, analyze_source
from gradguard.cli.discovery import ConfigError, Discovery, discover, load_discovery
from gradguard.cli.files import read
from gradguard.cli.fixing import fix_file
from gradguard.cli.formats import FORMATTERS, Finding
from gradguard.cli.notebook import CellMap, NotebookError, program_of


@dataclass
class FileResult:
    path: str
    hazards: list[Hazard] = field(default_factory=list)
    error: str | None = None
    cells: CellMap | None = None  # a notebook's


def check_file(job: tuple[str, Selection]) -> FileResult:
    path, selection = job
    source = read(path)
    if source.text is None:
        return FileResult(path, error=source.error)
    cells = None
    try:
        text, cells = program_of(path, source.text)
        return FileResult(path, analyze_source(text, selection), cells=cells)
    except NotebookError as error:
        return FileResult(path, error=str(error))
    except SourceError as error:
        where = ""
        if error.line:
            cell, line = cells.locate(error.line) if cells else (None, error.line)
            where = (f"cell {cell}:" if cell else "") + f"{line}:{error.column}: "
        return FileResult(path, error=f"{where}{error}")
    except RecursionError:
        return FileResult(path, error="too deeply nested to analyse")


def check_paths(paths: list[str], selection: Selection, jobs: int,
                discovery: Discovery) -> list[FileResult]:
    work = [(path, selection) for path in discover(paths, discovery)]
    if jobs <= 1 or len(work) < 8:
        return [check_file(job) for job in work]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(check_file, work, chunksize=8))


def run_check(paths: list[str], output_format: str, selection: Selection,
              jobs: int | None, fix: bool = False, diff: bool = False,
              force_exclude: bool = False) -> int:
    try:
        discovery = load_discovery(Path.cwd(), force_exclude)
    except ConfigError as error:
        print(f"gradguard: {error}", file=sys.stderr)
        return 2
    missing = [p for p in paths if not os.path.exists(p)]
    for path in missing:
        print(f"gradguard: {path}: no such file or directory", file=sys.stderr)
    present = [p for p in paths if p not in missing]
    if fix or diff:
        return run_fix(present, selection, diff, discovery) if present else 2
    results = check_paths(present, selection, jobs or os.cpu_count() or 1, discovery)
    found: list[Finding] = []
    for result in results:
        if result.error is not None:
            print(f"gradguard: {result.path}: {result.error}", file=sys.stderr)
        found.extend(Finding(result.path, hazard, result.cells) for hazard in result.hazards)
    text = FORMATTERS[output_format](found)
    if text:
        print(text)
    if missing and not results:
        return 2
    return 1 if found else 0


def run_fix(paths: list[str], selection: Selection, diff: bool, discovery: Discovery) -> int:
    fixed = 0
    left: list[Finding] = []
    for path in discover(paths, discovery):
        count, remaining, cells = fix_file(path, selection, diff)
        fixed += count
        left.extend(Finding(path, hazard, cells) for hazard in remaining)
    verb = "would fix" if diff else "fixed"
    print(f"gradguard: {verb} {fixed} hazard(s); {len(left)} left without a safe fix",
          file=sys.stderr)
    if left and not diff:
        print(FORMATTERS["text"](left))
    return 1 if left else 0
