"""Checking files in worker processes: one project a worker, one bad file never costs
the others (a worker that dies costs only its chunk, which is checked again one
process per file, so the file that kills it is found and reported).

The language server checks its workspace with the same code: it hands over the texts of
the documents open in the editor (``Overlay``), which stand in for those files' texts on
disk, and a multiprocessing context of its own (it has threads, which ``fork`` does not
copy safely).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
from collections.abc import Mapping
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import TYPE_CHECKING, Protocol

from gradguard.analysis.analyze import ProjectRun
from gradguard.analysis.findings import FileNotAnalysed
from gradguard.analysis.libraries import version_stamp
from gradguard.analysis.project import read_file
from gradguard.analysis.syntax import SourceError
from gradguard.checking.cache import digest
from gradguard.checking.files import SourceFile, read
from gradguard.checking.notebook import CellMap, NotebookError, program_of
from gradguard.checking.results import FileResult
from gradguard.config import Selection
from gradguard.fixes import fix_of
from gradguard.runtime import fewer_collections

if TYPE_CHECKING:
    from multiprocessing.context import ForkContext, ForkServerContext, SpawnContext
    from multiprocessing.queues import SimpleQueue

    WorkerContext = ForkContext | ForkServerContext | SpawnContext


def clean_context() -> WorkerContext:
    """Worker processes started from a clean process that has imported the analysis
    once: for a caller with threads (the language server, a test runner), whose state
    ``fork`` does not copy safely (a lock held by another thread stays held in the
    child)."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["gradguard.checking.workers"])
    return context


@dataclass(frozen=True)
class Overlay:
    """Texts that stand in for files' texts on disk (by absolute path): the documents
    open in an editor, unsaved edits included."""

    texts: Mapping[str, str] = field(default_factory=dict)
    # Tells one overlay from another without comparing every text.
    key: str = ""

    @classmethod
    def of(cls, texts: Mapping[str, str]) -> Overlay:
        stamp = "".join(f"{path}\0{digest(text)}\0" for path, text in sorted(texts.items()))
        return cls(dict(texts), digest(stamp))

    def read(self, path: str) -> str | None:
        text = self.texts.get(os.path.abspath(path))
        return text if text is not None else read_file(path)

    def source(self, path: str) -> SourceFile:
        text = self.texts.get(os.path.abspath(path))
        return read(path) if text is None else SourceFile(path, text)


NO_OVERLAY = Overlay()
Job = tuple[str, Selection, tuple[str, ...]]


class Watcher(Protocol):
    """Told when each file's check starts and ends (``check``'s progress on a terminal);
    called on a thread of the calling process."""

    def started(self, path: str) -> None: ...

    def finished(self, path: str) -> None: ...


# One run of a project a worker process: the files it imports are parsed once, and
# their functions summarised once (per calling context), for all the files it checks.
_runs: dict[tuple[tuple[str, ...], str, Selection], ProjectRun] = {}


def _run(roots: tuple[str, ...], overlay: Overlay, selection: Selection) -> ProjectRun:
    key = (roots, overlay.key, selection)
    if key not in _runs:
        _runs.clear()
        _runs[key] = ProjectRun(roots, overlay.read if overlay.texts else read_file, selection,
                                fix_of=fix_of)
    return _runs[key]


def check_file(job: Job, overlay: Overlay = NO_OVERLAY) -> FileResult:
    path, selection, roots = job
    source = overlay.source(path)
    absolute = os.path.abspath(path)
    if source.text is None:
        return _failed(path, source.error or "cannot read", source.line, source.column)
    run = _run(roots, overlay, selection)
    cells = None
    try:
        text, cells = program_of(path, source.text)
        analysis = run.file(absolute, text)
    except NotebookError as error:
        return _failed(path, str(error), text_digest=digest(source.text))
    except SourceError as error:
        return _failed(path, str(error), error.line, error.column, digest(source.text), cells)
    except RecursionError:
        return _failed(path, "too deeply nested to analyse", text_digest=digest(source.text))
    except Exception as error:  # noqa: BLE001 - a fault of ours costs this file, not the run
        return _failed(path, f"internal error ({type(error).__name__}: {error}); please "
                       "report it")
    found = [(where, hazard) for where, hazards in analysis.found.items()
             for hazard in hazards]
    # A file of an installed package stands in the cache by its package's version.
    read_texts = {other: stamp if (stamp := version_stamp(other)) is not None
                  else None if (seen := run.project.text_seen(other)) is None
                  else digest(seen) for other in analysis.read}
    return FileResult(path, found, None, digest(source.text), read_texts, cells)


