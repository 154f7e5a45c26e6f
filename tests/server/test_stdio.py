"""In stdio mode, stdout carries JSON-RPC frames and nothing else, even when code prints."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.server.conftest import EXAMPLES

# The server, with an analysis that prints on every run, as a careless library might.
NOISY_SERVER = """
import gradguard.analysis.incremental as incremental
from gradguard.cli.main import main

update = incremental.IncrementalDocument.update

def noisy_update(self, *args, **kwargs):
    print("noise from the analysis")
    return update(self, *args, **kwargs)

incremental.IncrementalDocument.update = noisy_update
raise SystemExit(main(["serve"]))
"""


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def parse_frames(stream: bytes) -> list[dict[str, Any]]:
    """Every message of an LSP byte stream; fails on any byte outside a frame."""
    messages = []
    while stream:
        header, separator, rest = stream.partition(b"\r\n\r\n")
        assert separator, f"bytes outside a frame: {stream[:80]!r}"
        fields = dict(line.split(b": ", 1) for line in header.split(b"\r\n"))
        assert set(fields) <= {b"Content-Length", b"Content-Type"}, header
        length = int(fields[b"Content-Length"])
        messages.append(json.loads(rest[:length]))
        stream = rest[length:]
    return messages


def test_stdout_holds_only_json_rpc_frames_while_the_analysis_prints(tmp_path: Path) -> None:
    uri = (EXAMPLES / "unet3plus_seed.py").as_uri()
    text = (EXAMPLES / "unet3plus_seed.py").read_text("utf-8")
    opening = b"".join(frame(m) for m in [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "python", "version": 1, "text": text}}},
        {"jsonrpc": "2.0", "id": 2, "method": "textDocument/diagnostic",
         "params": {"textDocument": {"uri": uri}}},
    ])
    closing = frame({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}) + \
        frame({"jsonrpc": "2.0", "method": "exit"})
    server = subprocess.Popen([sys.executable, "-c", NOISY_SERVER], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert server.stdin is not None and server.stdout is not None
    try:
        server.stdin.write(opening)
        server.stdin.flush()
        stream = b""
        # Read until the diagnostics are answered (shutdown would cancel the request).
        while b'"id": 2' not in stream and b'"id":2' not in stream:
            chunk = server.stdout.read1(65536)
            assert chunk, "the server closed stdout early"
            stream += chunk
        rest, errors = server.communicate(closing, timeout=60)
    finally:
        server.kill()

    messages = parse_frames(stream + rest)
    assert b"noise from the analysis" in errors
    assert sorted(m["id"] for m in messages if "id" in m) == [1, 2, 3]
    answer = next(m for m in messages if m.get("id") == 2)["result"]
    assert [d["range"]["start"]["line"] + 1 for d in answer["items"]] == [117]
