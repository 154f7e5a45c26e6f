"""``gradguard serve --tcp``: no code runs for a client that has not proven who it is.

A real ``gradguard serve --tcp 127.0.0.1:0`` process per test, reached over real
loopback sockets: strangers speak raw JSON-RPC (as an attacker would, every message at
once), the owner of the token speaks through pytest-lsp's client. Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import os
import re
import secrets
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.server.conftest import PUSH, RecordingClient, Session, start
from tests.server.test_stdio import frame, parse_frames

# The TCP transport and its token: the language server's behaviour is the stdio tests'.
pytestmark = pytest.mark.slow

TOKEN = secrets.token_urlsafe(32)
START_SECONDS = 60.0  # the server's imports, on a loaded two-core machine
PROBE_SECONDS = 180.0  # a cold torch import, then the run

# The reproduction: a file that leaves a mark when it is imported.
LEAVES_A_MARK = '''import pathlib

pathlib.Path(__file__).with_name("{mark}").write_text("imported")
'''


class TcpServer:
    """A ``gradguard serve --tcp`` process, its port and what it said on stderr."""

    def __init__(self, folder: Path, *arguments: str, token: str | None = TOKEN,
                 address: str = "127.0.0.1:0") -> None:
        environment = {k: v for k, v in os.environ.items() if k != "GRADGUARD_TOKEN"}
        if token is not None:
            environment["GRADGUARD_TOKEN"] = token
        self.log = folder / f"server-{secrets.token_hex(4)}.log"
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "gradguard", "serve", "--tcp", address, *arguments],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
                env=environment)
        self.port = 0

    def stderr(self) -> str:
        return self.log.read_text("utf-8", errors="replace")

    def listening(self) -> TcpServer:
        """Wait until it says where it listens; fail if it exits first."""
        deadline = time.monotonic() + START_SECONDS
        while (found := re.search(r"listening on 127\.0\.0\.1:(\d+)", self.stderr())) is None:
            assert self.process.poll() is None, f"the server exited: {self.stderr()}"
            assert time.monotonic() < deadline, "the server never said where it listens"
            time.sleep(0.05)
        self.port = int(found[1])
        return self

    def exit_status(self, timeout: float = 30.0) -> int:
        return self.process.wait(timeout=timeout)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    return folder


@pytest.fixture
def server(tmp_path: Path) -> Iterator[TcpServer]:
    running = TcpServer(tmp_path).listening()
    yield running
    running.stop()


def initialize(root: Path, options: Any = None, msg_id: int = 1) -> dict[str, Any]:
    params: dict[str, Any] = {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}
    if options is not None:
        params["initializationOptions"] = options
    return {"jsonrpc": "2.0", "id": msg_id, "method": "initialize", "params": params}


async def stranger(port: int, *messages: dict[str, Any], raw: bytes = b""
                   ) -> list[dict[str, Any]]:
    """Connect, send everything at once, and read all the server says until it closes."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(b"".join(frame(m) for m in messages) + raw)
        await writer.drain()
        stream = await asyncio.wait_for(reader.read(), 10.0)  # to EOF: the server closed
    finally:
        writer.close()
    return parse_frames(stream)


async def owner(port: int, root: Path, **options: Any) -> tuple[RecordingClient, Session]:
    """The client holding the token, connected and initialized."""
    client = RecordingClient()
    await client.start_tcp("127.0.0.1", port)
    session = await asyncio.wait_for(start(client, PUSH, root, {"token": TOKEN, **options}),
                                     30.0)
    return client, session


async def leave(client: RecordingClient) -> None:
    await asyncio.wait_for(client.shutdown_session(), 30.0)
    await asyncio.wait_for(client.stop(), 30.0)


async def probe(session: Session, uri: str) -> Any:
    return await asyncio.wait_for(session.client.protocol.send_request_async(
        types.WORKSPACE_EXECUTE_COMMAND, types.ExecuteCommandParams("gradguard.probe", [uri])),
        PROBE_SECONDS)


def mark_file(folder: Path, name: str, mark: str) -> Path:
    path = folder / name
    path.write_text(LEAVES_A_MARK.format(mark=mark), "utf-8")
    return path


