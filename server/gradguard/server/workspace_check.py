"""The hazards of a whole workspace folder, found as ``gradguard check`` finds them.

Results come from ``check``'s own cache (``.gradguard_cache/`` in the folder, shared
with ``gradguard check`` run there): a file whose text, and the texts its analysis
read, are unchanged is not analysed again. The texts are the editor's for open
documents (unsaved edits included) and the disk's otherwise; the files left are
analysed in worker processes, as ``check`` does, so the server's own thread stays free
for the open documents. Blocking: the server calls it on a thread of its own.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gradguard.analysis.hazard import Hazard, distinct
from gradguard.analysis.project import read_file
from gradguard.checking.cache import DIRECTORY, Entry, ResultCache, digest
from gradguard.checking.results import FileResult
from gradguard.checking.workers import Overlay, check_file, check_paths, clean_context
from gradguard.config import Selection

if TYPE_CHECKING:
    from gradguard.checking.workers import WorkerContext

# Files handed to the worker processes at a time: progress is reported between batches,
# and a pass that is no longer wanted stops after the batch it is in.
BATCH = 64


@dataclass(frozen=True)
class FolderWork:
    """What one pass over one workspace folder needs, taken on the event loop."""

    folder: str
    files: list[str]  # absolute paths
    selection: Selection
    overlay: Overlay


# A file's size and modification time, and the digest of its text then.
Stamped = tuple[int, int, str | None]


@dataclass(frozen=True)
class FolderHazards:
    """A folder's hazards, each once, by the file it is in (``hazards``), and of those
    the ones the analysis of another file found (``revealed``): a write in an imported
    module that is a hazard because of what its importer passes it. An open document's
    own analysis, which runs that module's code alone, cannot find these."""

    hazards: dict[str, list[Hazard]]
    revealed: dict[str, list[Hazard]]


class Digests:
    """The digest of each file's text now: an open document's, else the file's, read
    again only when its size or modification time changed (a pass over a large
    workspace costs a ``stat`` a file, not a read)."""

    def __init__(self, overlay: Overlay, on_disk: dict[str, Stamped]) -> None:
        self.overlay = overlay
        self._on_disk = on_disk
        self._known: dict[str, str | None] = {}

    def __call__(self, path: str) -> str | None:
        if path not in self._known:
            text = self.overlay.texts.get(path)
            self._known[path] = digest(text) if text is not None else self._disk(path)
        return self._known[path]

    def _disk(self, path: str) -> str | None:
        try:
            status = os.stat(path)
        except OSError:
            self._on_disk.pop(path, None)
            return None
        known = self._on_disk.get(path)
        if known is not None and known[:2] == (status.st_size, status.st_mtime_ns):
            return known[2]
        text = read_file(path)
        found = None if text is None else digest(text)
        self._on_disk[path] = (status.st_size, status.st_mtime_ns, found)
        return found


class WorkspaceChecker:
    """One per server: the result cache of each folder, kept between passes."""

    def __init__(self, jobs: int | None = None, context: WorkerContext | None = None) -> None:
        self.jobs = jobs or os.cpu_count() or 1
        self._context = context
        self._caches: dict[tuple[str, Selection], ResultCache] = {}
        self._on_disk: dict[str, Stamped] = {}
        self.analysed = 0  # files analysed afresh, over the session (tests read it)

    def stale(self, work: FolderWork) -> list[str]:
        """The files whose cached results no longer hold."""
        cache = self._cache(work)
        current = Digests(work.overlay, self._on_disk)
        return [path for path in work.files
                if (known := current(path)) is None or
                cache.get(path, known, current) is None]

    def check(self, work: FolderWork, stale: list[str],
              on_batch: Callable[[int], None] = lambda done: None,
              stopped: Callable[[], bool] = lambda: False) -> FolderHazards:
        """The folder's hazards, by the file each is in, after analysing ``stale``."""
        cache = self._cache(work)
        if self._context is None:
            self._context = clean_context()
        roots = (work.folder,)
        for start in range(0, len(stale), BATCH):
            if stopped():
                break
            batch = stale[start:start + BATCH]
            readable = [path for path in batch if work.overlay.source(path).text is not None]
            # A file that cannot be read fails at once: no worker process for it.
            results = [check_file((path, work.selection, roots), work.overlay)
                       for path in batch if path not in readable]
            if readable:
                results += check_paths(readable, work.selection, self.jobs, roots,
                                       work.overlay, self._context)
            self._store(cache, results)
            on_batch(start + len(batch))
        cache.save()
        return self._found(work, cache, set(stale))

    def _cache(self, work: FolderWork) -> ResultCache:
        key = (work.folder, work.selection)
        if key not in self._caches:
            self._caches[key] = ResultCache(work.selection,
                                            os.path.join(work.folder, DIRECTORY))
        return self._caches[key]

    def _store(self, cache: ResultCache, results: list[FileResult]) -> None:
        self.analysed += len(results)
        for result in results:
            path = os.path.abspath(result.path)
            if result.digest is not None:
                cache.put(path, Entry(result.digest, result.read, result.found, result.error))
            else:  # never cached (the text could not be read): kept for this pass only
                cache.entries[path] = Entry("", {}, result.found, result.error)

    def _found(self, work: FolderWork, cache: ResultCache, fresh: set[str]) -> FolderHazards:
        """Each hazard once, in the file it is in, as ``check`` reports it: found from
        several files, the one with the fewest related locations."""
        found: list[tuple[str, Hazard]] = []
        revealed: list[tuple[str, Hazard]] = []
        current = Digests(work.overlay, self._on_disk)
        for path in work.files:
            entry = cache.entries.get(path)
            if entry is None:
                continue
            if path not in fresh and ((known := current(path)) is None or
                                      cache.get(path, known, current) is None):
                continue  # changed again since: left for the next pass
            found += entry.found
            revealed += [(where, hazard) for where, hazard in entry.found if where != path]
        return FolderHazards(distinct(found), distinct(revealed))
