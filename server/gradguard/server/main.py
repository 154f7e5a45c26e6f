"""Entry point of ``gradguard serve``: the language server over stdio, or TCP."""

from __future__ import annotations

import logging
import os
import sys

from gradguard.probe import reaper
from gradguard.runtime import fewer_collections
from gradguard.server.handlers import register
from gradguard.server.language_server import GradGuardServer


def create_server() -> GradGuardServer:
    server = GradGuardServer()
    register(server)
    return server


def _configure_logging() -> None:
    # pygls logs every message at INFO; stderr is the editor's log panel, keep it useful.
    level_name = os.environ.get("GRADGUARD_LOG_LEVEL", "WARNING").upper()
    level = logging.getLevelName(level_name)
    logging.basicConfig(stream=sys.stderr, level=level if isinstance(level, int) else
                        logging.WARNING, format="gradguard %(levelname)s %(name)s: %(message)s")


def _address(tcp: str) -> tuple[str, int]:
    host, _, port = tcp.rpartition(":")
    if not host or not port.isdigit():
        raise SystemExit(f"gradguard serve: --tcp takes HOST:PORT, got {tcp!r}")
    return host.strip("[]"), int(port)


def serve(tcp: str | None = None) -> int:
    """Run the server until the client says ``exit`` (or the connection closes)."""
    _configure_logging()
    fewer_collections()
    server = create_server()
    if tcp is not None:
        server.start_tcp(*_address(tcp))
        return 0
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    # stdout carries the JSON-RPC stream: a stray print() anywhere would corrupt it.
    sys.stdout = sys.stderr
    server.start_io(stdin, stdout)
    # The editor is gone (stdin closed, or `exit`): so must be the probes it started,
    # which would otherwise run to their timeouts with no one to read them.
    reaper.stop_all()
    return 0
