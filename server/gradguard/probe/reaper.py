"""Leaving no process behind: the probe's children, and whatever the user's code started.

The child runs in a session (and process group) of its own, so one ``killpg`` ends it
with the DataLoader workers and subprocesses it started. Code can leave that group
(``setsid``, a daemon's double fork), so each child also gets a random token in its
environment, which every process it starts inherits: after the child is gone, any
process still carrying the token is found in ``/proc`` and killed (Linux; elsewhere
the process group only).

``stop_all`` is for a server going away (its editor closed stdin): every running
probe's child is killed, and the probes return at once with status ``cancelled``.
"""

from __future__ import annotations

import atexit
import os
import secrets
import signal
import subprocess
import threading
import time

TOKEN_VARIABLE = "GRADGUARD_PROBE_RUN"
_PROC = "/proc"

shutting_down = threading.Event()  # set by stop_all: every probe's poll loop sees it
_live: dict[int, subprocess.Popen[bytes]] = {}
_lock = threading.Lock()


def new_token() -> str:
    return secrets.token_hex(16)


def track(process: subprocess.Popen[bytes]) -> None:
    with _lock:
        _live[process.pid] = process


def untrack(process: subprocess.Popen[bytes]) -> None:
    with _lock:
        _live.pop(process.pid, None)


def kill_group(process: subprocess.Popen[bytes]) -> None:
    """Kill the child and whatever is left in its process group."""
    try:
        if os.name == "posix":
            os.killpg(process.pid, signal.SIGKILL)
        else:
            process.kill()
    except OSError:  # already gone
        pass


def sweep(token: str) -> int:
    """Kill every process whose environment carries ``token``; how many there were."""
    if not os.path.isdir(_PROC):
        return 0
    needle = f"{TOKEN_VARIABLE}={token}".encode()
    killed = 0
    for name in os.listdir(_PROC):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(os.path.join(_PROC, name, "environ"), "rb") as file:
                environment = file.read()
        except OSError:  # gone, or not ours to read
            continue
        if needle in environment.split(b"\0"):
            try:
                os.kill(int(name), signal.SIGKILL)
                killed += 1
            except OSError:
                pass
    return killed


def stop_all(wait: float = 5.0) -> None:
    """Kill every probe child of this process; wait until their runs have noticed."""
    shutting_down.set()
    with _lock:
        processes = list(_live.values())
    for process in processes:
        kill_group(process)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        with _lock:
            if not _live:
                return
        time.sleep(0.02)


def _at_exit() -> None:
    with _lock:
        processes = list(_live.values())
    for process in processes:
        kill_group(process)


atexit.register(_at_exit)
