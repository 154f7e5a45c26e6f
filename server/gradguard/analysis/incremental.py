"""Incremental analysis of one document that changes: what an editor session needs.

The document is split into top-level blocks, and a block whose text did not change keeps
its parse. A class block that changed is parsed again (CPython's parser takes about a
millisecond for a few hundred lines), but each of its methods whose text did not change
keeps its earlier node, and with it every summary computed from it: an edit inside one
method re-summarises that method alone. Each parsed stretch is a :class:`Piece` that
knows where its lines are now, so findings in unchanged code move with it.

An interpretation root (a method, a function, the module's statements) keeps its
findings while its own statements are the same nodes and every lookup it made (through
the summaries it replayed too) finds the same again. A summary is kept while its
function's node lives and its lookups hold. A block that stops parsing (a half-typed
line) keeps its last good tree, and with it its findings, until it parses again.
"""

from __future__ import annotations

import ast
import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import overload

from gradguard.analysis.analyze import Selection, merge, to_hazards
from gradguard.analysis.blocks import (
    BlockText,
    defined_name,
    resplit_blocks,
    split_blocks,
)
from gradguard.analysis.early_cutoff import function_named, summaries_unchanged
from gradguard.analysis.findings import Finding
from gradguard.analysis.hazard import Hazard
from gradguard.analysis.interpreter import SummaryCache
from gradguard.analysis.program import (
    FunctionNode,
    Program,
    StatementIndex,
    build_program,
    changed_names,
    index_statement,
)
from gradguard.analysis.project import Project
from gradguard.analysis.relocate import relocate
from gradguard.analysis.report import FixOf
from gradguard.analysis.roots import Root, RootResult, roots, run_root
from gradguard.analysis.syntax import Piece, SourceError, parse
from gradguard.text import source_lines


@dataclass(eq=False)
class Block:
    text: str
    start_line: int
    statements: list[ast.stmt] | None
    # Why the block's current text does not parse (its line is relative to the block).
    error: SourceError | None = None
    # Whether ``statements`` were parsed from an earlier text of this block.
    stale: bool = False
    line_count: int = 0
    piece: Piece | None = None
    indexes: list[StatementIndex] = field(default_factory=list)
    # Each method's piece, and its first line's offset in the block.
    methods: dict[FunctionNode, tuple[Piece, int]] = field(default_factory=dict)
    # (name, text) -> (node, piece) of each method, for a later parse of this class.
    by_text: dict[tuple[str, str], tuple[FunctionNode, Piece]] = field(default_factory=dict)
    _lines: list[str] | None = None

    def lines(self) -> list[str]:
        """The block's lines, without their line ends."""
        if self._lines is None:
            self._lines = source_lines(self.text)
        return self._lines

    def move_to(self, start_line: int, clamp: bool = False) -> None:
        self.start_line = start_line
        last = start_line + max(self.line_count, 1) - 1 if clamp else None
        if self.piece is not None:
            self.piece.place(start_line, last)
        for piece, offset in self.methods.values():
            piece.place(start_line + offset, last)


def _build(path: str, piece: BlockText, earlier: Block | None) -> Block:
    """The block of a changed text; a class keeps the unchanged methods of ``earlier``."""
    try:
        module = parse(piece.text)
    except SourceError as error:
        # Kept without its traceback, whose frames would keep this update's state alive.
        return Block(piece.text, piece.start_line, None, error.with_traceback(None),
                     line_count=piece.line_count)
    block = Block(piece.text, piece.start_line, module.body, line_count=piece.line_count,
                  piece=Piece(path, piece.text, 1, piece.start_line))
    for statement in module.body:
        index = index_statement(statement)
        if index.class_name is not None:
            index = replace(index, methods=tuple(
                (name, _method(block, path, node, earlier)) for name, node in index.methods))
        block.indexes.append(index)
    return block


def _method(block: Block, path: str, node: FunctionNode,
            earlier: Block | None) -> FunctionNode:
    """``node``, or the earlier node of the same method when its text is unchanged."""
    first = min([d.lineno for d in node.decorator_list] + [node.lineno])
    last = node.end_lineno or node.lineno
    text = "\n".join(block.lines()[first - 1:last])
    key = (node.name, text)
    kept = earlier.by_text.get(key) if earlier is not None else None
    if kept is not None:
        node, piece = kept
        piece.place(block.start_line + first - 1)
    else:
        piece = Piece(path, block.text, first, block.start_line + first - 1)
    block.methods[node] = (piece, first - 1)
    block.by_text[key] = (node, piece)
    return node


