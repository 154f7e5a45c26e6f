"""Run scripts as ``python SCRIPT ARGS`` would, each in a process forked from one that
has imported torch already.

The corpus's labels and the fixes' verification run a few hundred small scripts under
torch; in a fresh interpreter each spends about two seconds of CPU importing torch before
its first line, which is most of what the test suite's slow tier costs. A fork of a
process that has imported torch (and done nothing with it, so no thread pool is running)
starts where a fresh one would be after ``import torch``. Each script still has a process
of its own: its working directory, ``sys.argv``, ``sys.path[0]``, stdin, stdout and
stderr, its own modules and globals, and an exit status read the way ``subprocess``
reads one (negative for a signal).

``ForkServer().run(argv, cwd, timeout)`` returns a ``subprocess.CompletedProcess``; it is
safe to call from several threads. Where ``os.fork`` does not exist, ``run`` starts a
fresh interpreter instead.

The server's side (``python tools/forkserver.py``) reads one JSON request a line from
stdin and answers with one JSON line for each fork and each exit.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import traceback
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

PRELOAD = ("torch",)


# --------------------------------------------------------------------------- server


def _exit_code(stop: SystemExit) -> int:
    """The status ``python`` exits with for a SystemExit (its message goes to stderr)."""
    if stop.code is None:
        return 0
    if isinstance(stop.code, int):
        return stop.code
    print(stop.code, file=sys.stderr)
    return 1


def _run_as_main(argv: list[str], cwd: str, stdout: str, stderr: str) -> None:
    """In the forked child: become ``python argv[0] argv[1:]`` and exit."""
    code = 1
    try:
        os.setsid()  # a timeout kills the script and whatever it started
        os.chdir(cwd)
        for fd, path, flags in ((0, os.devnull, os.O_RDONLY),
                                (1, stdout, os.O_WRONLY | os.O_TRUNC),
                                (2, stderr, os.O_WRONLY | os.O_TRUNC)):
            opened = os.open(path, flags)
            os.dup2(opened, fd)
            os.close(opened)
        sys.stdin = open(0, closefd=False)  # noqa: SIM115 - the process's own stdin
        sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
        script = os.path.abspath(argv[0])
        sys.argv = list(argv)
        sys.path[0] = os.path.dirname(script)  # where the script's own imports are found
        import runpy

        try:
            runpy.run_path(script, run_name="__main__")
            code = 0
        except SystemExit as stop:
            code = _exit_code(stop)
        except BaseException:  # noqa: BLE001 - printed as python prints an uncaught one
            traceback.print_exc()
            code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)


def serve() -> None:
    """Fork a child per request; report each child's pid, then its exit status."""
    for name in PRELOAD:
        try:
            __import__(name)
        except ImportError:
            pass
    children: dict[int, Any] = {}
    answers = sys.stdout
    received = b""  # read from stdin with os.read: a buffered reader would hide lines

    def answer(message: dict[str, Any]) -> None:
        answers.write(json.dumps(message) + "\n")
        answers.flush()

    open_input = True
    while open_input or children:
        ready, _, _ = select.select([0] if open_input else [], [], [], 0.01)
        if ready:
            chunk = os.read(0, 1 << 16)
            open_input = bool(chunk)
            received += chunk
            *lines, received = received.split(b"\n")
            for line in lines:
                request = json.loads(line)
                pid = os.fork()
                if pid == 0:
                    _run_as_main(request["argv"], request["cwd"], request["stdout"],
                                 request["stderr"])
                children[pid] = request["id"]
                answer({"id": request["id"], "pid": pid})
        while children:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            answer({"id": children.pop(pid), "returncode": os.waitstatus_to_exitcode(status)})


# --------------------------------------------------------------------------- client


class _Pending:
    def __init__(self) -> None:
        self.started = threading.Event()
        self.ended = threading.Event()
        self.pid = 0
        self.returncode = 0


class ForkServer:
    """A running fork server; ``run`` is thread-safe."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self._env = dict(env if env is not None else os.environ)
        self._lock = threading.Lock()
        self._pending: dict[int, _Pending] = {}
        self._next = 0
        self._process: subprocess.Popen[str] | None = None
        self._scratch = tempfile.TemporaryDirectory(prefix="gg-forkserver-")

    def _start(self) -> subprocess.Popen[str]:
        if self._process is None or self._process.poll() is not None:
            # Run as a file, not with -m: the scripts' sys.path is then the one
            # ``python script.py`` has, with nothing of this repository on it.
            self._process = subprocess.Popen(
                [sys.executable, str(Path(__file__).resolve())], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, text=True, env=self._env)
            threading.Thread(target=self._read, args=(self._process,), daemon=True).start()
        return self._process

    def _read(self, process: subprocess.Popen[str]) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            message = json.loads(line)
            with self._lock:
                pending = self._pending.get(message["id"])
            if pending is None:
                continue
            if "pid" in message:
                pending.pid = message["pid"]
                pending.started.set()
            else:
                pending.returncode = message["returncode"]
                pending.ended.set()
        with self._lock:  # the server died: nothing more will come
            for pending in self._pending.values():
                pending.returncode = pending.returncode or -signal.SIGKILL
                pending.started.set()
                pending.ended.set()

    def run(self, argv: Sequence[str], cwd: Path,
            timeout: float) -> subprocess.CompletedProcess[str]:
        """Run ``python *argv`` in ``cwd``; raises subprocess.TimeoutExpired as
        ``subprocess.run`` does (the script and its process group killed)."""
        if not hasattr(os, "fork"):
            return subprocess.run([sys.executable, *argv], capture_output=True, text=True,
                                  timeout=timeout, cwd=cwd, env=self._env)
        pending = _Pending()
        with self._lock:
            self._next += 1
            number = self._next
            self._pending[number] = pending
            process = self._start()
        out = os.path.join(self._scratch.name, f"{number}.out")
        err = os.path.join(self._scratch.name, f"{number}.err")
        for path in (out, err):
            open(path, "wb").close()
        request = {"id": number, "argv": list(argv), "cwd": str(cwd), "stdout": out,
                   "stderr": err}
        try:
            with self._lock:
                assert process.stdin is not None
                process.stdin.write(json.dumps(request) + "\n")
                process.stdin.flush()
            if not pending.ended.wait(timeout):
                pending.started.wait()
                try:
                    os.killpg(pending.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
                pending.ended.wait()
                raise subprocess.TimeoutExpired([sys.executable, *argv], timeout)
            return subprocess.CompletedProcess(
                [sys.executable, *argv], pending.returncode,
                Path(out).read_text(encoding="utf-8", errors="replace"),
                Path(err).read_text(encoding="utf-8", errors="replace"))
        finally:
            with self._lock:
                self._pending.pop(number, None)
            for path in (out, err):
                try:
                    os.remove(path)
                except OSError:
                    pass

    def close(self) -> None:
        if self._process is not None:
            if self._process.stdin is not None:
                self._process.stdin.close()
            try:
                self._process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            self._process = None
        self._scratch.cleanup()

    def __enter__(self) -> ForkServer:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


if __name__ == "__main__":
    serve()
