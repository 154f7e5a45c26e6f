"""A plain, synchronous LSP client over a real ``gradguard serve`` process's stdio, for
fuzzing: it sends whatever it is given (ranges out of bounds, documents never opened)."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from typing import Any


class StdioClient:
    def __init__(self, command: list[str] | None = None) -> None:
        self.process = subprocess.Popen(
            command or [sys.executable, "-m", "gradguard", "serve"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.messages: queue.Queue[dict[str, Any]] = queue.Queue()
        self.diagnostics: dict[str, dict[str, Any]] = {}  # uri -> the latest params
        self.answers: dict[int, dict[str, Any]] = {}
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()
        self.request("initialize", {"processId": None, "rootUri": None,
                                    "capabilities": {"general": {"positionEncodings":
                                                                 ["utf-16"]}}})
        self.notify("initialized", {})

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            length = 0
            while (header := stream.readline()) not in (b"\r\n", b""):
                if header.lower().startswith(b"content-length:"):
                    length = int(header.split(b":")[1])
            if not header:
                return
            self.messages.put(json.loads(stream.read(length)))

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        stdin.flush()

    def notify(self, method: str, params: Any) -> None:
        self._send({"method": method, "params": params})

    def send_request(self, method: str, params: Any) -> int:
        self.next_id += 1
        self._send({"id": self.next_id, "method": method, "params": params})
        return self.next_id

    def request(self, method: str, params: Any, timeout: float = 30.0) -> dict[str, Any]:
        """The whole answer (``result`` or ``error``) to a request."""
        number = self.send_request(method, params)
        self.pump_until(lambda: number in self.answers, timeout)
        return self.answers.pop(number)

    def pump_until(self, done: Any, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("no answer from the server")
            try:
                message = self.messages.get(timeout=remaining)
            except queue.Empty:
                continue
            if "id" in message and "method" in message:  # a request to the client
                self._send({"id": message["id"], "result": None})
            elif "id" in message:
                self.answers[message["id"]] = message
            elif message.get("method") == "textDocument/publishDiagnostics":
                self.diagnostics[message["params"]["uri"]] = message["params"]

    def diagnostics_for(self, uri: str, version: int, timeout: float = 30.0) -> list[Any]:
        def arrived() -> bool:
            return self.diagnostics.get(uri, {}).get("version") == version

        self.pump_until(arrived, timeout)
        return list(self.diagnostics[uri]["diagnostics"])

    def alive(self) -> bool:
        return self.process.poll() is None

    def close(self) -> None:
        try:
            self.request("shutdown", None, timeout=10)
            self.notify("exit", None)
            self.process.wait(timeout=10)
        except Exception:  # a server that does not answer is killed
            self.process.kill()
            self.process.wait()
