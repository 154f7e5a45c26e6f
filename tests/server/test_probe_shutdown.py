"""Closing the editor ends its probes: when the server's stdin closes, the probe it is
running is killed, with everything the probed code started, and the server exits.

A raw stdio session (as in test_stdio): the client here is this test, so that it can
close the server's stdin in the middle of a probe, as an editor that quits does.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

HANGS = """import os, subprocess, sys, time

SLEEP = [sys.executable, "-c", "import time; time.sleep(600)"]

if __name__ == "__main__":
    kept = subprocess.Popen(SLEEP)
    escaped = subprocess.Popen(SLEEP, start_new_session=True)
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "started.pids"), "w") as file:
        file.write(f"{os.getpid()} {kept.pid} {escaped.pid}")
    while True:
        time.sleep(0.05)
"""


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as file:
            return file.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads process states from /proc")
def test_closing_the_servers_stdin_kills_the_running_probe_and_what_it_started(
        tmp_path: Path) -> None:
    script = tmp_path / "hangs.py"
    script.write_text(HANGS, "utf-8")
    uri = script.as_uri()
    server = subprocess.Popen([sys.executable, "-m", "gradguard", "serve"],
                              stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    assert server.stdin is not None
    marker = tmp_path / "started.pids"
    try:
        server.stdin.write(b"".join(frame(m) for m in [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {},
                        "initializationOptions": {"trusted": True,
                                                  "probe": {"timeout": 600}}}},
            {"jsonrpc": "2.0", "method": "initialized", "params": {}},
            {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
                "uri": uri, "languageId": "python", "version": 1, "text": HANGS}}},
            {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand",
             "params": {"command": "gradguard.probe", "arguments": [uri]}},
        ]))
        server.stdin.flush()
        deadline = time.monotonic() + 180  # a cold torch import on a loaded machine
        while not marker.exists() or len(marker.read_text().split()) < 3:
            assert time.monotonic() < deadline, "the probe never started the script"
            assert server.poll() is None, "the server died"
            time.sleep(0.1)
        started = [int(pid) for pid in marker.read_text().split()]
        assert all(alive(pid) for pid in started)

        server.stdin.close()  # the editor quits without a word

        assert server.wait(timeout=30) == 0
        deadline = time.monotonic() + 10
        while any(alive(pid) for pid in started) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert [pid for pid in started if alive(pid)] == []
    finally:
        server.kill()
        if marker.exists():
            for pid in (int(p) for p in marker.read_text().split()):
                if alive(pid):
                    subprocess.run(["kill", "-9", str(pid)], check=False)
