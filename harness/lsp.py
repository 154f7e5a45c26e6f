"""A language client's session with a real ``python -m gradguard serve``, over pygls.

``Recorder`` keeps what the server sends on its own (diagnostics, with when each came,
and dynamic registrations); ``Session`` says what the tests and benches say over and
over: open a document, change it, wait for the diagnostics of one version (pushed or
pulled, whichever the client's capabilities chose), ask for code actions, apply a
workspace edit to a text. The client itself is pygls's, or pytest-lsp's in the tests.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient

SERVER = [sys.executable, "-m", "gradguard", "serve"]
TIMEOUT = 20.0


class Recorder:
    """Every ``publishDiagnostics`` a client receives, with its arrival time, and every
    capability the server registers."""

    def __init__(self) -> None:
        self.published: list[types.PublishDiagnosticsParams] = []
        self.received_at: list[float] = []  # time.perf_counter(), one per published
        self.registrations: list[types.Registration] = []
        self.arrived = asyncio.Event()

    def listen(self, client: LanguageClient) -> None:
        # pygls's client decorators are untyped.
        @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)  # type: ignore[untyped-decorator]
        def published(params: types.PublishDiagnosticsParams) -> None:
            self.received_at.append(time.perf_counter())
            self.published.append(params)
            self.arrived.set()

        @client.feature(types.CLIENT_REGISTER_CAPABILITY)  # type: ignore[untyped-decorator]
        def register_capability(params: types.RegistrationParams) -> None:
            self.registrations.extend(params.registrations)


class Session:
    def __init__(self, client: LanguageClient, recorder: Recorder, pull: bool,
                 encoding: str) -> None:
        self.client = client
        self.recorder = recorder
        self.pull = pull
        self.encoding = encoding
        self.versions: dict[str, int] = {}
        self.texts: dict[str, str] = {}
        self.server_capabilities = types.ServerCapabilities()

    @classmethod
    def initialized(cls, client: LanguageClient, recorder: Recorder,
                    caps: types.ClientCapabilities, result: types.InitializeResult
                    ) -> Session:
        """The session once ``initialize`` has been answered with ``result``."""
        pull = caps.text_document is not None and caps.text_document.diagnostic is not None
        session = cls(client, recorder, pull,
                      str(result.capabilities.position_encoding or "utf-16"))
        session.server_capabilities = result.capabilities
        return session

    def pushed(self, uri: str) -> list[types.PublishDiagnosticsParams]:
        return [p for p in self.recorder.published if p.uri == uri]

    def open(self, path: Path | str, text: str | None = None) -> str:
        """Opens a file (its text read unless given) or a URI (text given) at version 1."""
        uri = path if isinstance(path, str) else path.as_uri()
        if text is None:
            assert isinstance(path, Path)
            text = path.read_text("utf-8")
        self.versions[uri] = 1
        self.texts[uri] = text
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri, "python", 1, text)))
        return uri

    def change(self, uri: str, *changes: types.TextDocumentContentChangeEvent) -> int:
        self.versions[uri] += 1
        document = types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri])
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            document, list(changes)))
        return self.versions[uri]

    def replace_all(self, uri: str, text: str) -> int:
        self.texts[uri] = text
        return self.change(uri, types.TextDocumentContentChangeWholeDocument(text))

    def close(self, uri: str) -> None:
        self.client.text_document_did_close(types.DidCloseTextDocumentParams(
            types.TextDocumentIdentifier(uri)))

    async def arrival(self, uri: str, version: int | None, timeout: float = TIMEOUT
                      ) -> tuple[float, types.PublishDiagnosticsParams]:
        """When the diagnostics pushed for ``uri`` at ``version`` (None: any, the latest)
        came, and they."""
        recorder = self.recorder

        async def arrived() -> tuple[float, types.PublishDiagnosticsParams]:
            while True:
                for index in range(len(recorder.published) - 1, -1, -1):
                    params = recorder.published[index]
                    if params.uri == uri and version in (None, params.version):
                        return recorder.received_at[index], params
                recorder.arrived.clear()
                await recorder.arrived.wait()

        return await asyncio.wait_for(arrived(), timeout)

    async def pushed_for(self, uri: str, version: int | None,
                         timeout: float = TIMEOUT) -> types.PublishDiagnosticsParams:
        """The diagnostics pushed for ``uri`` at ``version`` (None: any, the latest)."""
        return (await self.arrival(uri, version, timeout))[1]

    async def diagnostics(self, uri: str, version: int | None = None) -> list[types.Diagnostic]:
        """The diagnostics of ``uri`` at its current version (or ``version``)."""
        version = self.versions[uri] if version is None else version
        if not self.pull:
            return list((await self.pushed_for(uri, version)).diagnostics)
        report = await asyncio.wait_for(self.client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(types.TextDocumentIdentifier(uri))), TIMEOUT)
        assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
        return list(report.items)

    async def code_actions(self, uri: str, diagnostics: Sequence[types.Diagnostic],
                           only: list[str] | None = None,
                           range_: types.Range | None = None) -> list[types.CodeAction]:
        if range_ is None:
            range_ = diagnostics[0].range if diagnostics else types.Range(
                types.Position(0, 0), types.Position(0, 0))
        result = await asyncio.wait_for(self.client.text_document_code_action_async(
            types.CodeActionParams(types.TextDocumentIdentifier(uri), range_,
                                   types.CodeActionContext(list(diagnostics), only=only))),
            TIMEOUT)
        return [a for a in result or [] if isinstance(a, types.CodeAction)]

    async def apply(self, uri: str, edit: types.WorkspaceEdit) -> int:
        """Apply a workspace edit the way an editor does, and send it back as a change."""
        assert edit.document_changes, "edits are versioned documentChanges"
        (change,) = edit.document_changes
        assert isinstance(change, types.TextDocumentEdit)
        assert change.text_document.uri == uri
        assert change.text_document.version == self.versions[uri]
        text = apply_edits(self.texts[uri], [e for e in change.edits
                                             if isinstance(e, types.TextEdit)], self.encoding)
        return self.replace_all(uri, text)


def apply_edits(text: str, edits: Sequence[types.TextEdit], encoding: str) -> str:
    """Apply LSP text edits (ranges in ``encoding`` units, all relative to ``text``)."""
    from gradguard.server.positions import LineIndex, encoding_of

    index = LineIndex(text)
    spans = sorted(((*index.offsets(e.range, encoding_of(encoding)), e.new_text)
                    for e in edits), reverse=True)
    for start, end, new_text in spans:
        text = text[:start] + new_text + text[end:]
    return text


def initialize_params(caps: types.ClientCapabilities, root: Path | None = None,
                      options: Any = None) -> types.InitializeParams:
    return types.InitializeParams(
        capabilities=caps,
        root_uri=root.as_uri() if root else None,
        workspace_folders=[types.WorkspaceFolder(root.as_uri(), root.name)] if root else None,
        initialization_options=options,
    )


async def serve(client: LanguageClient, caps: types.ClientCapabilities,
                root: Path | None = None, options: Any = None,
                recorder: Recorder | None = None) -> Session:
    """Starts ``gradguard serve`` (in ``root``, if given) under a plain pygls client and
    initializes the session: the benches' way (the tests' client is pytest-lsp's)."""
    recorder = recorder or Recorder()
    recorder.listen(client)
    await client.start_io(*SERVER, cwd=str(root) if root else None)
    params = initialize_params(caps, root, options)
    result = await client.initialize_async(params)
    client.initialized(types.InitializedParams())
    return Session.initialized(client, recorder, caps, result)


async def stop(client: LanguageClient) -> None:
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()  # type: ignore[no-untyped-call]
