"""Incremental analysis of one document that changes: what an editor session needs.

The document is split into top-level blocks. A block whose text did not change keeps
its parse tree, so its nodes stay the same objects; a class block that is parsed again
keeps the nodes of its methods whose code did not change. An interpretation root (a
class's methods, a function, the module's statements) keeps its findings while its own
statements are the same nodes and every lookup it made finds the same again: each
function and method it looked up (or found missing), each class's bases. An edit inside
one method therefore re-runs the roots of that class and of those that ran the method,
not those that only built the class or called its other methods. A block that stops
parsing (a half-typed line) keeps its last good tree, and with it its findings, until it
parses again.

Splitting the text into blocks is redone only around the edit (``resplit_blocks``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

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
from gradguard.analysis.blocks import BlockText, resplit_blocks, split_blocks, split_lines
from gradguard.analysis.hazard import Hazard
from gradguard.analysis.program import Program, build_program
from gradguard.analysis.sameness import same_code


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
    _ranges: Mapping[cst.CSTNode, CodeRange] | None = None

    def ranges(self) -> Mapping[cst.CSTNode, CodeRange]:
        if self._ranges is None:
            assert self.tree is not None
            self._ranges = MetadataWrapper(self.tree, unsafe_skip_copy=True).resolve(
                PositionProvider
            )
        return self._ranges


def _with_methods_of(tree: cst.Module, replaced: dict[str, tuple[Block, cst.ClassDef]],
                     looked_up: set[tuple[str, str]]) -> tuple[cst.Module, list[Block]] | None:
    """``tree`` with each method that is equal to the one its class had before swapped
    for that earlier node (the tree stays equal to what was parsed), and the blocks the
    earlier nodes came from; ``None`` if nothing was swapped."""
    body = list(tree.body)
    sources: list[Block] = []
    for index, statement in enumerate(body):
        if not isinstance(statement, cst.ClassDef) or \
                statement.name.value not in replaced or \
                not isinstance(statement.body, cst.IndentedBlock):
            continue
        # Each earlier class gives its nodes to one tree only: a node is in one place.
        name = statement.name.value
        source, before = replaced.pop(name)
        earlier = {m.name.value: m for m in before.body.body
                   if isinstance(m, cst.FunctionDef) and (name, m.name.value) in looked_up}
        members = list(statement.body.body)
        swapped = False
        for position, member in enumerate(members):
            match = earlier.get(member.name.value) \
                if isinstance(member, cst.FunctionDef) else None
            if match is not None and match is not member and same_code(match, member):
                members[position] = match
                del earlier[match.name.value]  # two equal methods of one name: one swap
                swapped = True
        if swapped:
            body[index] = statement.with_changes(
                body=statement.body.with_changes(body=members))
            sources.append(source)
    if not sources:
        return None
    return tree.with_changes(body=body), sources


def _parse(text: str) -> tuple[cst.Module | None, SourceError | None]:
    try:
        return parse(text), None
    except SourceError as error:
        return None, error


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
    _pieces: list[BlockText] = field(default_factory=list)

    def update(self, text: str, selection: Selection | None = None) -> list[Hazard]:
        if self.incremental:
            self._pieces = resplit_blocks(self.text, self._pieces, text)
        else:
            self._pieces = split_blocks(text)
        self.text = text
        self.blocks = self._rebuild(self._pieces)
        program = build_program([s for b in self.blocks if b.tree is not None
                                 for s in b.tree.body])
        all_roots = roots(program, per_method=True)
        results = [self._result(program, root) for root in all_roots]
        if self.incremental:
            keys = {root.key for root in all_roots}
            self._cache = {k: v for k, v in self._cache.items() if k in keys}
        findings = merge(results)
        if not findings:
            return []
        relevant = self._relevant_blocks(program, all_roots, results)
        lines = [line.rstrip("\r\n") for line in split_lines(text)]
        return to_hazards(findings, _DocumentRanges(relevant, len(lines)), lines, selection)

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
        new: list[Block] = []
        reused: set[int] = set()
        for piece in texts:
            candidates = by_text.get(piece.text)
            if candidates:
                block = candidates.pop(0)
                reused.add(id(block))
                block.start_line = piece.start_line
                new.append(block)
                continue
            tree, error = _parse(piece.text)
            new.append(Block(piece.text, piece.start_line, tree, error,
                             line_count=piece.line_count))
        if self.incremental:
            looked_up = {key for cached in self._cache.values()
                         for key in cached.result.reads.methods}
            self._adopt_unchanged_methods(old, new, reused, looked_up)
        self._keep_last_good_trees(old, new, reused)
        return new

    @staticmethod
    def _adopt_unchanged_methods(old: list[Block], new: list[Block], reused: set[int],
                                 looked_up: set[tuple[str, str]]) -> None:
        """A re-parsed class keeps the nodes of the methods whose code is unchanged.

        Then the results of roots that only used those methods stay valid (their
        findings point at nodes still in the document), as they would had the class
        not been touched. Only methods some kept result looked up are compared: keeping
        the node of any other one would save nothing.
        """
        replaced: dict[str, tuple[Block, cst.ClassDef]] = {}
        for block in old:
            if id(block) in reused or block.tree is None:
                continue
            for statement in block.tree.body:
                if isinstance(statement, cst.ClassDef):
                    replaced[statement.name.value] = (block, statement)
        if not replaced:
            return
        for block in new:
            if block.tree is None or block.stale or block._ranges is not None:
                continue
            adopted = _with_methods_of(block.tree, replaced, looked_up)
            if adopted is not None:
                block.tree, sources = adopted
                reused.update(id(b) for b in sources)

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
                block.stale = True

    def _result(self, program: Program, root: Root) -> RootResult:
        anchors = _anchors(program, root)
        cached = self._cache.get(root.key) if self.incremental else None
        if cached is not None and self._still_valid(cached, program, anchors):
            return cached.result
        result = run_root(program, root)
        self.roots_run += 1
        if self.incremental:
            self._cache[root.key] = _Cached(result, anchors, dict(program.aliases))
        return result

    @staticmethod
    def _still_valid(cached: _Cached, program: Program,
                     anchors: tuple[cst.CSTNode, ...]) -> bool:
        if cached.aliases != program.aliases or len(cached.anchors) != len(anchors):
            return False
        if any(a is not b for a, b in zip(cached.anchors, anchors, strict=True)):
            return False
        return cached.result.reads.still_hold(program)
