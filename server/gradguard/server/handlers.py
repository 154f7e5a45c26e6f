"""LSP message handlers: each turns one message into a call on the server's state.

Text sync handlers are plain functions: pygls runs them on the event loop in the order
the messages arrive, so an edit is applied before anything that follows it is read.
Handlers that wait (for the client, or for an analysis) are coroutines.
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from gradguard.probe.config import ConfigError, load_config
from gradguard.server import probe_jobs
from gradguard.server.actions import FIX_ALL, KINDS, ActionBuilder, code_actions, wanted
from gradguard.server.documents import TextUnit
from gradguard.server.hover import answer, hover_query, takes_markdown
from gradguard.server.language_server import ClientFeatures, GradGuardServer
from gradguard.server.probe_targets import probe_lenses
from gradguard.server.settings import WORKSPACE
from gradguard.server.uris import path_of

logger = logging.getLogger(__name__)

# How long fix-all waits for the analysis of a version typed a moment ago.
FIX_ALL_WAIT_SECONDS = 5.0
# How long the server waits for the client to answer one of its requests.
CLIENT_ANSWER_SECONDS = 10.0
# The client says whether the workspace is trusted (the probe runs only if it is).
TRUST_CHANGED = "gradguard/trustChanged"


def register(server: GradGuardServer) -> None:
    diagnostic_options = types.DiagnosticOptions(
        identifier="gradguard", inter_file_dependencies=False, workspace_diagnostics=False)

    @server.feature(types.INITIALIZE)
    def initialize(ls: GradGuardServer, params: types.InitializeParams) -> None:
        ls.features = ClientFeatures.of(params.capabilities)
        ls.set_folders(list(params.workspace_folders or []), params.root_uri)
        ls.set_initialization_options(params.initialization_options)
        # A notebook's cells are one program: an edit in one cell can change another
        # cell's diagnostics, so a pulling client must pull the other cells again.
        # (Capabilities are built after this handler returns.)
        diagnostic_options.inter_file_dependencies = \
            params.capabilities.notebook_document is not None
        # Whether the server answers workspace/diagnostic is said now, once: the mode
        # comes from initializationOptions (a later change takes a restart).
        folders = ls.workspace_folders()
        mode = ls.settings_for(folders[0] if folders else None).diagnostic_mode
        if mode == WORKSPACE:
            ls.workspace_reports.enabled = True
            server.feature(types.WORKSPACE_DIAGNOSTIC)(workspace_diagnostic)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: GradGuardServer, params: types.InitializedParams) -> None:
        if ls.features.configuration:
            await ls.pull_configuration()
            ls.settings_changed()
        if ls.features.watch_files:
            # pyproject.toml edited outside the editor still changes the settings, and a
            # module saved by another program changes what the files importing it do.
            watchers = [types.FileSystemWatcher(glob_pattern="**/pyproject.toml"),
                        types.FileSystemWatcher(glob_pattern="**/*.py")]
            try:
                await asyncio.wait_for(ls.client_register_capability_async(
                    types.RegistrationParams([types.Registration(
                        "gradguard-pyproject", types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                        types.DidChangeWatchedFilesRegistrationOptions(watchers))])),
                    CLIENT_ANSWER_SECONDS)
            except Exception as error:  # refused, or no answer: settings still work
                logger.warning("could not watch pyproject.toml files: %r", error)
        ls.show_problems()  # bad initializationOptions are said at once
        ls.workspace_reports.changed()  # the first pass, in the background

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: GradGuardServer, params: types.DidOpenTextDocumentParams) -> None:
        if ls.cell_owner.get(params.text_document.uri) is None:
            ls.open_text(params.text_document)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: GradGuardServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.change_text(params)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: GradGuardServer, params: types.DidSaveTextDocumentParams) -> None:
        path = path_of(params.text_document.uri)
        if path is not None and os.path.basename(path) == "pyproject.toml":
            ls.settings_changed()
        # A file other programs read is now on disk (perhaps for the first time).
        ls.workspace_reports.changed(files=True)
        ls.probes.on_save(params.text_document.uri)

    @server.command(probe_jobs.COMMAND)
    async def probe(ls: GradGuardServer, *arguments: Any) -> dict[str, Any]:
        msg_id, params = ls.requests.current_command()
        token = params.work_done_token if params is not None else None
        try:
            return await ls.probes.command(list(arguments), token, msg_id)
        except probe_jobs.BadArguments as error:
            raise JsonRpcInvalidParams(str(error)) from None

    @server.feature(TRUST_CHANGED)
    def trust_changed(ls: GradGuardServer, params: Any) -> None:
        trusted = params.get("trusted") if isinstance(params, dict) else \
            getattr(params, "trusted", None)
        ls.probes.set_trusted(trusted is True)

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))
    def code_lens(ls: GradGuardServer, params: types.CodeLensParams) -> list[types.CodeLens]:
        uri = params.text_document.uri
        unit = ls.units.get(uri)
        if not isinstance(unit, TextUnit) or unit.path is None or \
                not unit.path.endswith(".py"):
            return []
        buffer = unit.text_buffer
        try:
            config = load_config(os.path.dirname(unit.path))
        except ConfigError:
            config = None  # said when the probe is asked to run
        lenses = []
        for lens in probe_lenses(buffer.text, unit.path, config):
            if lens.line >= buffer.index.line_count:
                continue
            range_ = buffer.index.line_range(lens.line, ls.encoding)
            lenses.append(types.CodeLens(range_, types.Command(
                title=lens.title, command=probe_jobs.COMMAND, arguments=[uri, lens.name])))
        return lenses

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: GradGuardServer, params: types.HoverParams) -> types.Hover | None:
        uri = params.text_document.uri
        unit = ls.unit_for(uri)
        if unit is None:
            return None
        query = hover_query(unit, uri, params.position, ls.encoding,
                            takes_markdown(ls.client_capabilities))
        # Parsing a long file takes a moment: off the event loop, as edits keep arriving.
        return None if query is None else await asyncio.to_thread(answer, query)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: GradGuardServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.close(params.text_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def notebook_open(ls: GradGuardServer, params: types.DidOpenNotebookDocumentParams) -> None:
        ls.open_notebook(params)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def notebook_change(ls: GradGuardServer,
                        params: types.DidChangeNotebookDocumentParams) -> None:
        ls.change_notebook(params)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_close(ls: GradGuardServer,
                       params: types.DidCloseNotebookDocumentParams) -> None:
        ls.close(params.notebook_document.uri)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def configuration_changed(ls: GradGuardServer,
                                    params: types.DidChangeConfigurationParams) -> None:
        if ls.features.configuration:
            # The settings in the notification may be partial or absent: ask for them.
            await ls.pull_configuration()
        else:
            ls.set_pushed_configuration(params.settings)
        ls.settings_changed()

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched_files_changed(ls: GradGuardServer,
                              params: types.DidChangeWatchedFilesParams) -> None:
        settings = False
        for change in params.changes:
            path = path_of(change.uri)
            if path is None:
                continue
            if os.path.basename(path) == "pyproject.toml":
                settings = True
            elif path.endswith(".py") and ls.unit_for(change.uri) is None:
                ls.file_changed(path, change.type != types.FileChangeType.Changed)
        if settings or not params.changes:
            ls.resolver.forget_pyprojects()
            ls.settings_changed()

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def folders_changed(ls: GradGuardServer,
                              params: types.DidChangeWorkspaceFoldersParams) -> None:
        ls.set_folders(list(ls.workspace.folders.values()), None)
        if ls.features.configuration:
            await ls.pull_configuration()
        ls.settings_changed()

    @server.feature(types.TEXT_DOCUMENT_DIAGNOSTIC, diagnostic_options)
    async def pull_diagnostics(ls: GradGuardServer,
                               params: types.DocumentDiagnosticParams
                               ) -> types.DocumentDiagnosticReport:
        uri = params.text_document.uri
        unit = ls.unit_for(uri)
        outcome = await unit.current() if unit is not None else None
        if outcome is None or uri not in outcome.diagnostics:
            return types.RelatedFullDocumentDiagnosticReport(items=[])
        result_id = outcome.result_ids[uri]
        if params.previous_result_id == result_id:
            return types.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
        return types.RelatedFullDocumentDiagnosticReport(
            items=ls.pulled(outcome.diagnostics[uri]), result_id=result_id)

    async def workspace_diagnostic(ls: GradGuardServer,
                                   params: types.WorkspaceDiagnosticParams
                                   ) -> types.WorkspaceDiagnosticReport:
        return await ls.workspace_reports.answer(params)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=KINDS, resolve_provider=False))
    async def code_action(ls: GradGuardServer,
                          params: types.CodeActionParams) -> list[types.CodeAction] | None:
        uri = params.text_document.uri
        unit = ls.unit_for(uri)
        if unit is None or unit.buffer(uri) is None:
            return None
        outcome = unit.latest if unit.is_current(unit.latest) else None
        if outcome is None and wanted(FIX_ALL, params.context.only) and \
                params.context.only is not None:
            # Fix-all on save is asked for right after the last keystroke: wait for it.
            try:
                outcome = await asyncio.wait_for(unit.current(), FIX_ALL_WAIT_SECONDS)
            except asyncio.TimeoutError:
                return None
        builder = ActionBuilder(unit, uri, ls.encoding, ls.features.document_changes)
        # Fix-all runs the fix engine (analyses of the whole text): off the event loop.
        return await asyncio.to_thread(code_actions, builder, params, outcome) or None

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: GradGuardServer, params: None) -> None:
        ls.scheduler.shutdown()
        ls.workspace_reports.stop()
        ls.probes.stop_all()
