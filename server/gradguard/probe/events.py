"""The child-to-parent channel: JSON lines in a file of their own.

Not the child's stdout: that belongs to the user's code, whose prints are captured
apart. Each event is one line written with a single ``os.write`` on an append-mode
descriptor, so a child that crashes or is killed mid-run leaves every event it
finished (a finding reported before ``os.abort()`` still arrives). Events:

- ``start`` {target}: target number ``target`` begins (its timeout starts now);
- ``finding`` {target, id, finding}; ``update`` {target, id, finding}: the same
  finding again, with torch's error attached (which confirms it) or more related
  locations; ``retract`` {target, id}: it proved harmless (the tensor it overwrote
  was never used again), drop it;
- ``ran`` {target, what}; ``skipped`` {target, what, reason} (``--auto``);
- ``end`` {target, status, error, explained, line, path, seconds}: status ``ok``, ``raised``,
  ``exit``, ``bad-target``;
- ``fatal`` {error}: the child cannot probe at all (no torch, say).
"""

from __future__ import annotations

import json
import os
from typing import Any

Event = dict[str, Any]


class EventWriter:
    def __init__(self, path: str) -> None:
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
        self._fd = os.open(path, flags, 0o600)

    def __call__(self, kind: str, data: dict[str, Any]) -> None:
        line = json.dumps({"event": kind, **data}, ensure_ascii=False, default=str) + "\n"
        os.write(self._fd, line.encode("utf-8"))

    def close(self) -> None:
        os.close(self._fd)


class EventReader:
    """Reads the events written so far; call again for the new ones."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._offset = 0

    def read(self) -> list[Event]:
        try:
            with open(self._path, "rb") as file:
                file.seek(self._offset)
                data = file.read()
        except FileNotFoundError:
            return []
        end = data.rfind(b"\n") + 1  # a line still being written waits for next time
        self._offset += end
        events = []
        for line in data[:end].splitlines():
            try:
                events.append(json.loads(line))
            except ValueError:
                continue
        return events