class _DocumentLines(Sequence[str]):
    """The document's lines, split block by block when one is asked for: the few lines
    findings are reported on, not the whole text on every keystroke."""

    def __init__(self, blocks: list[Block]) -> None:
        self.blocks = blocks
        self.firsts = [block.start_line for block in blocks]
        self.total = blocks[-1].start_line + blocks[-1].line_count - 1 if blocks else 0

    def __len__(self) -> int:
        return self.total

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self.total))]
        if index < 0:
            index += self.total
        if not 0 <= index < self.total:
            raise IndexError(index)
        block = self.blocks[bisect.bisect_right(self.firsts, index + 1) - 1]
        return block.lines()[index + 1 - block.start_line]


# The fewest summaries a document may keep, however few its first analysis made.
MIN_SUMMARIES = 256


@dataclass
class _Cached:
    # Holds while the nodes the root starts from are the same, and every lookup it made
    # (``result.reads``) finds the same.
    result: RootResult
    anchors: tuple[ast.AST, ...]
    names: frozenset[tuple[str, str]]
    paths: frozenset[str]  # of the files its lookups read


@dataclass
class IncrementalDocument:
    """The analysis state of one open document. ``incremental=False`` redoes everything."""

    incremental: bool = True
    path: str = "<document>"
    blocks: list[Block] = field(default_factory=list)
    text: str = ""
    roots_run: int = 0
    # Functions whose edit changed none of their summaries (their callers did not run).
    summaries_cut_off: int = 0
    _cache: dict[str, _Cached] = field(default_factory=dict)
    _summaries: SummaryCache = field(default_factory=lambda: SummaryCache(indexed=True))
    _program: Program | None = None
    _pieces: list[BlockText] = field(default_factory=list)
    # The ids of the pieces of the last update.
    _live: set[int] = field(default_factory=set)
    # The project whose other files this document's imports reach (None: it stands
    # alone), the programs of those it read at the last update, and that update's result.
    project: Project | None = None
    read_paths: frozenset[str] = frozenset()
    # How many times the document's program was built again (what importers read).
    revision: int = 0
    _seen: dict[str, Program | None] = field(default_factory=dict)
    _last: tuple[Selection | None, list[Hazard]] | None = None
    # How many summaries the first analysis made (what the document needs, about).
    _baseline: int | None = None
    # The last update's findings, before they became hazards (a hover explains them).
    findings: tuple[Finding, ...] = ()
    # Renders the hazards' fixes (``gradguard.fixes.edits.fix_of``; None: no fixes).
    fix_of: FixOf | None = None

    def update(self, text: str, selection: Selection | None = None) -> list[Hazard]:
        same_files = self.project is None or all(
            self.project.program(path) is seen for path, seen in self._seen.items())
        if self.incremental and text == self.text and self._last is not None and \
                same_files and self._last[0] == selection:
            return self._last[1]  # nothing it reads changed
        elsewhere = self._changed_elsewhere()
        if self.incremental:
            self._pieces = resplit_blocks(self.text, self._pieces, text)
        else:
            self._pieces = split_blocks(text)
            self._cache, self._summaries, self._live = {}, SummaryCache(indexed=True), set()
        self.text = text
        self.blocks = self._rebuild(self._pieces)
        program = self._build_program()
        self.revision += 1
        changed = None if self._program is None else \
            frozenset(changed_names(self._program, program) | elsewhere)
        before, self._program = self._program, program
        programs: Mapping[str, Program | None] = {self.path: program}
        if self.project is not None:
            self.project.add(program, text)  # files importing this one see this text
            programs = self.project.programs
        if changed and self.incremental:
            changed = self._cut_off(changed, before, programs)
        self._forget_summaries(programs, changed)
        all_roots = roots(program, per_method=True)
        entries = [self._result(programs, root, changed) for root in all_roots]
        results = [entry.result for entry in entries]
        keys = {root.key for root in all_roots}
        self._cache = {k: v for k, v in self._cache.items() if k in keys}
        self.read_paths = frozenset().union(*(entry.paths for entry in entries)) - {self.path}
        self._seen = {path: programs.get(path) for path in self.read_paths}
        self._bound_summaries()
        findings = merge(results)
        if self.project is not None and not self.project.in_library(self.path):
            findings = relocate(findings, self.project.in_library, programs)
        self.findings = tuple(findings)
        hazards = to_hazards(findings, self.path, _DocumentLines(self.blocks), selection,
                             self.fix_of) if findings else []
        self._last = (selection, hazards)
        return hazards

    def _bound_summaries(self) -> None:
        """Keep at most twice as many summaries as the first analysis made: an edit to a
        constructor gives every method new contexts, and the summaries of the old ones,
        still valid, would never be used again. Those used least recently go first."""
        count = len(self._summaries.entries)
        if self._baseline is None:
            self._baseline = max(count, MIN_SUMMARIES)
        elif count > 2 * self._baseline:
            self._summaries.trim(0.5)

    def _cut_off(self, changed: frozenset[tuple[str, str]], before: Program | None,
                 programs: Mapping[str, Program | None]) -> frozenset[tuple[str, str]]:
        """``changed`` without the functions whose summaries all came out the same
        from their new code: what called them stands."""
        same = set()
        for path, name in changed:
            earlier = before if path == self.path else self._seen.get(path)
            old = function_named(earlier, name)
            new = function_named(programs.get(path), name)
            if old is not None and new is not None and old.node is not new.node and \
                    summaries_unchanged(self._summaries, programs, old, new):
                same.add((path, name))
                self.summaries_cut_off += 1
        return changed - same

    def _changed_elsewhere(self) -> set[tuple[str, str]]:
        """What the other files this document read define differently now."""
        changed: set[tuple[str, str]] = set()
        if self.project is None:
            return changed
        for path, before in self._seen.items():
            after = self.project.program(path)
            if after is not before:
                changed |= changed_names(before, after, path)
        return changed

    @property
    def errors(self) -> list[tuple[int, int, str]]:
        """(line, column, message) of every block that does not parse as it stands."""
        return [(b.start_line + max(b.error.line, 1) - 1, b.error.column, str(b.error))
                for b in self.blocks if b.error is not None]

    def _build_program(self) -> Program:
        entries = []
        indexes = []
        method_pieces: dict[ast.AST, Piece] = {}
        for block in self.blocks:
            if block.statements is None or block.piece is None:
                continue
            entries += [(block.piece, statement) for statement in block.statements]
            indexes += block.indexes
            method_pieces.update((node, piece) for node, (piece, _) in block.methods.items())
        return build_program(self.path, entries, indexes, method_pieces)

    def _rebuild(self, texts: list[BlockText]) -> list[Block]:
        old = self.blocks if self.incremental else []
        same_text: dict[str, list[Block]] = {}
        for block in old:
            # A block that did not parse and still does not keeps its error, unparsed.
            if not block.stale:
                same_text.setdefault(block.text, []).append(block)
        kept: list[Block | None] = []
        reused: set[int] = set()
        for piece in texts:
            candidates = same_text.get(piece.text)
            same = candidates.pop(0) if candidates else None
            if same is not None:
                reused.add(id(same))
                same.move_to(piece.start_line)
            kept.append(same)
        # A changed class keeps the unchanged methods of its earlier block of that name.
        earlier: dict[str, Block] = {}
        for block in old:
            name = defined_name(block.text)
            if id(block) not in reused and block.statements is not None and name is not None:
                earlier.setdefault(name, block)
        new = []
        for piece, same in zip(texts, kept, strict=True):
            if same is None:
                same = _build(self.path, piece,
                              earlier.pop(defined_name(piece.text) or "", None))
            new.append(same)
        self._keep_last_good_trees(old, new, reused)
        return new

    @staticmethod
    def _keep_last_good_trees(old: list[Block], new: list[Block], reused: set[int]) -> None:
        """A block that does not parse inherits the tree of the block it replaced."""
        broken = [b for b in new if b.statements is None]
        if not broken or not old:
            return
        replaced = [b for b in old if id(b) not in reused and b.statements is not None]
        for block in broken:
            nearest = min(replaced, key=lambda b: abs(b.start_line - block.start_line),
                          default=None)
            if nearest is not None and abs(nearest.start_line - block.start_line) <= 2:
                replaced.remove(nearest)
                block.statements, block.piece = nearest.statements, nearest.piece
                block.indexes, block.methods = nearest.indexes, nearest.methods
                block.by_text = nearest.by_text
                block.stale = True
                block.move_to(block.start_line, clamp=True)

    def _forget_summaries(self, programs: Mapping[str, Program | None],
                          changed: frozenset[tuple[str, str]] | None) -> None:
        """Drop the summaries whose function is gone or whose lookups no longer hold."""
        live = {id(b.piece) for b in self.blocks if b.piece is not None}
        live |= {id(piece) for b in self.blocks for piece, _ in b.methods.values()}
        gone, self._live = self._live - live, live
        self._summaries.forget(gone, changed, programs)

    def _result(self, programs: Mapping[str, Program | None], root: Root,
                changed: frozenset[tuple[str, str]] | None) -> _Cached:
        cached = self._cache.get(root.key) if self.incremental else None
        if cached is not None and _same(cached.anchors, root.anchors) and (
                changed is not None and changed.isdisjoint(cached.names)
                or cached.result.reads.still_hold(programs)):
            return cached
        result = run_root(programs, root, self._summaries)
        self.roots_run += 1
        entry = _Cached(result, root.anchors, result.reads.names(), result.reads.paths())
        self._cache[root.key] = entry
        return entry


def _same(a: tuple[ast.AST, ...], b: tuple[ast.AST, ...]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))
