"""Incremental analysis of one document that changes: what an editor session needs.

The document is split into top-level blocks. A block whose text did not change keeps
its parse tree, so its nodes stay the same objects; in a class block that changed, only
the statements of its body around the change are parsed again (``reparse``), and the
others keep their nodes. An interpretation root (a method, a function, the module's
statements) keeps its findings while its own statements are the same nodes and every
lookup it made finds the same again: each function and method it looked up (or found
missing), each class's bases. An edit inside one method therefore re-runs that method's
root and those that ran the method, not those that only built the class or called its
other methods. A block that stops parsing (a half-typed line) keeps its last good tree,
and with it its findings, until it parses again.

Splitting the text into blocks is redone only around the edit (``resplit_blocks``).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import overload

import libcst as cst
from libcst.metadata import CodePosition, CodeRange, MetadataWrapper, PositionProvider

from gradguard.analysis.analyze import (
    Root,
    RootResult,
    Selection,
    SourceError,
    merge,
    parse,
    roots,
    run_root,
    to_hazards,
)
from gradguard.analysis.blocks import (
    BlockText,
    defined_name,
    resplit_blocks,
    split_blocks,
    split_lines,
)
from gradguard.analysis.hazard import Hazard
from gradguard.analysis.program import (
    Program,
    StatementIndex,
    build_program,
    index_statement,
)
from gradguard.analysis.reparse import Layout, layout_of, reparse_class


@dataclass(eq=False)
class Block:
    text: str
    start_line: int
    tree: cst.Module | None
    # Why the block's current text does not parse (its line is relative to the block).
    error: SourceError | None = None
    # Whether ``tree`` was parsed from an earlier text of this block (a syntax error now).
    stale: bool = False
    line_count: int = 0
    # The text ``tree`` was parsed from: ``text``, or its last version that parsed.
    parsed_text: str = ""
    # Where a class block's body statements lie in ``parsed_text`` (found when needed).
    layout: Layout | None = None
    _ranges: Mapping[cst.CSTNode, CodeRange] | None = None
    _lines: list[str] | None = None

    def reparsed(self, piece: BlockText) -> Block | None:
        """This class block's tree after its text became ``piece``'s, parsing only the
        statements the change touched; ``None`` when that cannot be done."""
        if self.tree is None:
            return None
        if self.layout is None:
            self.layout = layout_of(self.tree, self.parsed_text)
            if self.layout is None:
                return None
        done = reparse_class(self.parsed_text, self.tree, self.layout, piece.text)
        if done is None:
            return None
        tree, layout = done
        return Block(piece.text, piece.start_line, tree, line_count=piece.line_count,
                     parsed_text=piece.text, layout=layout)

    def lines(self) -> list[str]:
        """The block's lines, without their line ends."""
        if self._lines is None:
            self._lines = [line.rstrip("\r\n") for line in split_lines(self.text)]
        return self._lines

    def ranges(self) -> Mapping[cst.CSTNode, CodeRange]:
        if self._ranges is None:
            assert self.tree is not None
            self._ranges = MetadataWrapper(self.tree, unsafe_skip_copy=True).resolve(
                PositionProvider
            )
        return self._ranges


def _parse(text: str) -> tuple[cst.Module | None, SourceError | None]:
    try:
        return parse(text), None
    except SourceError as error:
        return None, error


def _built(piece: BlockText, edited: dict[str, Block], reused: set[int]) -> Block:
    """The block of a changed text: parsed again in part from the earlier block that
    defined the same class (which is then used up), else parsed whole."""
    earlier = edited.get(defined_name(piece.text) or "")
    if earlier is not None and id(earlier) not in reused:
        block = earlier.reparsed(piece)
        if block is not None:
            reused.add(id(earlier))
            return block
    tree, error = _parse(piece.text)
    return Block(piece.text, piece.start_line, tree, error, line_count=piece.line_count,
                 parsed_text=piece.text)


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