@pytest.mark.asyncio
async def test_the_reproduction_from_a_client_without_the_token_runs_nothing(
        server: TcpServer, workspace: Path) -> None:
    target = mark_file(workspace, "x.py", "PWNED")

    answers = await stranger(
        server.port,
        initialize(workspace),
        {"jsonrpc": "2.0", "method": "gradguard/trustChanged", "params": {"trusted": True}},
        {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand",
         "params": {"command": "gradguard.probe", "arguments": [target.as_uri()]}})

    (refused,) = answers  # the initialize's error, then the connection closed
    assert refused["id"] == 1 and "result" not in refused
    assert "initializationOptions.token" in refused["error"]["message"]
    # The owner's probe of a file like it, asked for later, runs to its end: had the
    # stranger's probe started, it would have written its mark by then.
    client, session = await owner(server.port, workspace, trusted=True)
    ran = mark_file(workspace, "y.py", "RAN")
    await probe(session, ran.as_uri())
    assert (workspace / "RAN").exists()
    assert not (workspace / "PWNED").exists()
    await leave(client)


@pytest.mark.asyncio
async def test_clients_without_the_right_token_get_one_error_and_the_server_serves_the_next(
        server: TcpServer, workspace: Path) -> None:
    attempts = {
        "no options": [initialize(workspace)],
        "trusted, no token": [initialize(workspace, {"trusted": True})],
        "a wrong token": [initialize(workspace, {"token": secrets.token_urlsafe(32)})],
        "the token but one character": [initialize(workspace, {"token": TOKEN[:-1]})],
        "a token that is no string": [initialize(workspace, {"token": 12345})],
        "anything before initialize": [
            {"jsonrpc": "2.0", "id": 7, "method": "workspace/executeCommand",
             "params": {"command": "gradguard.probe", "arguments": []}},
            initialize(workspace, {"token": TOKEN})],
        "a notification first": [
            {"jsonrpc": "2.0", "method": "gradguard/trustChanged", "params": {"trusted": True}},
            initialize(workspace, {"token": TOKEN})],
    }
    for attempt, messages in attempts.items():
        answers = await stranger(server.port, *messages)

        assert len(answers) == 1, attempt
        assert "error" in answers[0] and "result" not in answers[0], attempt
        assert answers[0]["id"] == messages[0].get("id"), attempt
    posted = frame(initialize(workspace, {"token": TOKEN}))  # as a web page would post it
    for garbage in [b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n",
                    b"POST / HTTP/1.1\r\n" + posted,
                    b"Content-Length: 9\r\n\r\nnot json!",
                    b"Content-Length: 999999999999\r\n\r\n"]:
        (answer,) = await stranger(server.port, raw=garbage)

        assert answer["id"] is None and answer["error"]["code"] == -32700, garbage

    client, session = await owner(server.port, workspace)
    assert session.server_capabilities.execute_command_provider is not None
    await leave(client)
    assert server.exit_status() == 0
    assert server.stderr().count("refused a connection") == len(attempts) + 4
    assert TOKEN not in server.stderr()


@pytest.mark.asyncio
async def test_a_refused_client_does_not_disturb_the_client_being_served(
        server: TcpServer, workspace: Path) -> None:
    source = Path(__file__).parents[2] / "examples" / "unet3plus_seed.py"
    path = workspace / "unet3plus_seed.py"
    path.write_text(source.read_text("utf-8"), "utf-8")
    client, session = await owner(server.port, workspace)
    uri = session.open(path)
    assert [d.code for d in await session.diagnostics(uri)] == ["GG001"]

    (no_token,) = await stranger(server.port, initialize(workspace))
    (second_owner,) = await stranger(server.port, initialize(workspace, {"token": TOKEN}))

    assert "token" in no_token["error"]["message"]
    assert "another client" in second_owner["error"]["message"]
    # The client being served still gets its answers, on its own connection.
    version = session.replace_all(uri, session.texts[uri] + "\n# an edit\n")
    assert [d.code for d in await session.diagnostics(uri, version)] == ["GG001"]
    await leave(client)
    assert server.exit_status() == 0


