"""``gradguard check``: analyse files (in parallel across cores) and report hazards.

The files given are one project: an import of another of its files (``from .models
import Net``, ``from utils.loss import ComputeLoss``) is followed, so a hazard whose
saving op and in-place op sit in different files is found, and reported in the file of
the in-place op. Each worker process parses an imported file once, however many of the
files it checks import it. Results are kept in a cache (:mod:`gradguard.cli.cache`).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path

from gradguard.analysis import Hazard, Selection, SourceError
from gradguard.analysis.analyze import analyze_in_run, project_for
from gradguard.analysis.interpreter import SummaryCache
from gradguard.analysis.project import Project
from gradguard.analysis.report import not_analysed
from gradguard.cli.cache import Entry, ResultCache, digest
from gradguard.cli.discovery import Discovery, discover, load_discovery
from gradguard.cli.files import read, shown_path
from gradguard.cli.fixing import fix_run
from gradguard.cli.formats import FORMATTERS, Finding
from gradguard.cli.notebook import CellMap, NotebookError, program_of
from gradguard.config import ProjectConfig, load
from gradguard.runtime import fewer_collections


@dataclass
class FileResult:
    path: str  # as given
    # (absolute path, hazard) of each hazard its analysis found, in whichever file.
    found: list[tuple[str, Hazard]] = field(default_factory=list)
    error: str | None = None
    digest: str | None = None
    # The other project files the analysis read, with the digests of their texts.
    read: dict[str, str] = field(default_factory=dict)
    cells: CellMap | None = None  # a notebook's


# One project a worker process: the files it imports are parsed once, and their
# functions summarised once (per calling context), for all the files it checks.
_projects: dict[tuple[str, ...], tuple[Project, SummaryCache]] = {}


def _project(roots: tuple[str, ...]) -> tuple[Project, SummaryCache]:
    if roots not in _projects:
        _projects.clear()
        _projects[roots] = (project_for(list(roots)), SummaryCache())
    return _projects[roots]


def check_file(job: tuple[str, Selection, tuple[str, ...]]) -> FileResult:
    path, selection, roots = job
    source = read(path)
    absolute = os.path.abspath(path)
    if source.text is None:
        return _failed(path, source.error or "cannot read", source.line, source.column)
    project, summaries = _project(roots)
    cells = None
    try:
        text, cells = program_of(path, source.text)
        analysis = analyze_in_run(absolute, text, project, selection, summaries)
    except NotebookError as error:
        return _failed(path, str(error), text_digest=digest(source.text))
    except SourceError as error:
        return _failed(path, str(error), error.line, error.column, digest(source.text), cells)
    except RecursionError:
        return _failed(path, "too deeply nested to analyse", text_digest=digest(source.text))
    found = [(where, hazard) for where, hazards in analysis.found.items()
             for hazard in hazards]
    read_texts = {other: digest(project.texts[other]) for other in analysis.read
                  if other in project.texts}
    return FileResult(path, found, None, digest(source.text), read_texts, cells)


def _failed(path: str, reason: str, line: int = 0, column: int = 0,
            text_digest: str | None = None, cells: CellMap | None = None) -> FileResult:
    """A file that could not be analysed: its status is a finding of its own (GG900)."""
    where = ""
    if line:
        cell, in_cell = cells.locate(line) if cells else (None, line)
        where = (f"cell {cell}:" if cell else "") + f"{in_cell}:{column}: "
    return FileResult(path, [(os.path.abspath(path), not_analysed(reason, line, column))],
                      f"{where}{reason}", text_digest, cells=cells)


def check_paths(paths: list[str], selection: Selection, jobs: int,
                roots: tuple[str, ...]) -> list[FileResult]:
    """Each file's result, in the order given. With more than one job the files are
    checked in worker processes: one that dies (a crash in native code, the kernel's
    out-of-memory killer) costs only the files it was checking, which are then checked
    again one process each, so that the one that kills it is found and reported."""
    work = [(path, selection, roots) for path in paths]
    if jobs <= 1:
        fewer_collections()
        return [check_file(job) for job in work]
    done: dict[str, FileResult] = {}
    chunks = [work[start:start + CHUNK] for start in range(0, len(work), CHUNK)]
    with ProcessPoolExecutor(max_workers=min(jobs, len(chunks) or 1),
                             initializer=fewer_collections) as pool:
        futures = [pool.submit(_check_chunk, chunk) for chunk in chunks]
        for future in futures:
            try:
                done.update((result.path, result) for result in future.result())
            except BrokenProcessPool:
                continue
    left = [job for job in work if job[0] not in done]
    done.update(zip([job[0] for job in left], check_each_alone(left, jobs), strict=True))
    return [done[path] for path in paths]


# Files a worker takes at a time: few enough to share the work out, enough that the
# per-task overhead does not show.
CHUNK = 8


def _check_chunk(chunk: list[tuple[str, Selection, tuple[str, ...]]]) -> list[FileResult]:
    return [check_file(job) for job in chunk]


def check_each_alone(work: list[tuple[str, Selection, tuple[str, ...]]],
                     jobs: int) -> list[FileResult]:
    """Check each file in a process of its own (``jobs`` at a time): a file whose
    analysis kills its process is reported as not analysed, and the others complete."""
    context = multiprocessing.get_context("fork")
    results: list[FileResult | None] = [None] * len(work)
    running: list[tuple[int, BaseProcess, Connection]] = []
    pending = list(enumerate(work))
    while pending or running:
        while pending and len(running) < jobs:
            index, job = pending.pop(0)
            receiver, sender = context.Pipe(duplex=False)
            started = context.Process(target=_check_into, args=(job, sender), daemon=True)
            started.start()
            sender.close()
            running.append((index, started, receiver))
        index, process, receiver = running.pop(0)
        result = _received(receiver)
        process.join()
        receiver.close()
        if result is None:
            result = _failed(work[index][0], "the analysis process died "
                             f"({_death(process.exitcode)}); please report it")
        results[index] = result
    return [result for result in results if result is not None]


def _check_into(job: tuple[str, Selection, tuple[str, ...]], sender: Connection) -> None:
    fewer_collections()
    sender.send(check_file(job))
    sender.close()


def _received(receiver: Connection) -> FileResult | None:
    try:
        result = receiver.recv()
    except (EOFError, OSError):
        return None  # the process died before it answered
    return result if isinstance(result, FileResult) else None


def _death(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            return f"killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exit status {exitcode}"


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
    fresh = check_paths(todo, selection, jobs or os.cpu_count() or 1, project_roots(present))
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
    if "GG900" in codes:
        return EXIT_NOT_ANALYSED
    return EXIT_FOUND if codes - {"GG901"} else EXIT_CLEAN


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
    best: dict[tuple[object, ...], tuple[str, Hazard, CellMap | None]] = {}
    for result in results:
        for where, hazard in result.found:
            path = shown.get(where) or shown_path(where)
            key = (where, hazard.code, hazard.span, hazard.message)
            known = best.get(key)
            if known is None or len(hazard.related) < len(known[1].related):
                related = tuple(r if r.path is None else
                                replace(r, path=shown.get(r.path) or shown_path(r.path))
                                for r in hazard.related)
                best[key] = (path, replace(hazard, related=related), cells.get(where))
    ordered = sorted(best.values(), key=lambda item: (order.get(item[0], len(order)),
                                                      item[0], item[1].span, item[1].code))
    return [Finding(path, hazard, cell_map) for path, hazard, cell_map in ordered]


def _with_severities(found: list[Finding], config: ProjectConfig) -> list[Finding]:
    """The findings at the severities ``[tool.gradguard] severity`` gives their codes."""
    return [replace(f, hazard=replace(f.hazard, severity=config.severity_of(
        f.hazard.code, f.hazard.severity))) for f in found]


def run_fix(paths: list[str], selection: Selection, diff: bool, discovery: Discovery,
            config: ProjectConfig) -> int:
    fixed = 0
    left: list[Finding] = []
    roots = project_roots(paths)
    for path, count, remaining, cells in fix_run(list(discover(paths, discovery)), selection,
                                                  diff, roots):
        fixed += count
        left.extend(Finding(path, hazard, cells) for hazard in remaining)
    verb = "would fix" if diff else "fixed"
    failed = [f for f in left if f.hazard.code == "GG900"]
    print(f"gradguard: {verb} {fixed} hazard(s); {len(left) - len(failed)} left without a "
          f"safe fix" + (f"; {len(failed)} file(s) not analysed" if failed else ""),
          file=sys.stderr)
    if failed and diff:
        print(FORMATTERS["text"](failed), file=sys.stderr)
    if left and not diff:
        print(FORMATTERS["text"](_with_severities(left, config)))
    return exit_status(left)
