"""Workspace diagnostics (``diagnosticMode: workspace``): the hazards of every Python file
of the workspace folders, opened or not, answered to ``workspace/diagnostic``.

They are computed in the background, in passes: one when the session starts, and one
after each change (an edit, a save, a file changed on disk, new settings), a burst of
changes costing one pass. A pass takes the open documents' texts, reuses ``check``'s
cached results for every file whose texts are unchanged (``workspace_check``) and
analyses the rest in worker processes, with work-done progress when there is work to
do. When the reports change the client is asked to pull again
(``workspace/diagnostic/refresh``), and a request that arrives while a pass is due
waits for it, so an answer never predates a change the client has sent.

Open documents keep their own diagnostics, from the incremental analysis: their
reports here are the same ones ``textDocument/diagnostic`` answers. A hazard that only
an importer's analysis reveals (a write in an imported loss module, a hazard because
of what the training script passes it) is reported in the file it is in, opened or not:
the analysis of an open document runs its own code alone and cannot find it, so each
pass hands the open documents what it found in their files from other files
(``Revealed``), and a document whose share changed is analysed again.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from lsprotocol import types
from pygls.progress import Progress

from gradguard.analysis.hazard import Hazard
from gradguard.analysis.project import read_file
from gradguard.checking.workers import Overlay
from gradguard.config import Selection
from gradguard.server.documents import Revealed, TextUnit, Unit
from gradguard.server.positions import Encoding
from gradguard.server.settings import Settings
from gradguard.server.workspace_check import FolderHazards, FolderWork, WorkspaceChecker
from gradguard.server.workspace_files import workspace_files
from gradguard.server.workspace_reports import (
    FileReport,
    closed_file_report,
    file_uri,
    workspace_report,
)

logger = logging.getLogger(__name__)

# Quiet time after a change before a pass starts: a burst of edits costs one pass.
DEBOUNCE_S = 0.2
PROGRESS_TITLE = "GradGuard: checking the workspace"


@dataclass(frozen=True)
class _Inputs:
    """What a pass reads of the server's state, taken on the event loop."""

    folders: list[str]
    overlay: Overlay
    encoding: Encoding
    walk: int  # which walk of the folders' files the pass needs


class WorkspaceHost(Protocol):
    """What the workspace diagnostics need of the server, and no more (the server is one)."""

    units: dict[str, Unit]

    @property
    def encoding(self) -> Encoding: ...

    @property
    def work_done_progress(self) -> Progress: ...

    def workspace_folders(self) -> list[str]: ...

    def settings_for(self, path: str | None) -> Settings: ...

    def pulled(self, diagnostics: list[types.Diagnostic]) -> list[types.Diagnostic]: ...

    def shows_progress(self) -> bool: ...

    def pull_again(self) -> None: ...

    def reanalyse(self, unit: Unit) -> None: ...