@pytest.mark.asyncio
async def test_a_client_with_the_token_probes_its_workspace_and_nothing_outside_it(
        server: TcpServer, workspace: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    outside = mark_file(elsewhere, "outside.py", "OUTSIDE")
    link = workspace / "link.py"  # in the workspace by name, outside it in fact
    link.symlink_to(outside)
    inside = mark_file(workspace, "inside.py", "INSIDE")
    client, session = await owner(server.port, workspace, trusted=True)

    for refused in (outside, link):
        answer = await probe(session, refused.as_uri())

        assert answer["status"] == "refused", refused
        assert "outside" in answer["message"] and str(workspace) in answer["message"]
    answer = await probe(session, inside.as_uri())

    assert answer["status"] != "refused", answer
    assert (workspace / "INSIDE").exists()
    assert not (elsewhere / "OUTSIDE").exists() and not (workspace / "OUTSIDE").exists()
    await leave(client)


def test_listening_beyond_loopback_needs_allow_remote(tmp_path: Path) -> None:
    server = TcpServer(tmp_path, address="0.0.0.0:0")

    assert server.exit_status() == 2
    assert "0.0.0.0 is not a loopback address" in server.stderr()
    assert "--allow-remote" in server.stderr()
    assert "listening" not in server.stderr()


def test_a_port_alone_listens_on_127_0_0_1_and_a_bad_address_is_said_to_be_one(
        tmp_path: Path) -> None:
    alone = TcpServer(tmp_path, address="0").listening()  # found "listening on 127.0.0.1:"
    alone.stop()
    bad = TcpServer(tmp_path, address="127.0.0.1:http")

    assert bad.exit_status() == 2
    assert "--tcp takes HOST:PORT or PORT, got '127.0.0.1:http'" in bad.stderr()


@pytest.mark.asyncio
async def test_without_a_token_the_server_makes_one_in_a_private_file_and_says_where(
        tmp_path: Path, workspace: Path) -> None:
    server = TcpServer(tmp_path, token=None).listening()
    try:
        found = re.search(r"a new token, readable only by you, is in (\S+);", server.stderr())
        assert found is not None, server.stderr()
        path = Path(found[1])
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        token = path.read_text("utf-8").strip()

        client = RecordingClient()
        await client.start_tcp("127.0.0.1", server.port)
        await asyncio.wait_for(start(client, PUSH, workspace, {"token": token}), 30.0)
        await leave(client)

        assert server.exit_status() == 0
        assert not path.exists()  # a token of its own making goes with the server
    finally:
        server.stop()


@pytest.mark.asyncio
async def test_a_token_file_that_does_not_exist_is_written_private_and_kept(
        tmp_path: Path, workspace: Path) -> None:
    path = tmp_path / "token"
    server = TcpServer(tmp_path, "--token-file", str(path), token=None).listening()
    try:
        assert f"is in {path};" in server.stderr()
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        token = path.read_text("utf-8").strip()
        (refused,) = await stranger(server.port, initialize(workspace, {"token": TOKEN}))
        assert "wrong token" in refused["error"]["message"]

        client = RecordingClient()
        await client.start_tcp("127.0.0.1", server.port)
        await asyncio.wait_for(start(client, PUSH, workspace, {"token": token}), 30.0)
        await leave(client)

        assert server.exit_status() == 0
        assert path.read_text("utf-8").strip() == token  # the next run reads it again
    finally:
        server.stop()


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o620])
def test_a_token_file_others_may_read_or_change_is_refused(tmp_path: Path, mode: int) -> None:
    path = tmp_path / "token"
    path.write_text(TOKEN + "\n", "utf-8")
    path.chmod(mode)

    server = TcpServer(tmp_path, "--token-file", str(path), token=None)

    assert server.exit_status() == 2
    assert f"the token file {path} may be read or changed by others" in server.stderr()
    assert f"chmod 600 {path}" in server.stderr()


def test_a_token_too_short_to_be_a_secret_is_refused(tmp_path: Path) -> None:
    server = TcpServer(tmp_path, token="hunter2")

    assert server.exit_status() == 2
    assert "GRADGUARD_TOKEN is too short" in server.stderr()