class _DocumentRanges(Mapping[cst.CSTNode, CodeRange]):
    """Node positions in document coordinates, looked up in the block holding each node."""

    def __init__(self, blocks: list[Block], total_lines: int) -> None:
        self.blocks = [b for b in blocks if b.tree is not None]
        self.total_lines = max(total_lines, 1)
        self.owner: dict[int, Block] = {}
        for block in self.blocks:
            assert block.tree is not None
            for statement in block.tree.body:
                self.owner[id(statement)] = block

    def _block_of(self, node: cst.CSTNode) -> Block:
        for block in self.blocks:
            if node in block.ranges():
                return block
        raise KeyError(node)

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        block = self._block_of(node)
        code_range = block.ranges()[node]
        shift = block.start_line - 1
        last = block.start_line + max(block.line_count, 1) - 1
        start_line = min(code_range.start.line + shift, last)
        end_line = min(code_range.end.line + shift, last)
        start = CodePosition(start_line, code_range.start.column)
        end = CodePosition(end_line, code_range.end.column)
        if block.stale and end_line == last:
            end = CodePosition(end_line, 0)
            start = CodePosition(start_line, 0) if start_line == last else start
        return CodeRange(start, end)

    def __iter__(self) -> Iterator[cst.CSTNode]:
        raise NotImplementedError("positions are looked up one node at a time")

    def __len__(self) -> int:
        return len(self.blocks)


@dataclass
class _Cached:
    # Holds while the statements the root starts from are the very same parsed nodes,
    # the imports are the same, and every lookup it made (``result.reads``) finds the same.
    result: RootResult
    anchors: tuple[cst.CSTNode, ...]
    aliases: dict[str, str]
    # The classes and functions its lookups named.
    names: frozenset[str]


def _changed_definitions(before: Program | None, after: Program) -> frozenset[str] | None:
    """The names whose class or function is another node (or none) in ``after``;
    ``None`` when anything may have changed."""
    if before is None or before.aliases != after.aliases:
        return None  # an import changed: every lookup is checked
    changed = set()
    for name in before.classes.keys() | after.classes.keys():
        old, new = before.classes.get(name), after.classes.get(name)
        if old is None or new is None or old.node is not new.node:
            changed.add(name)
    for name in before.functions.keys() | after.functions.keys():
        if before.functions.get(name) is not after.functions.get(name):
            changed.add(name)
    return frozenset(changed)


def _definition(program: Program, name: str) -> cst.CSTNode | None:
    if name in program.classes:
        return program.classes[name].node
    return program.functions.get(name)


def _anchors(program: Program, root: Root) -> tuple[cst.CSTNode, ...]:
    if root.statement is not None:
        return (root.statement,)
    return tuple(s for s in program.statements
                 if not isinstance(s, (cst.FunctionDef, cst.ClassDef)))


