"""The result cache of ``gradguard check``: a file whose text, and the texts of the
project files its analysis read, are unchanged gets its earlier results back.

Like ruff's, it lives in ``.gradguard_cache/`` in the folder ``check`` runs from, one
file per GradGuard version and choice of rules; ``--no-cache`` turns it off.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gradguard import __version__
from gradguard.analysis.hazard import Fix, Hazard, Related, Span, TextEdit
from gradguard.analysis.libraries import version_stamp
from gradguard.config import Selection

DIRECTORY = ".gradguard_cache"


def digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


@dataclass
class Entry:
    digest: str
    # The other files the analysis read, with their digests then.
    read: dict[str, str | None]
    # (path, hazard) of each hazard found, in whichever file it is.
    found: list[tuple[str, Hazard]] = field(default_factory=list)
    error: str | None = None


class ResultCache:
    def __init__(self, selection: Selection, directory: str = DIRECTORY) -> None:
        settings = json.dumps([__version__, _code_stamp(),
                               sys.version_info[:2], sorted(selection.select or []),
                               sorted(selection.ignore), selection.uncertain])
        self.directory = directory
        self.path = Path(directory, f"{__version__}", f"{digest(settings)}.json")
        self.entries: dict[str, Entry] = {}
        self.changed = False
        self._digests: dict[str, str | None] = {}
        try:
            raw = json.loads(self.path.read_text("utf-8"))
            self.entries = {path: _entry(value) for path, value in raw.items()}
        except (OSError, ValueError, KeyError, TypeError):
            self.entries = {}

    def digest_of(self, path: str) -> str | None:
        """The digest of a file's text now (each file read once a run)."""
        if path not in self._digests and (stamp := version_stamp(path)) is not None:
            self._digests[path] = stamp  # a file of an installed package: its version
        if path not in self._digests:
            try:
                text = Path(path).read_bytes().decode("utf-8-sig")
            except (OSError, UnicodeDecodeError):
                self._digests[path] = None
            else:
                self._digests[path] = digest(text)
        return self._digests[path]

    def get(self, path: str, text_digest: str,
            digest_of: Callable[[str], str | None] | None = None) -> Entry | None:
        """The entry of a file whose text, and each text its analysis read, are as then
        (``digest_of``: the digest of a file's text now, if not the one on disk)."""
        entry = self.entries.get(path)
        if entry is None or entry.digest != text_digest:
            return None
        current = digest_of or self.digest_of
        if any(current(other) != seen for other, seen in entry.read.items()):
            return None
        return entry

    def put(self, path: str, entry: Entry) -> None:
        self.entries[path] = entry
        self.changed = True

    def save(self) -> None:
        if not self.changed:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            ignore = Path(self.directory, ".gitignore")
            if not ignore.exists():
                ignore.write_text("# Made by gradguard check.\n*\n", "utf-8")
            handle, temporary = tempfile.mkstemp(dir=self.path.parent, suffix=".tmp")
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                json.dump({path: _raw(entry) for path, entry in self.entries.items()}, stream)
            os.replace(temporary, self.path)
        except OSError:
            pass  # a cache that cannot be written only costs the next run its speed


def _code_stamp() -> str:
    """Which build of GradGuard made the results: a development checkout changes its
    code without changing its version number."""
    package = Path(__file__).resolve().parent.parent
    stamps = sorted((str(p.relative_to(package)), p.stat().st_size, p.stat().st_mtime_ns)
                    for p in package.rglob("*") if p.suffix in (".py", ".json"))
    return digest(json.dumps(stamps))


def _span(raw: list[int]) -> Span:
    return Span(*raw)


def _raw(entry: Entry) -> dict[str, Any]:
    return {"digest": entry.digest, "read": entry.read, "error": entry.error,
            "found": [[path, _hazard_raw(hazard)] for path, hazard in entry.found]}


def _entry(raw: dict[str, Any]) -> Entry:
    return Entry(raw["digest"], dict(raw["read"]),
                 [(path, _hazard(value)) for path, value in raw["found"]], raw["error"])


def _hazard_raw(hazard: Hazard) -> dict[str, Any]:
    def span(s: Span) -> list[int]:
        return [s.line, s.column, s.end_line, s.end_column]

    return {
        "code": hazard.code, "span": span(hazard.span), "message": hazard.message,
        "severity": hazard.severity, "confidence": hazard.confidence,
        "related": [[span(r.span), r.message, r.path] for r in hazard.related],
        "fix": None if hazard.fix is None else [
            hazard.fix.message, [[span(e.span), e.new_text] for e in hazard.fix.edits]],
    }


def _hazard(raw: dict[str, Any]) -> Hazard:
    fix = None
    if raw["fix"] is not None:
        message, edits = raw["fix"]
        fix = Fix(message, tuple(TextEdit(_span(s), text) for s, text in edits))
    return Hazard(raw["code"], _span(raw["span"]), raw["message"], raw["severity"],
                  raw["confidence"],
                  tuple(Related(_span(s), message, path) for s, message, path in raw["related"]),
                  fix)
