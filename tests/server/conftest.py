"""A real ``python -m gradguard serve`` process per test, driven by pytest-lsp's client.

``Session`` (harness/lsp.py, shared with the benches) wraps the client with what the
tests say over and over: open a document, wait for the diagnostics of one version
(pushed or pulled, whichever the profile does), change it, ask for code actions, apply
a workspace edit to a text.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from harness.lsp import SERVER, TIMEOUT, Recorder, Session, initialize_params

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"

# Client profiles shipped with pytest-lsp: VS Code 1.65 is a push client (UTF-16, no
# position encodings offered); Neovim 0.11 pulls diagnostics and prefers UTF-8.
PUSH = "visual-studio-code"
PULL = "neovim@v0.11"
# For a behaviour that holds for both kinds of client: the fast tier (DEVELOPING.md) runs
# it with the push client; the pull client's own behaviours have tests of their own there.
BOTH_PROFILES = [PUSH, pytest.param(PULL, marks=pytest.mark.slow, id=PULL)]


class RecordingClient(LanguageClient):
    """pytest-lsp's client, keeping what the server sends on its own (the harness's
    ``Recorder``): every publishDiagnostics with its version, and the dynamic
    registrations the server asks for."""

    def __init__(self) -> None:
        super().__init__(converter_factory=default_converter)
        register_lsp_features(self, {method: handler for method, handler
                                     in DEFAULT_CLIENT_FEATURES.items()
                                     if method != types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS})
        self.recorder = Recorder()
        self.recorder.listen(self)
        self.published = self.recorder.published
        self.registrations = self.recorder.registrations
        self.arrived = self.recorder.arrived


def make_client() -> LanguageClient:
    return RecordingClient()


CONFIG = ClientServerConfig(server_command=SERVER, client_factory=make_client)


def capabilities(profile: str, **changes: Any) -> types.ClientCapabilities:
    caps = client_capabilities(profile)
    for name, value in changes.items():
        setattr(caps, name, value)
    return caps


async def start(client: RecordingClient, profile: str, root: Path,
                initialization_options: Any = None,
                caps: types.ClientCapabilities | None = None) -> Session:
    caps = caps or client_capabilities(profile)
    result = await client.initialize_session(
        initialize_params(caps, root, initialization_options))
    return Session.initialized(client, client.recorder, caps, result)


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