@dataclass
class IncrementalDocument:
    """The analysis state of one open document. ``incremental=False`` redoes everything."""

    incremental: bool = True
    blocks: list[Block] = field(default_factory=list)
    text: str = ""
    roots_run: int = 0
    _cache: dict[str, _Cached] = field(default_factory=dict)
    # The classes and functions whose definition is not the node it was in the last
    # update: every cached result held then, so only lookups of these need checking.
    _changed: frozenset[str] | None = None
    _program: Program | None = None
    # Each top-level statement's own index entry, by node, while the node is in use.
    _index: dict[int, tuple[cst.BaseStatement, StatementIndex]] = field(default_factory=dict)
    _pieces: list[BlockText] = field(default_factory=list)

    def update(self, text: str, selection: Selection | None = None) -> list[Hazard]:
        if self.incremental:
            self._pieces = resplit_blocks(self.text, self._pieces, text)
        else:
            self._pieces = split_blocks(text)
        self.text = text
        self.blocks = self._rebuild(self._pieces)
        statements: list[cst.BaseStatement] = [
            s for b in self.blocks if b.tree is not None for s in b.tree.body]
        program = build_program(statements, self._indexes(statements))
        self._changed = _changed_definitions(self._program, program)
        self._program = program
        all_roots = roots(program, per_method=True)
        results = [self._result(program, root) for root in all_roots]
        if self.incremental:
            keys = {root.key for root in all_roots}
            self._cache = {k: v for k, v in self._cache.items() if k in keys}
        findings = merge(results)
        if not findings:
            return []
        relevant = self._relevant_blocks(program, all_roots, results)
        lines = _DocumentLines(self.blocks)
        return to_hazards(findings, _DocumentRanges(relevant, len(lines)), lines, selection)

    def _indexes(self, statements: list[cst.BaseStatement]) -> list[StatementIndex]:
        known = self._index if self.incremental else {}
        entries = [known.get(id(s)) or (s, index_statement(s)) for s in statements]
        self._index = {id(s): (s, index) for s, index in entries}
        return [index for _, index in entries]

    @property
    def errors(self) -> list[tuple[int, int, str]]:
        """(line, column, message) of every block that does not parse as it stands."""
        return [(b.start_line + max(b.error.line, 1) - 1, b.error.column, str(b.error))
                for b in self.blocks if b.error is not None]

    def _relevant_blocks(self, program: Program, all_roots: list[Root],
                         results: list[RootResult]) -> list[Block]:
        """The blocks findings can point into: their roots' and what those followed."""
        owner = {id(s): b for b in self.blocks if b.tree is not None for s in b.tree.body}
        chosen: dict[int, Block] = {}
        for root, result in zip(all_roots, results, strict=True):
            if not result.findings:
                continue
            nodes = [root.owner] if root.owner is not None else list(_anchors(program, root))
            nodes += [n for n in (_definition(program, u) for u in result.used) if n]
            for node in nodes:
                block = owner.get(id(node))
                if block is not None:
                    chosen[id(block)] = block
        return [b for b in self.blocks if id(b) in chosen]

    def _rebuild(self, texts: list[BlockText]) -> list[Block]:
        old = self.blocks if self.incremental else []
        by_text: dict[str, list[Block]] = {}
        for block in old:
            if not block.stale and block.tree is not None:
                by_text.setdefault(block.text, []).append(block)
        kept: list[Block | None] = []
        reused: set[int] = set()
        for piece in texts:
            candidates = by_text.get(piece.text)
            same = candidates.pop(0) if candidates else None
            if same is not None:
                reused.add(id(same))
                same.start_line = piece.start_line
            kept.append(same)
        # A changed class is parsed again in part from its earlier block of the same name.
        edited: dict[str, Block] = {}
        for block in old:
            name = defined_name(block.text)
            if id(block) not in reused and block.tree is not None and name is not None:
                edited.setdefault(name, block)
        new = [same if same is not None else _built(piece, edited, reused)
               for piece, same in zip(texts, kept, strict=True)]
        self._keep_last_good_trees(old, new, reused)
        return new

    @staticmethod
    def _keep_last_good_trees(old: list[Block], new: list[Block], reused: set[int]) -> None:
        """A block that does not parse inherits the tree of the block it replaced."""
        broken = [b for b in new if b.tree is None]
        if not broken or not old:
            return
        replaced = [b for b in old if id(b) not in reused and b.tree is not None]
        for block in broken:
            nearest = min(replaced, key=lambda b: abs(b.start_line - block.start_line),
                          default=None)
            if nearest is not None and abs(nearest.start_line - block.start_line) <= 2:
                replaced.remove(nearest)
                block.tree = nearest.tree
                block.parsed_text = nearest.parsed_text
                block.layout = nearest.layout
                block.stale = True

    def _result(self, program: Program, root: Root) -> RootResult:
        anchors = _anchors(program, root)
        cached = self._cache.get(root.key) if self.incremental else None
        if cached is not None and self._still_valid(cached, program, anchors, self._changed):
            return cached.result
        result = run_root(program, root)
        self.roots_run += 1
        if self.incremental:
            self._cache[root.key] = _Cached(result, anchors, dict(program.aliases),
                                            result.reads.names())
        return result

    @staticmethod
    def _still_valid(cached: _Cached, program: Program, anchors: tuple[cst.CSTNode, ...],
                     changed: frozenset[str] | None) -> bool:
        if len(cached.anchors) != len(anchors) or \
                any(a is not b for a, b in zip(cached.anchors, anchors, strict=True)):
            return False
        if changed is not None:
            # Every cached result held for the last update, and the imports are the same.
            return changed.isdisjoint(cached.names) or cached.result.reads.still_hold(program)
        return cached.aliases == program.aliases and cached.result.reads.still_hold(program)
