"""Entry point of ``gradguard serve``: the language server over stdio, or TCP (``tcp``)."""

from __future__ import annotations

import logging
import os
import sys

from gradguard.probe import reaper
from gradguard.runtime import fewer_collections
from gradguard.server.handlers import register
from gradguard.server.language_server import GradGuardServer
from gradguard.server.tcp import AddressError, is_loopback, parse_address, run_tcp
from gradguard.server.tcp_auth import ENVIRONMENT_VARIABLE, TokenError, server_token


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


def serve(tcp: str | None = None, token_file: str | None = None,
          allow_remote: bool = False) -> int:
    """Run the server until the client says ``exit`` (or the connection closes)."""
    _configure_logging()
    fewer_collections()
    if tcp is not None:
        return _serve_tcp(tcp, token_file, allow_remote)
    server = create_server()
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    # stdout carries the JSON-RPC stream: a stray print() anywhere would corrupt it.
    sys.stdout = sys.stderr
    server.start_io(stdin, stdout)
    # The editor is gone (stdin closed, or `exit`): so must be the probes it started,
    # which would otherwise run to their timeouts with no one to read them.
    reaper.stop_all()
    return 0


def _serve_tcp(tcp: str, token_file: str | None, allow_remote: bool) -> int:
    try:
        host, port = parse_address(tcp)
        remote = not is_loopback(host)
        if remote and not allow_remote:
            raise AddressError(
                f"{host} is not a loopback address: anyone who can reach it could connect. "
                "Listen on 127.0.0.1 (an SSH tunnel reaches it from another machine), or "
                f"pass --allow-remote to listen on {host} anyway")
        token = server_token(os.environ, token_file)
    except (AddressError, TokenError) as error:
        print(f"gradguard serve: {error}", file=sys.stderr)
        return 2

    def listening(addresses: list[str]) -> None:
        say(f"listening on {', '.join(addresses)}")
        if remote:
            say("warning: --allow-remote: other machines may connect, and the token "
                "crosses the network in clear text (no TLS): anyone who can watch the "
                "traffic can take it")
        if token.path is None:
            say(f"clients must present the token of {ENVIRONMENT_VARIABLE} as "
                "initializationOptions.token")
        else:
            made = "a new token, readable only by you, is" if token.generated else \
                "the token is"
            say(f"{made} in {token.path}; clients must present it as "
                "initializationOptions.token")

    try:
        run_tcp(create_server(), host, port, token, listening)
    except OSError as error:
        print(f"gradguard serve: cannot listen on {tcp}: {error.strerror or error}",
              file=sys.stderr)
        return 1
    finally:
        token.remove_scratch()
        reaper.stop_all()  # as over stdio: the client is gone, so are its probes
    return 0


def say(line: str) -> None:
    print(f"gradguard serve: {line}", file=sys.stderr, flush=True)
