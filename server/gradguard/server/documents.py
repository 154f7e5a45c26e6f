"""The open documents: their text and version, and what the analysis last said about them.

A *unit* is what the analysis sees as one program: a text document, or a notebook whose
code cells are read in order as one program. Each unit owns an ``IncrementalDocument``
(touched only by the analysis thread), the settings it resolved to, and its latest
``Outcome``: the diagnostics of each of its targets (the document itself, or each
cell), for one ``(version, generation)``. A generation counts changes other than the
text's (settings, what the probe or the workspace found), so such a change makes every
outcome stale without touching versions.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from lsprotocol import types

from gradguard.analysis.hazard import Hazard
from gradguard.analysis.incremental import IncrementalDocument
from gradguard.analysis.project import Project
from gradguard.fixes import fix_of
from gradguard.server.positions import EditableLines, Encoding, LineIndex
from gradguard.server.probe_marks import ProbeMark
from gradguard.server.settings import Settings


class TextBuffer:
    """One text document as the client edits it (a file, or a notebook cell)."""

    def __init__(self, uri: str, text: str, version: int | None, language_id: str = "") -> None:
        self.uri = uri
        self.version = version
        self.language_id = language_id
        self._lines = EditableLines(text)
        self._index: LineIndex | None = None

    @property
    def text(self) -> str:
        return self._lines.text

    @property
    def index(self) -> LineIndex:
        """The text's line index, built when asked for (once per analysis, not per edit)."""
        if self._index is None or self._index.text is not self._lines.text:
            self._index = LineIndex(self._lines.text)
        return self._index

    def apply(self, changes: Sequence[types.TextDocumentContentChangeEvent],
              version: int | None, encoding: Encoding) -> None:
        """Apply ``didChange`` content changes in order; each is relative to the previous."""
        for change in changes:
            self._lines.apply(change, encoding)
        self._index = None
        self.version = version


@dataclass(frozen=True)
class Target:
    """A text document that diagnostics are shown in, and where it sits in its unit's program.

    ``first_line`` is the 0-based line of the program where the target's text starts
    (0 for a plain document; the cell's offset in a notebook). ``index`` is the target's
    own text, which positions are converted against.
    """

    uri: str
    version: int | None
    first_line: int
    index: LineIndex


@dataclass(frozen=True)
class Revealed:
    """The hazards in a file that the workspace diagnostics found from the analysis of
    another file (an importer's), for the text of the file they hold for."""

    text: str
    hazards: tuple[Hazard, ...]


@dataclass(frozen=True)
class Snapshot:
    """Everything one analysis needs, taken on the event loop and then read-only."""

    key: str
    version: int
    generation: int
    text: str
    targets: tuple[Target, ...]
    settings: Settings
    path: str | None
    encoding: Encoding
    # What the torch probe found in this unit's file, anchored to the text it ran.
    probe: tuple[ProbeMark, ...] = ()
    # What importers of this unit's file reveal in it (workspace diagnostics only).
    revealed: Revealed | None = None


@dataclass(frozen=True)
class Outcome:
    """The diagnostics of every target of a unit, for one version and settings generation."""

    version: int
    generation: int
    diagnostics: dict[str, list[types.Diagnostic]]
    result_ids: dict[str, str]
    # Each target's own version (a cell's, in a notebook), for publishDiagnostics.
    versions: dict[str, int | None]


@dataclass(eq=False)
class Unit:
    """What the server keeps for one program it analyses (see the module docstring)."""

    key: str
    path: str | None
    settings: Settings
    generation: int = 0
    analysis: IncrementalDocument = field(
        default_factory=lambda: IncrementalDocument(fix_of=fix_of))
    # The workspace's files, which this unit's imports reach (None: it stands alone).
    project: Project | None = None
    latest: Outcome | None = None
    task: asyncio.Task[None] | None = None
    last_change: float = float("-inf")
    closed: bool = False
    waiters: list[asyncio.Future[None]] = field(default_factory=list)
    probe: tuple[ProbeMark, ...] = ()
    revealed: Revealed | None = None
    # The fix engine's fix-all of the unit, each target's text (None: nothing can be
    # fixed), for one (version, generation).
    fixed_all: tuple[tuple[int, int], tuple[str, ...] | None] | None = None

    @property
    def version(self) -> int:
        raise NotImplementedError

    def targets(self) -> tuple[Target, ...]:
        raise NotImplementedError

    def program(self) -> str:
        raise NotImplementedError

    def buffer(self, uri: str) -> TextBuffer | None:
        raise NotImplementedError

    def fresh_analysis(self, incremental: bool) -> IncrementalDocument:
        """A new analysis state for this unit (its file's path, its workspace's files)."""
        if self.path is None:
            return IncrementalDocument(incremental=incremental, fix_of=fix_of)
        return IncrementalDocument(incremental=incremental, path=os.path.abspath(self.path),
                                   project=self.project, fix_of=fix_of)

    def is_current(self, outcome: Outcome | None) -> bool:
        return outcome is not None and (outcome.version, outcome.generation) == (
            self.version, self.generation)

    def snapshot(self, encoding: Encoding) -> Snapshot:
        return Snapshot(self.key, self.version, self.generation, self.program(),
                        self.targets(), self.settings, self.path, encoding, self.probe,
                        self.revealed)

    def settle(self, outcome: Outcome | None) -> None:
        """Record a new outcome (``None``: closed) and wake whoever waits for one."""
        if outcome is not None:
            self.latest = outcome
        waiters, self.waiters = self.waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    async def current(self) -> Outcome | None:
        """The outcome for the unit's current version and settings, once the analysis has it.

        ``None`` if the unit is closed before that.
        """
        while not self.closed and not self.is_current(self.latest):
            waiter = asyncio.get_running_loop().create_future()
            self.waiters.append(waiter)
            await waiter
        return None if self.closed else self.latest


@dataclass(eq=False)
class TextUnit(Unit):
    """A plain text document: its one target is itself."""

    text_buffer: TextBuffer = field(default_factory=lambda: TextBuffer("", "", 0))

    @property
    def version(self) -> int:
        return self.text_buffer.version or 0

    def targets(self) -> tuple[Target, ...]:
        buffer = self.text_buffer
        return (Target(buffer.uri, buffer.version, 0, buffer.index),)

    def program(self) -> str:
        return self.text_buffer.text

    def buffer(self, uri: str) -> TextBuffer | None:
        return self.text_buffer if uri == self.text_buffer.uri else None
