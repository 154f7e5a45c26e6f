"""When analyses run: debounced, one at a time on a worker thread, dropped once stale.

- Debounce: an edit to a document that had been quiet for the debounce delay is analysed
  at once (an isolated keystroke gets its diagnostics in the time the analysis takes);
  an edit within the delay of the previous one waits until the document has been quiet
  for the delay, so a burst of typing costs one analysis, not one per key.
- Off the event loop: the analysis is pure Python and takes milliseconds to seconds, so
  it runs on one worker thread while the loop keeps reading messages (a ``didChange``
  must be applied the moment it arrives). One thread: each ``IncrementalDocument`` is
  used by one thread only, and a second thread would only contend for the GIL.
- Abandonment: a newer version cancels the waiting analysis of the older one. One that
  has not started is dropped before it runs; one that is running finishes (it cannot be
  interrupted without leaving the incremental state half-updated, and it is short
  because it is incremental) and its result is thrown away unpublished.
- Garbage collection: frozen after every analysis, run in full once the session is quiet
  (``collector``), so a collection of the whole heap never lands inside an analysis.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from gradguard.analysis.findings import FileNotAnalysed
from gradguard.rules import FILE_NOT_ANALYSED, RULES
from gradguard.server import collector
from gradguard.server.diagnostics import build_outcome, empty_outcome, syntax_problems
from gradguard.server.documents import Outcome, Snapshot, Unit
from gradguard.server.positions import Encoding
from gradguard.server.probe_marks import place

logger = logging.getLogger(__name__)


class Scheduler:
    def __init__(self, on_outcome: Callable[[Unit, Outcome], None],
                 on_files_gone: Callable[[list[str]], None] = lambda paths: None) -> None:
        self._on_outcome = on_outcome
        # Told of the installed packages' files an analysis found out of date (a package
        # upgraded while the session runs), for the other documents that read them.
        self._on_files_gone = on_files_gone
        self._gone: list[str] = []
        self._executor = ThreadPoolExecutor(max_workers=1,
                                            thread_name_prefix="gradguard-analysis")
        self.analyses_run = 0
        self.analyses_abandoned = 0
        self._collection: asyncio.TimerHandle | None = None

    def edited(self, unit: Unit, encoding: Encoding) -> None:
        """The unit's text changed: analyse it now if it was quiet, else once it is."""
        now = asyncio.get_running_loop().time()
        delay = unit.settings.debounce_ms / 1000
        wait = delay if now - unit.last_change < delay else 0.0
        unit.last_change = now
        self._start(unit, wait, encoding)

    def refresh(self, unit: Unit, encoding: Encoding) -> None:
        """The unit's settings changed (not its text): analyse it again, now."""
        self._start(unit, 0.0, encoding)

    def forget(self, unit: Unit) -> None:
        unit.closed = True
        if unit.task is not None:
            unit.task.cancel()
        unit.settle(None)

    def on_analysis_thread(self, work: Callable[[], None]) -> None:
        """Run ``work`` where analyses run, between two of them (the analysis state,
        the workspace's parsed files among it, belongs to that thread)."""
        try:
            self._executor.submit(work)
        except RuntimeError:  # the executor is shut down: the session is ending
            pass

    def shutdown(self) -> None:
        if self._collection is not None:
            self._collection.cancel()
        self._executor.shutdown(wait=False, cancel_futures=True)

    def _start(self, unit: Unit, wait: float, encoding: Encoding) -> None:
        if unit.task is not None and not unit.task.done():
            unit.task.cancel()
            self.analyses_abandoned += 1
        unit.task = asyncio.get_running_loop().create_task(self._run(unit, wait, encoding))

    async def _run(self, unit: Unit, wait: float, encoding: Encoding) -> None:
        if wait > 0:
            await asyncio.sleep(wait)
        snapshot = unit.snapshot(encoding)
        try:
            outcome = await asyncio.get_running_loop().run_in_executor(
                self._executor, self._analyse, unit, snapshot)
        except RuntimeError:  # the executor is shut down: the session is ending
            return
        self._collect_when_quiet()
        if self._gone:
            gone, self._gone = self._gone, []
            self._on_files_gone(gone)
        if outcome is None or unit.closed or not unit.is_current(outcome):
            return  # a newer version (or settings) is already on its way
        unit.settle(outcome)
        try:
            self._on_outcome(unit, outcome)
        except Exception:  # a failed publish must not stop later ones
            logger.exception("publishing the diagnostics of %s failed", unit.key)

    def _collect_when_quiet(self) -> None:
        """(Re)start the quiet timer: a collection once no analysis ran for a while."""
        if self._collection is not None:
            self._collection.cancel()
        self._collection = asyncio.get_running_loop().call_later(
            collector.QUIET_S, self._collect)

    def _collect(self) -> None:
        self._collection = None
        try:
            self._executor.submit(collector.collect_all)
        except RuntimeError:  # the executor is shut down: the session is ending
            pass

    def _analyse(self, unit: Unit, snapshot: Snapshot) -> Outcome | None:
        """Runs in the analysis thread; ``None`` if the snapshot is stale before it starts."""
        if unit.closed or (snapshot.version, snapshot.generation) != (unit.version,
                                                                      unit.generation):
            return None
        settings = snapshot.settings
        if settings.excludes(snapshot.path):
            return empty_outcome(snapshot)
        if unit.analysis.incremental != settings.incremental:
            unit.analysis = unit.fresh_analysis(settings.incremental)
        self.analyses_run += 1
        try:
            if unit.analysis.project is not None:
                self._gone += unit.analysis.project.refresh_libraries()
            hazards = unit.analysis.update(snapshot.text, settings.selection)
            problems = syntax_problems(unit.analysis) \
                if settings.shows_syntax_errors() else []
            placed = place(snapshot.probe, unit.analysis.blocks) if snapshot.probe else []
            project = unit.analysis.project
            return build_outcome(snapshot, hazards, problems, placed,
                                 project.text_of if project is not None else lambda p: None)
        except Exception as error:
            # A bug in the analysis must cost this document's diagnostics, not the server;
            # the user sees that it was not checked. Its incremental state may be
            # half-updated: start it afresh next time.
            logger.exception("analysing %s (version %s) failed", unit.key, snapshot.version)
            unit.analysis = unit.fresh_analysis(settings.incremental)
            reason = RULES[FILE_NOT_ANALYSED].message(
                "crash", error=f"{type(error).__name__}: {error}")
            return build_outcome(snapshot, [FileNotAnalysed(reason).hazard()], [])
        finally:
            collector.after_analysis()
