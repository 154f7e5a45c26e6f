"""The language server over TCP: one client, which must first prove it holds the token.

pygls's own ``start_tcp`` gives every connection the server's one protocol (a second
connection takes over the first one's replies) and stops the server when any connection
ends, so a client turned away would take the server down with it. Here each connection
is vetted on its own: its first message must be an ``initialize`` request presenting the
token (``tcp_auth``). Until then nothing it sends reaches the server: no document, no
setting, no trust notification, no command. A connection that fails is answered with
one error and closed, and the server goes on listening. The first client that passes is
the server's client from then on, as the editor is over stdio: others are refused while
it is connected, and the server ends when it leaves.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import socket
import threading
from collections.abc import Callable
from typing import Any

from pygls.exceptions import JsonRpcException
from pygls.io_ import run_async

from gradguard.server import tcp_auth
from gradguard.server.language_server import GradGuardServer
from gradguard.server.tcp_auth import Token

logger = logging.getLogger(__name__)

DEFAULT_HOST = "127.0.0.1"
# A client that connects and says nothing is dropped after this long.
HANDSHAKE_SECONDS = 30.0
# An editor's initialize is a few tens of kilobytes; more before the token is not read.
MAX_FIRST_MESSAGE = 4 * 1024 * 1024
MAX_HEADER_LINES = 16
# How long a refused connection is drained before it is closed (see ``_refuse``).
LINGER_SECONDS = 2.0


class AddressError(ValueError):
    """``--tcp`` names no address the server may listen on; the message says why."""


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT``, ``[IPV6]:PORT``, or a bare ``PORT`` on 127.0.0.1."""
    host, _, port = text.rpartition(":")
    host = host.strip("[]") if host else DEFAULT_HOST
    if not port.isdigit() or int(port) > 65535:
        raise AddressError(f"--tcp takes HOST:PORT or PORT, got {text!r}")
    return host, int(port)


