"""``gradguard check``: analyse files (in parallel across cores) and report hazards.

The files given are one project: an import of another of its files (``from .models
import Net``, ``from utils.loss import ComputeLoss``) is followed, so a hazard whose
saving op and in-place op sit in different files is found, and reported in the file of
the in-place op. Results are kept in a cache (:mod:`gradguard.checking.cache`); the analysis
itself (:mod:`gradguard.checking.workers`) is imported only when some file is not in it, so
that re-checking an unchanged tree costs little more than reading it.
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path

from gradguard.analysis.hazard import distinct
from gradguard.checking.cache import Entry, ResultCache
from gradguard.checking.discovery import Discovery, discover, load_discovery
from gradguard.checking.files import read, shown_path
from gradguard.checking.notebook import CellMap, NotebookError, program_of
from gradguard.checking.results import FileResult
from gradguard.cli.formats import FORMATTERS, Finding
from gradguard.config import ProjectConfig, Selection, load
from gradguard.progress import Progress
from gradguard.rules import CODE_SKIPPED, FILE_NOT_ANALYSED


def project_roots(paths: list[str]) -> tuple[str, ...]:
    """Where absolute imports of the project are looked for: the folders given (and
    those of the files given), and the folder the run starts in."""
    folders = {os.path.abspath(p if os.path.isdir(p) else os.path.dirname(p) or ".")
               for p in paths}
    return tuple(sorted(folders | {os.getcwd()}))


def run_check(paths: list[str], output_format: str, selection: Selection,
              jobs: int | None, fix: bool = False, diff: bool = False,
              force_exclude: bool = False, use_cache: bool = True) -> int:
    # [tool.gradguard] as the server and the probe read it; options given override it.
    config = load(os.getcwd())
    for problem in config.problems:
        print(f"gradguard: {problem}", file=sys.stderr)
    if config.problems:
        return 2
    discovery = load_discovery(Path.cwd(), force_exclude, config)
    selection = config.selection(selection.select, selection.ignore, selection.uncertain)
    missing = [p for p in paths if not os.path.exists(p)]
    for path in missing:
        print(f"gradguard: {path}: no such file or directory", file=sys.stderr)
    present = [p for p in paths if p not in missing]
    if fix or diff:
        return run_fix(present, selection, diff, discovery, config) if present else 2
    files = list(discover(present, discovery))
    cache = ResultCache(selection) if use_cache else None
    results: list[FileResult] = []
    todo = []
    for path in files:
        entry = None
        if cache is not None:
            known = cache.digest_of(os.path.abspath(path))
            entry = None if known is None else cache.get(os.path.abspath(path), known)
        if entry is None:
            todo.append(path)
        else:
            results.append(FileResult(path, entry.found, entry.error, cells=_cells(path)))
    fresh = []
    if todo:
        from gradguard.checking.workers import check_paths

        with Progress(sys.stderr, len(files), "files", done=len(files) - len(todo)) as shown:
            fresh = check_paths(todo, selection, jobs or os.cpu_count() or 1,
                                project_roots(present), watcher=shown if shown.drawn else None)
    if cache is not None:
        for result in fresh:
            if result.digest is not None:
                cache.put(os.path.abspath(result.path),
                          Entry(result.digest, result.read, result.found, result.error))
        cache.save()
    results += fresh
    found = _with_severities(_reported(results, files), config)
    if output_format != "text":  # text shows them among the findings (GG900)
        order = {path: index for index, path in enumerate(files)}
        for result in sorted(results, key=lambda r: order[r.path]):
            if result.error is not None:
                print(f"gradguard: {result.path}: {result.error}", file=sys.stderr)
    text = FORMATTERS[output_format](found)
    if text:
        print(text)
    return exit_status(found, missing=bool(missing))


# What ``check`` exits with (README, "Exit status").
EXIT_CLEAN, EXIT_FOUND, EXIT_USAGE, EXIT_NOT_ANALYSED = 0, 1, 2, 3


def exit_status(found: list[Finding], missing: bool = False) -> int:
    """A path that does not exist is a usage error; a file that could not be analysed
    comes next (the run is incomplete); then hazards. Notes that code was skipped
    (GG901) change nothing."""
    if missing:
        return EXIT_USAGE
    codes = {finding.hazard.code for finding in found}
    if FILE_NOT_ANALYSED in codes:
        return EXIT_NOT_ANALYSED
    return EXIT_FOUND if codes - {CODE_SKIPPED} else EXIT_CLEAN


def _cells(path: str) -> CellMap | None:
    """A notebook's cell map (its results come from the cache; the map is cheap)."""
    if not path.endswith(".ipynb"):
        return None
    source = read(path)
    try:
        return None if source.text is None else program_of(path, source.text)[1]
    except NotebookError:
        return None


def _reported(results: list[FileResult], files: list[str]) -> list[Finding]:
    """Each hazard once (files reached from several others find it again), by file in
    the order given, then by position; paths as the user wrote them."""
    shown = {os.path.abspath(path): path for path in files}
    cells = {os.path.abspath(r.path): r.cells for r in results if r.cells is not None}
    order = {path: index for index, path in enumerate(files)}
    found = distinct(pair for result in results for pair in result.found)
    paths = sorted(((shown.get(where) or shown_path(where), where) for where in found),
                   key=lambda item: (order.get(item[0], len(order)), item[0]))
    reported = []
    for path, where in paths:
        for hazard in found[where]:
            related = tuple(r if r.path is None else
                            replace(r, path=shown.get(r.path) or shown_path(r.path))
                            for r in hazard.related)
            reported.append(Finding(path, replace(hazard, related=related), cells.get(where)))
    return reported


def _with_severities(found: list[Finding], config: ProjectConfig) -> list[Finding]:
    """The findings at the severities ``[tool.gradguard] severity`` gives their codes."""
    return [replace(f, hazard=replace(f.hazard, severity=config.severity_of(
        f.hazard.code, f.hazard.severity))) for f in found]


def run_fix(paths: list[str], selection: Selection, diff: bool, discovery: Discovery,
            config: ProjectConfig) -> int:
    from gradguard.cli.fixing import fix_run

    fixed = 0
    left: list[Finding] = []
    roots = project_roots(paths)
    for path, count, remaining, cells in fix_run(list(discover(paths, discovery)), selection,
                                                  diff, roots):
        fixed += count
        left.extend(Finding(path, hazard, cells) for hazard in remaining)
    verb = "would fix" if diff else "fixed"
    failed = [f for f in left if f.hazard.code == FILE_NOT_ANALYSED]
    print(f"gradguard: {verb} {fixed} hazard(s); {len(left) - len(failed)} left without a "
          f"safe fix" + (f"; {len(failed)} file(s) not analysed" if failed else ""),
          file=sys.stderr)
    if failed and diff:
        print(FORMATTERS["text"](failed), file=sys.stderr)
    if left and not diff:
        print(FORMATTERS["text"](_with_severities(left, config)))
    return exit_status(left)
