"""The server's state between messages: open units, settings, and how results reach the client.

Diagnostics reach the client one way only, chosen from its capabilities at
``initialize``: pulled (``textDocument/diagnostic``) when it announces
``textDocument.diagnostic``, pushed (``textDocument/publishDiagnostics`` with the
version) otherwise. Doing both shows every finding twice. (One exception, for the
probe's own findings: see ``probe_pushed_apart``.)
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path

from gradguard import __version__
from gradguard.analysis.analyze import project_for
from gradguard.analysis.project import Project, read_file
from gradguard.server.diagnostics import PROBE_SOURCE
from gradguard.server.documents import Outcome, TextBuffer, TextUnit, Unit
from gradguard.server.lsp_protocol import GradGuardProtocol
from gradguard.server.notebooks import NotebookUnit
from gradguard.server.positions import Encoding, encoding_of
from gradguard.server.probe_jobs import ProbeJobs
from gradguard.server.scheduler import Scheduler
from gradguard.server.settings import Settings, SettingsResolver, client_section, parse_layer
from gradguard.server.uris import path_of
from gradguard.server.workspace_diagnostics import WorkspaceDiagnostics

logger = logging.getLogger(__name__)

PYTHON_SUFFIXES = (".py", ".pyi")


@dataclass
class ClientFeatures:
    """What the client said it can do, read once at ``initialize``."""

    pull_diagnostics: bool = False
    diagnostic_refresh: bool = False
    configuration: bool = False
    document_changes: bool = False
    watch_files: bool = False

    @classmethod
    def of(cls, capabilities: types.ClientCapabilities) -> ClientFeatures:
        text = capabilities.text_document
        workspace = capabilities.workspace
        return cls(
            pull_diagnostics=text is not None and text.diagnostic is not None,
            diagnostic_refresh=bool(workspace and workspace.diagnostics
                                    and workspace.diagnostics.refresh_support),
            configuration=bool(workspace and workspace.configuration),
            document_changes=bool(workspace and workspace.workspace_edit
                                  and workspace.workspace_edit.document_changes),
            watch_files=bool(workspace and workspace.did_change_watched_files
                             and workspace.did_change_watched_files.dynamic_registration),
        )


class GradGuardServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "gradguard", __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            notebook_document_sync=types.NotebookDocumentSyncOptions(
                notebook_selector=[types.NotebookDocumentFilterWithCells(
                    notebook="*", cells=[types.NotebookCellLanguage("python")])],
                save=False),
            protocol_cls=GradGuardProtocol,
        )
        self.units: dict[str, Unit] = {}
        self.cell_owner: dict[str, str] = {}
        self.resolver = SettingsResolver()
        self.features = ClientFeatures()
        self.scheduler = Scheduler(self._deliver, self._library_files_gone)
        self.project: Project | None = None
        # The revision of each unit's program its importers were last told of.
        self._told: dict[str, int] = {}
        self.probes = ProbeJobs(self)
        # The URIs each unit last published diagnostics for.
        self._shown: dict[str, set[str]] = {}
        self.workspace_reports = WorkspaceDiagnostics(self)

    @property
    def requests(self) -> GradGuardProtocol:
        assert isinstance(self.protocol, GradGuardProtocol)
        return self.protocol

    @property
    def encoding(self) -> Encoding:
        return encoding_of(self.workspace.position_encoding)

    # -- units -----------------------------------------------------------------------

    def unit_for(self, uri: str) -> Unit | None:
        """The unit a document belongs to: itself, or the notebook holding the cell."""
        if uri in self.units:
            return self.units[uri]
        owner = self.cell_owner.get(uri)
        return self.units.get(owner) if owner else None

    # -- what the probe jobs may ask of the server (``probe_jobs.ProbeHost``) ----------

    def settings_for(self, path: str | None) -> Settings:
        return self.resolver.resolve(path)

    def folder_of(self, path: str) -> str | None:
        return self.resolver.folder_of(path)

    def workspace_folders(self) -> list[str]:
        return list(self.resolver.folders)

    def on_cancel(self, msg_id: int | str, listener: Callable[[], None] | None) -> None:
        """Call ``listener`` when the client cancels request ``msg_id`` (None: stop)."""
        if listener is None:
            self.requests.cancel_listeners.pop(msg_id, None)
        else:
            self.requests.cancel_listeners[msg_id] = listener

    def shows_progress(self) -> bool:
        window = self.client_capabilities.window
        return window is not None and bool(window.work_done_progress)

    def pull_again(self) -> None:
        """Ask a client that can be asked to pull diagnostics again."""
        if self.features.pull_diagnostics and self.features.diagnostic_refresh:
            self.workspace_diagnostic_refresh(None)

    def reanalyse(self, unit: Unit) -> None:
        """Something the unit's diagnostics show besides its text changed: analyse it
        again (its text unchanged, the incremental analysis reuses what it had)."""
        unit.generation += 1
        self.scheduler.refresh(unit, self.encoding)

    def warn(self, message: str) -> None:
        self.window_show_message(types.ShowMessageParams(types.MessageType.Warning, message))

    def open_text(self, item: types.TextDocumentItem) -> None:
        if item.language_id != "python" and not item.uri.endswith(PYTHON_SUFFIXES):
            return
        path = path_of(item.uri)
        unit = TextUnit(item.uri, path, self.resolver.resolve(path),
                        text_buffer=TextBuffer(item.uri, item.text, item.version,
                                               item.language_id), project=self.project)
        unit.analysis = unit.fresh_analysis(unit.settings.incremental)
        unit.probe = self.probes.store.for_path(path)
        if path is not None:
            unit.revealed = self.workspace_reports.revealed_in(path)
        self._replace(item.uri, unit)
        self.show_problems()
        self.scheduler.edited(unit, self.encoding)
        self.workspace_reports.changed()  # its text may not be the one on disk

    def change_text(self, params: types.DidChangeTextDocumentParams) -> None:
        unit = self.units.get(params.text_document.uri)
        if not isinstance(unit, TextUnit):
            return
        unit.text_buffer.apply(params.content_changes, params.text_document.version,
                               self.encoding)
        self.scheduler.edited(unit, self.encoding)
        self.workspace_reports.changed()

    def open_notebook(self, params: types.DidOpenNotebookDocumentParams) -> None:
        uri = params.notebook_document.uri
        path = path_of(uri)
        unit = NotebookUnit(uri, path, self.resolver.resolve(path), project=self.project)
        unit.analysis = unit.fresh_analysis(unit.settings.incremental)
        unit.open(params)
        self._replace(uri, unit)
        for cell in unit.order:
            self.cell_owner[cell] = uri
        self.scheduler.edited(unit, self.encoding)

    def change_notebook(self, params: types.DidChangeNotebookDocumentParams) -> None:
        unit = self.units.get(params.notebook_document.uri)
        if not isinstance(unit, NotebookUnit):
            return
        before = set(unit.order)
        unit.change(params, self.encoding)
        # Cells that left the notebook lose their diagnostics.
        for gone in before - set(unit.order):
            self.cell_owner.pop(gone, None)
            self._clear(gone)
        for cell in unit.order:
            self.cell_owner[cell] = unit.key
        self.scheduler.edited(unit, self.encoding)

    def close(self, uri: str) -> None:
        unit = self.units.pop(uri, None)
        if unit is None:
            return
        self.scheduler.forget(unit)
        if unit.path is not None:
            self.file_changed(unit.path)  # its importers read the file on disk again
        self._shown.pop(uri, None)
        uris = unit.order if isinstance(unit, NotebookUnit) else [uri]
        for target in uris:
            self.cell_owner.pop(target, None)
            self._clear(target)

    # -- the workspace's files --------------------------------------------------------

    def make_project(self) -> None:
        """The workspace's files, as open documents have them or else as on disk."""
        self.project = project_for(list(self.resolver.folders), read=self._read)
        for unit in self.units.values():
            unit.project = self.project
            unit.analysis = unit.fresh_analysis(unit.settings.incremental)

    def _read(self, path: str) -> str | None:
        """Runs on the analysis thread: an open document's text, else the file's."""
        wanted = os.path.abspath(path)
        for unit in list(self.units.values()):
            if isinstance(unit, TextUnit) and unit.path is not None and \
                    os.path.abspath(unit.path) == wanted:
                return unit.program()
        return read_file(path)

    def file_changed(self, path: str, created_or_deleted: bool = False) -> None:
        """A file changed outside the analysis of its own document (saved by another
        program, closed in the editor): read it again, and re-analyse what read it."""
        project = self.project
        if project is not None:
            wanted = os.path.abspath(path)
            self.scheduler.on_analysis_thread(
                lambda: project.forget(wanted, created_or_deleted))
        if created_or_deleted:
            for unit in list(self.units.values()):  # any import may lead elsewhere now
                unit.generation += 1
                self.scheduler.refresh(unit, self.encoding)
        else:
            self.dependents_changed(path)
        self.workspace_reports.changed(files=created_or_deleted)

    def _library_files_gone(self, paths: list[str]) -> None:
        """An installed package changed under the session: the documents that read its
        files are analysed again against its new version."""
        for path in paths:
            self.dependents_changed(path)

    def dependents_changed(self, path: str) -> None:
        """Re-analyse the open documents whose last analysis read ``path``."""
        wanted = os.path.abspath(path)
        for unit in list(self.units.values()):
            if wanted in unit.analysis.read_paths:
                unit.generation += 1
                self.scheduler.refresh(unit, self.encoding)

    def _replace(self, key: str, unit: Unit) -> None:
        old = self.units.get(key)
        if old is not None:
            self.scheduler.forget(old)
        self.units[key] = unit

    # -- settings --------------------------------------------------------------------

    def set_folders(self, folders: list[types.WorkspaceFolder], root_uri: str | None) -> None:
        paths = [p for f in folders if (p := path_of(f.uri))]
        if not paths and root_uri and (root := path_of(root_uri)):
            paths = [root]
        self.resolver.folders = [os.path.normpath(p) for p in paths]
        self.make_project()

    def set_initialization_options(self, options: object) -> None:
        root = self.resolver.folders[0] if self.resolver.folders else None
        section = client_section(options)
        self.resolver.initialization = parse_layer(section, root, "initializationOptions",
                                                   self.resolver.problems)
        self.probes.set_trusted(isinstance(section, dict) and section.get("trusted") is True)

    async def pull_configuration(self) -> None:
        """Ask the client for the ``gradguard`` settings, globally and per folder."""
        folders = list(self.resolver.folders)
        items = [types.ConfigurationItem(section="gradguard")]
        items += [types.ConfigurationItem(scope_uri=_file_uri(f), section="gradguard")
                  for f in folders]
        try:
            answers = await asyncio.wait_for(
                self.workspace_configuration_async(types.ConfigurationParams(items)), 10.0)
        except Exception as error:  # no answer, or an error: keep what we have
            logger.warning("workspace/configuration failed: %r", error)
            return
        answers = list(answers or [])
        if not answers:
            return
        self.resolver.client_global = parse_layer(answers[0], folders[0] if folders else None,
                                                  "client settings", self.resolver.problems)
        self.resolver.client_folders = {
            folder: parse_layer(answer, folder, f"client settings for {folder}",
                                self.resolver.problems)
            for folder, answer in zip(folders, answers[1:], strict=False)
            if answer is not None
        }

    def set_pushed_configuration(self, settings: object) -> None:
        root = self.resolver.folders[0] if self.resolver.folders else None
        self.resolver.client_global = parse_layer(client_section(settings), root,
                                                  "client settings", self.resolver.problems)

    def settings_changed(self) -> None:
        """Re-resolve every unit's settings; re-analyse and re-publish those that changed."""
        changed = False
        for unit in list(self.units.values()):
            settings = self.resolver.resolve(unit.path)
            if settings != unit.settings:
                unit.settings = settings
                unit.generation += 1
                self.scheduler.refresh(unit, self.encoding)
                changed = True
        self.show_problems()
        self.workspace_reports.changed(files=True)  # exclude or include may have changed
        if changed and self.features.pull_diagnostics and self.features.diagnostic_refresh:
            self.workspace_diagnostic_refresh(None)

    def probe_marks_changed(self, paths: set[str]) -> None:
        """The probe found something new about these files: re-publish the open ones."""
        wanted = {os.path.abspath(p) for p in paths}
        changed = False
        for unit in list(self.units.values()):
            if isinstance(unit, TextUnit) and unit.path is not None and \
                    os.path.abspath(unit.path) in wanted:
                unit.probe = self.probes.store.for_path(unit.path)
                unit.generation += 1
                self.scheduler.refresh(unit, self.encoding)
                changed = True
        if changed and self.features.pull_diagnostics and self.features.diagnostic_refresh:
            self.workspace_diagnostic_refresh(None)

    def show_problems(self) -> None:
        problems = self.resolver.take_problems()
        if problems:
            self.window_show_message(types.ShowMessageParams(
                types.MessageType.Warning,
                "GradGuard settings: " + "; ".join(dict.fromkeys(problems))))

    # -- delivery --------------------------------------------------------------------

    @property
    def probe_pushed_apart(self) -> bool:
        """Whether probe-only diagnostics are pushed, apart from the pulled ones.

        A pulling client that cannot be asked to pull again (Neovim 0.11 has no
        ``workspace/diagnostic/refresh``) pulls only when the user edits: what a probe
        finds a minute later would wait for a keystroke. Such a client gets the probe's
        own findings pushed (it shows pushed and pulled diagnostics side by side) and
        pulls the rest, so nothing is shown twice."""
        return self.features.pull_diagnostics and not self.features.diagnostic_refresh

    def pulled(self, diagnostics: list[types.Diagnostic]) -> list[types.Diagnostic]:
        """What a pull answers, of a target's diagnostics."""
        if not self.probe_pushed_apart:
            return diagnostics
        return [d for d in diagnostics if d.source != PROBE_SOURCE]

    def _deliver(self, unit: Unit, outcome: Outcome) -> None:
        revision = unit.analysis.revision
        if unit.path is not None and unit.project is not None and \
                self._told.get(unit.key) != revision:
            self._told[unit.key] = revision
            self.dependents_changed(unit.path)  # what imports it reads its new text
        self._publish(unit, outcome)

    def _publish(self, unit: Unit, outcome: Outcome) -> None:
        if self.features.pull_diagnostics:
            # The client asks; ``Unit.current`` answers it.
            if self.probe_pushed_apart:
                self._push_probe_findings(unit, outcome)
            return
        for uri, diagnostics in outcome.diagnostics.items():
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
                uri, diagnostics, version=outcome.versions.get(uri)))
        # A cell that stopped being a Python code cell keeps no diagnostics.
        for uri in self._shown.get(unit.key, set()) - set(outcome.diagnostics):
            self._clear(uri)
        self._shown[unit.key] = set(outcome.diagnostics)

    def _push_probe_findings(self, unit: Unit, outcome: Outcome) -> None:
        shown = self._shown.get(unit.key, set())
        now: set[str] = set()
        for uri, diagnostics in outcome.diagnostics.items():
            probed = [d for d in diagnostics if d.source == PROBE_SOURCE]
            if probed or uri in shown:
                self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
                    uri, probed, version=outcome.versions.get(uri)))
            if probed:
                now.add(uri)
        for uri in shown - set(outcome.diagnostics):
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, []))
        self._shown[unit.key] = now

    def _clear(self, uri: str) -> None:
        if not self.features.pull_diagnostics or self.probe_pushed_apart:
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, []))


def _file_uri(path: str) -> str:
    return from_fs_path(path) or path