def _failed(path: str, reason: str, line: int = 0, column: int = 0,
            text_digest: str | None = None, cells: CellMap | None = None) -> FileResult:
    """A file that could not be analysed: its status is a finding of its own (GG900)."""
    where = ""
    if line:
        cell, in_cell = cells.locate(line) if cells else (None, line)
        where = (f"cell {cell}:" if cell else "") + f"{in_cell}:{column}: "
    status = FileNotAnalysed(reason, line, column).hazard()
    return FileResult(path, [(os.path.abspath(path), status)],
                      f"{where}{reason}", text_digest, cells=cells)


def check_paths(paths: list[str], selection: Selection, jobs: int,
                roots: tuple[str, ...], overlay: Overlay = NO_OVERLAY,
                context: WorkerContext | None = None,
                watcher: Watcher | None = None) -> list[FileResult]:
    """Each file's result, in the order given. With more than one job, or a ``context``,
    the files are checked in worker processes (new ones each call: a long-lived caller
    keeps no file it read): one that dies (a crash in native code, the kernel's
    out-of-memory killer) costs only the files it was checking, which are then checked
    again one process each, so that the one that kills it is found and reported."""
    work = [(path, selection, roots) for path in paths]
    if jobs <= 1 and context is None:
        fewer_collections()
        return [_watched(job, overlay, watcher) for job in work]
    done: dict[str, FileResult] = {}
    chunks = [work[start:start + CHUNK] for start in range(0, len(work), CHUNK)]
    events: SimpleQueue[tuple[bool, str] | None] | None = None
    relay = None
    if watcher is not None:  # the workers tell it through a queue, read on a thread here
        events = (context or multiprocessing.get_context()).SimpleQueue()
        relay = threading.Thread(target=_relay, args=(events, watcher), daemon=True)
        relay.start()
    with ProcessPoolExecutor(max_workers=max(1, min(jobs, len(chunks))), mp_context=context,
                             initializer=_start_worker, initargs=(events,)) as pool:
        futures = [pool.submit(_check_chunk, chunk, overlay) for chunk in chunks]
        for future in futures:
            try:
                done.update((result.path, result) for result in future.result())
            except BrokenProcessPool:
                continue
    if events is not None and relay is not None:
        events.put(None)
        relay.join()
    left = [job for job in work if job[0] not in done]
    done.update(zip([job[0] for job in left],
                    check_each_alone(left, max(jobs, 1), context, overlay), strict=True))
    if watcher is not None:
        for job in left:
            watcher.finished(job[0])
    return [done[path] for path in paths]


def _watched(job: Job, overlay: Overlay, watcher: Watcher | None) -> FileResult:
    if watcher is not None:
        watcher.started(job[0])
    result = check_file(job, overlay)
    if watcher is not None:
        watcher.finished(job[0])
    return result


# In a worker process: where it tells the caller's ``Watcher`` of each file, if anywhere.
_events: SimpleQueue[tuple[bool, str] | None] | None = None


def _start_worker(events: SimpleQueue[tuple[bool, str] | None] | None) -> None:
    global _events
    _events = events
    fewer_collections()


def _relay(events: SimpleQueue[tuple[bool, str] | None], watcher: Watcher) -> None:
    """In the caller: hands the workers' news to ``watcher`` until told to stop (None)."""
    while (event := events.get()) is not None:
        started, path = event
        if started:
            watcher.started(path)
        else:
            watcher.finished(path)


# Files a worker takes at a time: few enough to share the work out, enough that the
# per-task overhead does not show.
CHUNK = 8


def _check_chunk(chunk: list[Job], overlay: Overlay) -> list[FileResult]:
    results = []
    for job in chunk:
        if _events is not None:
            _events.put((True, job[0]))
        results.append(check_file(job, overlay))
        if _events is not None:
            _events.put((False, job[0]))
    return results


def check_each_alone(work: list[Job], jobs: int, context: WorkerContext | None = None,
                     overlay: Overlay = NO_OVERLAY) -> list[FileResult]:
    """Check each file in a process of its own (``jobs`` at a time): a file whose
    analysis kills its process is reported as not analysed, and the others complete."""
    context = context or multiprocessing.get_context("fork")
    results: list[FileResult | None] = [None] * len(work)
    running: list[tuple[int, BaseProcess, Connection]] = []
    pending = list(enumerate(work))
    while pending or running:
        while pending and len(running) < jobs:
            index, job = pending.pop(0)
            receiver, sender = context.Pipe(duplex=False)
            started = context.Process(target=_check_into, args=(job, overlay, sender),
                                      daemon=True)
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


def _check_into(job: Job, overlay: Overlay, sender: Connection) -> None:
    fewer_collections()
    sender.send(check_file(job, overlay))
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
