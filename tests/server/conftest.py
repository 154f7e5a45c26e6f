"""A real ``python -m gradguard serve`` process per test, driven by pytest-lsp's client.

``Session`` wraps the client with what the tests say over and over: open a document,
wait for the diagnostics of one version (pushed or pulled, whichever the profile does),
change it, ask for code actions, apply a workspace edit to a text.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
SERVER = [sys.executable, "-m", "gradguard", "serve"]
TIMEOUT = 20.0

# Client profiles shipped with pytest-lsp: VS Code 1.65 is a push client (UTF-16, no
# position encodings offered); Neovim 0.11 pulls diagnostics and prefers UTF-8.
PUSH = "visual-studio-code"
PULL = "neovim@v0.11"
# For a behaviour that holds for both kinds of client: the fast tier (DEVELOPING.md) runs
# it with the push client; the pull client's own behaviours have tests of their own there.
BOTH_PROFILES = [PUSH, pytest.param(PULL, marks=pytest.mark.slow, id=PULL)]


class RecordingClient(LanguageClient):
    """pytest-lsp's client, keeping every publishDiagnostics with its version, and
    answering the dynamic registrations the server asks for."""

    def __init__(self) -> None:
        super().__init__(converter_factory=default_converter)
        self.published: list[types.PublishDiagnosticsParams] = []
        self.registrations: list[types.Registration] = []
        self.arrived = asyncio.Event()
        register_lsp_features(self, {method: handler for method, handler
                                     in DEFAULT_CLIENT_FEATURES.items()
                                     if method != types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS})

        @self.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params: types.PublishDiagnosticsParams) -> None:
            self.published.append(params)
            self.arrived.set()

        @self.feature(types.CLIENT_REGISTER_CAPABILITY)
        def register_capability(params: types.RegistrationParams) -> None:
            self.registrations.extend(params.registrations)


def make_client() -> LanguageClient:
    return RecordingClient()


CONFIG = ClientServerConfig(server_command=SERVER, client_factory=make_client)


class Session:
    def __init__(self, client: RecordingClient, pull: bool, encoding: str) -> None:
        self.client = client
        self.pull = pull
        self.encoding = encoding
        self.versions: dict[str, int] = {}
        self.texts: dict[str, str] = {}
        self.server_capabilities = types.ServerCapabilities()

    def pushed(self, uri: str) -> list[types.PublishDiagnosticsParams]:
        return [p for p in self.client.published if p.uri == uri]

    def open(self, path: Path, text: str | None = None) -> str:
        uri = path.as_uri()
        text = path.read_text("utf-8") if text is None else text
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

    async def pushed_for(self, uri: str, version: int | None,
                         timeout: float = TIMEOUT) -> types.PublishDiagnosticsParams:
        """The first diagnostics pushed for ``uri`` at ``version`` (None: any, the latest)."""
        async def arrived() -> types.PublishDiagnosticsParams:
            while True:
                for params in reversed(self.pushed(uri)):
                    if version is None or params.version == version:
                        return params
                self.client.arrived.clear()
                await self.client.arrived.wait()

        return await asyncio.wait_for(arrived(), timeout)

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


def capabilities(profile: str, **changes: Any) -> types.ClientCapabilities:
    caps = client_capabilities(profile)
    for name, value in changes.items():
        setattr(caps, name, value)
    return caps


async def start(client: RecordingClient, profile: str, root: Path,
                initialization_options: Any = None,
                caps: types.ClientCapabilities | None = None) -> Session:
    caps = caps or client_capabilities(profile)
    result = await client.initialize_session(types.InitializeParams(
        capabilities=caps,
        root_uri=root.as_uri(),
        workspace_folders=[types.WorkspaceFolder(root.as_uri(), root.name)],
        initialization_options=initialization_options,
    ))
    pull = caps.text_document is not None and caps.text_document.diagnostic is not None
    session = Session(client, pull, str(result.capabilities.position_encoding or "utf-16"))
    session.server_capabilities = result.capabilities
    return session


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A workspace folder holding copies of the two seed examples."""
    for name in ("unet3plus_seed.py", "yolov5_loss_seed.py"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    return tmp_path


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: RecordingClient) -> Any:
    yield
    await end_session(lsp_client)


async def end_session(lsp_client: LanguageClient) -> None:
    """The teardown every server fixture needs: pytest-lsp sends shutdown and exit only
    to a server it initialized, then waits for the process to end, so a test that failed
    before ``start`` (or a server that does not answer) would hang the whole run there.
    End it either way."""
    try:
        await asyncio.wait_for(lsp_client.shutdown_session(), TIMEOUT)
    except Exception:  # no answer: the process is killed below
        pass
    process = lsp_client._server
    if process is not None and process.returncode is None:
        process.kill()


def lines_of(diagnostics: Sequence[types.Diagnostic], code: str | None = None) -> list[int]:
    """1-based lines, as a user reads them, of the diagnostics (of one code)."""
    return sorted(d.range.start.line + 1 for d in diagnostics if code in (None, d.code))