class WorkspaceDiagnostics:
    def __init__(self, server: WorkspaceHost) -> None:
        self.server = server
        self.enabled = False
        self.checker = WorkspaceChecker()
        self.reports: dict[str, FileReport] = {}  # files not open, by URI
        # By path: the hazards other files' analyses found in each file (last pass).
        self.revealed: dict[str, Revealed] = {}
        self.passes = 0
        # Changes counted as they arrive; a pass records the count it started from.
        self._changes = 0
        self._done = -1
        self._task: asyncio.Task[None] | None = None
        self._passed = asyncio.Event()
        self._stopped = threading.Event()
        # A file's last report and what it was made from (unchanged inputs: reused).
        self._made: dict[str, tuple[tuple[object, ...], FileReport]] = {}
        # Each folder's files, walked again when files may have come or gone: the
        # walks asked for so far, and the last one made.
        self._walks = 0
        self._walked: tuple[int, dict[str, list[str]]] = (-1, {})

    def changed(self, files: bool = False) -> None:
        """Something the workspace's hazards depend on changed: a pass is due (``files``:
        files may have been created or deleted, or the settings that choose them
        changed)."""
        if not self.enabled or self._stopped.is_set():
            return
        if files:
            self._walks += 1
        self._changes += 1
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._passes())

    def stop(self) -> None:
        self._stopped.set()

    def revealed_in(self, path: str) -> Revealed | None:
        """What the last pass found in a file from the analysis of other files."""
        return self.revealed.get(os.path.abspath(path))

    async def answer(self, params: types.WorkspaceDiagnosticParams
                     ) -> types.WorkspaceDiagnosticReport:
        """The report of every file, once the changes sent so far are in it."""
        if not self.enabled:
            return types.WorkspaceDiagnosticReport(items=[])
        if self._task is None:
            self.changed()  # asked before the session's first pass started
        wanted = self._changes
        while self._done < wanted and not self._stopped.is_set():
            passed = self._passed
            await passed.wait()
        reports = dict(self.reports)
        for closed_uri, report in await self._open_reports():
            reports.pop(closed_uri, None)
            reports[report.uri] = report
        return workspace_report(reports, params.previous_result_ids)

    async def _open_reports(self) -> list[tuple[str, FileReport]]:
        """The open documents' reports (their incremental analysis's own), each with the
        URI its file has among the workspace's reports."""
        found = []
        for unit in list(self.server.units.values()):
            if not isinstance(unit, TextUnit) or unit.path is None:
                continue
            closed_uri = file_uri(os.path.abspath(unit.path))
            if closed_uri not in self.reports:
                continue  # not one of the workspace's files
            outcome = await unit.current()
            uri = unit.text_buffer.uri
            if outcome is None or uri not in outcome.diagnostics:
                continue
            found.append((closed_uri, FileReport(
                uri, self.server.pulled(outcome.diagnostics[uri]), outcome.result_ids[uri],
                unit.version)))
        return found

    # -- passes ------------------------------------------------------------------------

    async def _passes(self) -> None:
        while self._done < self._changes and not self._stopped.is_set():
            if self._done >= 0:
                await asyncio.sleep(DEBOUNCE_S)
            started = self._changes
            try:
                await self._pass(self._inputs())
            except Exception:  # a failed pass must not leave requests waiting
                logger.exception("checking the workspace failed")
            self._done = started
            self.passes += 1
            passed, self._passed = self._passed, asyncio.Event()
            passed.set()

    def _inputs(self) -> _Inputs:
        texts = {os.path.abspath(unit.path): unit.program()
                 for unit in self.server.units.values()
                 if isinstance(unit, TextUnit) and unit.path is not None}
        return _Inputs(self.server.workspace_folders(), Overlay.of(texts),
                       self.server.encoding, self._walks)

    async def _pass(self, inputs: _Inputs) -> None:
        works = await asyncio.to_thread(self._works, inputs)
        stale = await asyncio.to_thread(
            lambda: [self.checker.stale(work) for work in works])
        total = sum(len(files) for files in stale)
        progress = await _Progress.start(self.server, total)
        loop = asyncio.get_running_loop()
        try:
            found = FolderHazards({}, {})
            done = 0
            for work, files in zip(works, stale, strict=True):
                def on_batch(count: int, before: int = done) -> None:
                    loop.call_soon_threadsafe(progress.report, before + count, total)

                folder = await asyncio.to_thread(
                    self.checker.check, work, files, on_batch, self._stopped.is_set)
                found.hazards.update(folder.hazards)
                found.revealed.update(folder.revealed)
                done += len(files)
            reports, revealed = await asyncio.to_thread(self._reports, works, found, inputs)
        finally:
            progress.end(total)
        self.revealed = revealed
        if self._reveal() or reports != self.reports:
            self.reports = reports
            self.server.pull_again()

    def _reveal(self) -> bool:
        """Hand each open document what the pass found in its file from other files;
        one whose share changed is analysed again (its next outcome shows them).
        Whether any changed."""
        changed = False
        for unit in list(self.server.units.values()):
            if not isinstance(unit, TextUnit) or unit.path is None:
                continue
            now = self.revealed_in(unit.path)
            if now != unit.revealed:
                unit.revealed = now
                self.server.reanalyse(unit)
                changed = True
        return changed

    def _works(self, inputs: _Inputs) -> list[FolderWork]:
        walk, found = self._walked
        if walk != inputs.walk or list(found) != inputs.folders:
            found = workspace_files(inputs.folders)
            self._walked = (inputs.walk, found)
        works = []
        for folder, files in found.items():
            # Analysed with every rule (each file's own settings pick what it shows), so
            # that the results are those ``gradguard check`` caches in the folder.
            uncertain = self.server.settings_for(folder).uncertain
            works.append(FolderWork(folder, files, Selection(uncertain=uncertain),
                                    inputs.overlay))
        return works

    def _reports(self, works: Sequence[FolderWork], found: FolderHazards, inputs: _Inputs
                 ) -> tuple[dict[str, FileReport], dict[str, Revealed]]:
        """Each file's report, by URI, and what other files revealed in each, by path."""
        reports = {}
        revealed = {}
        for work in works:
            for path in work.files:
                settings = self.server.settings_for(path)
                if settings.excludes(path):
                    continue
                text = inputs.overlay.texts.get(path)
                if text is None:
                    text = _text_of_file(path)
                report = self._report(path, text, found.hazards.get(path, []), settings,
                                      inputs)
                reports[report.uri] = report
                if found.revealed.get(path):
                    revealed[path] = Revealed(text, tuple(found.revealed[path]))
        return reports, revealed

    def _report(self, path: str, text: str, hazards: list[Hazard], settings: Settings,
                inputs: _Inputs) -> FileReport:
        made_of = (text, tuple(hazards), settings, inputs.encoding)
        known = self._made.get(path)
        if known is not None and known[0] == made_of:
            return known[1]
        report = closed_file_report(path, text, hazards, settings, inputs.encoding,
                                    inputs.overlay.read)
        self._made[path] = (made_of, report)
        return report