def is_loopback(host: str) -> bool:
    """Whether every address ``host`` stands for is this machine's loopback."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        found = socket.getaddrinfo(host, None)
    except (OSError, UnicodeError):
        return False
    return bool(found) and all(ipaddress.ip_address(str(info[4][0]).split("%")[0]).is_loopback
                               for info in found)


def address_text(sockname: Any) -> str:
    host, port = sockname[0], sockname[1]
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class BadFrame(Exception):
    """The first bytes of a connection are not one LSP message the server will read."""


async def read_message(reader: asyncio.StreamReader) -> Any:
    """The first message of a connection, read with limits: it comes from a stranger."""
    length: int | None = None
    for _ in range(MAX_HEADER_LINES):
        line = await reader.readline()
        if not line:
            raise BadFrame("the connection closed before a whole message")
        if not line.strip():
            break
        name, colon, value = line.partition(b":")
        name = name.strip().lower()
        # Only LSP's own headers: an HTTP request (a web page posting to localhost)
        # is no message, whatever its body says.
        if not colon or name not in (b"content-length", b"content-type"):
            raise BadFrame(f"not an LSP header: {line[:80]!r}")
        if name == b"content-length" and value.strip().isdigit():
            length = int(value.strip())
    else:
        raise BadFrame("too many header lines")
    if length is None:
        raise BadFrame("a message without a Content-Length header")
    if length > MAX_FIRST_MESSAGE:
        raise BadFrame(f"a first message of {length} bytes (at most {MAX_FIRST_MESSAGE})")
    body = await reader.readexactly(length)
    try:
        return json.loads(body)
    except ValueError:
        raise BadFrame("a message that is not JSON") from None


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


class TcpTransport:
    """Listens, vets each connection, and runs the server for the first that passes."""

    def __init__(self, server: GradGuardServer, token: Token) -> None:
        self.server = server
        self.token = token
        self.engaged = False  # a client has passed and is connected
        self._ended: asyncio.Event | None = None

    async def serve(self, host: str, port: int, listening: Callable[[list[str]], None]
                    ) -> None:
        """Listen on ``host:port`` until the client that passed leaves."""
        self._ended = asyncio.Event()
        listener = await asyncio.start_server(self._connection, host, port)
        listening([address_text(s.getsockname()) for s in listener.sockets])
        async with listener:
            await self._ended.wait()

    async def _connection(self, reader: asyncio.StreamReader,
                          writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        try:
            message = await asyncio.wait_for(read_message(reader), HANDSHAKE_SECONDS)
        except asyncio.TimeoutError:
            await self._refuse(peer, reader, writer, None, tcp_auth.Refusal(
                tcp_auth.SERVER_NOT_INITIALIZED,
                f"no initialize request within {HANDSHAKE_SECONDS:.0f} s"))
            return
        except (BadFrame, ValueError, EOFError, OSError) as error:
            # ValueError: a header line over the reader's limit; EOFError: a short body.
            await self._refuse(peer, reader, writer, None, tcp_auth.Refusal(
                tcp_auth.PARSE_ERROR, f"unreadable first message: {error}"))
            return
        refusal = tcp_auth.refusal(message, self.token)
        if refusal is None and self.engaged:
            refusal = tcp_auth.Refusal(tcp_auth.REQUEST_FAILED,
                                       "another client is using this server")
        if refusal is not None:
            await self._refuse(peer, reader, writer, tcp_auth.request_id(message), refusal)
            return
        self.engaged = True
        logger.info("client %s presented the token", peer)
        try:
            await self._session(reader, writer, tcp_auth.without_token(message))
        except SystemExit:  # pygls's way of ending on the client's `exit`: ended below
            pass
        except ConnectionError as error:  # the client went away mid-message
            logger.warning("the connection to %s broke: %s", peer, error)
        finally:
            writer.close()
            if self._ended is not None:
                self._ended.set()

    async def _session(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                       first: dict[str, Any]) -> None:
        """The client's messages, from its initialize on, to the server's protocol."""
        protocol = self.server.protocol
        protocol.set_writer(writer)
        stop = threading.Event()
        self.server._stop_event = stop  # pygls's shutdown() sets it
        try:
            protocol.handle_message(protocol.structure_message(first))
        except Exception as error:  # as pygls's own loop treats a message it cannot handle
            logger.exception("Unable to handle message")
            self.server.report_server_error(error, JsonRpcException)
        await run_async(stop_event=stop, reader=reader, protocol=protocol, logger=logger,
                        error_handler=self.server.report_server_error)

    @staticmethod
    async def _refuse(peer: Any, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                      msg_id: int | str | None, refusal: tcp_auth.Refusal) -> None:
        """One error, then the connection closed, without reading what else it sent.

        What the client sent after its first message is read and dropped for a moment
        before closing: closing a socket with unread bytes sends a reset, which can
        destroy the error in flight before the client reads it."""
        logger.warning("refused a connection from %s: %s", peer, refusal.message)
        reply = {"jsonrpc": "2.0", "id": msg_id, "error": {
            "code": refusal.code, "message": f"GradGuard: {refusal.message}",
            "data": {"retry": False}}}
        try:
            writer.write(frame(reply))
            writer.write_eof()
            await asyncio.wait_for(_drain_and_drop(reader, writer), LINGER_SECONDS)
        except (OSError, asyncio.TimeoutError):
            pass
        finally:
            writer.close()


async def _drain_and_drop(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await writer.drain()
    while await reader.read(65536):
        pass


def run_tcp(server: GradGuardServer, host: str, port: int, token: Token,
            listening: Callable[[list[str]], None]) -> None:
    """Serve over TCP until the client that passed leaves (or says ``exit``).

    Raises ``OSError`` when the server cannot listen on ``host:port``."""
    transport = TcpTransport(server, token)
    try:
        asyncio.run(transport.serve(host, port, listening))
    except SystemExit:  # `exit` handled outside a connection's task (pygls may defer it)
        pass
    finally:
        server.shutdown()  # type: ignore[no-untyped-call]  # pygls leaves it unannotated