def _text_of_file(path: str) -> str:
    """A file's text to place diagnostics in: undecodable bytes replaced (the file's
    GG900 says where they are), nothing if it cannot be read."""
    text = read_file(path)
    if text is not None:
        return text
    try:
        with open(path, "rb") as stream:
            return stream.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


class _Progress:
    """Work-done progress of one pass, on a token the server creates (when the client
    can show progress and there are files to analyse)."""

    _tokens = 0

    def __init__(self, server: WorkspaceHost | None, token: str | None) -> None:
        self.server = server
        self.token = token

    @classmethod
    async def start(cls, server: WorkspaceHost, total: int) -> _Progress:
        if total == 0 or not server.shows_progress():
            return cls(None, None)
        cls._tokens += 1
        token = f"gradguard-workspace-{os.getpid()}-{cls._tokens}"
        try:
            await asyncio.wait_for(server.work_done_progress.create_async(token), 10.0)
        except Exception as error:  # refused or unanswered: check without progress
            logger.warning("window/workDoneProgress/create failed: %r", error)
            return cls(None, None)
        server.work_done_progress.begin(token, types.WorkDoneProgressBegin(
            title=PROGRESS_TITLE, message=f"0/{total} files", percentage=0))
        return cls(server, token)

    def report(self, done: int, total: int) -> None:
        if self.server is not None and self.token is not None:
            self.server.work_done_progress.report(self.token, types.WorkDoneProgressReport(
                message=f"{done}/{total} files", percentage=done * 100 // max(total, 1)))

    def end(self, total: int) -> None:
        if self.server is not None and self.token is not None:
            self.server.work_done_progress.end(self.token, types.WorkDoneProgressEnd(
                message=f"{total} files analysed"))
            self.server.work_done_progress.tokens.pop(self.token, None)
