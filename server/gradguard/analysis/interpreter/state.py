"""What the interpreter carries while it runs: frames, bounds, the run under way, and the
:class:`State` that the parts of :class:`Evaluator` (expressions, statements, calls,
the torch API, fix planning) share."""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from gradguard.analysis.autograd import Autograd
from gradguard.analysis.fix_plans import Place, Plan
from gradguard.analysis.names import dotted_name
from gradguard.analysis.program import FunctionInfo, Program, Reads
from gradguard.analysis.summaries import Context, Guard, Summary
from gradguard.analysis.syntax import Piece
from gradguard.analysis.values import NnModule, Sequential, Value, join
from gradguard.facts.table import Facts

MAX_DEPTH = 8
# How far a root is followed, in statements and expressions run: a bound on its time.
# Run inline (``State.inline_methods``) a step costs about half of what it costs
# through summaries (no context to key, copy and replay per call), so the same time
# allows twice the steps.
MAX_STEPS = 20_000
MAX_STEPS_INLINE = 40_000
MAX_UNROLL = 32

# Constants whose value is not known: a number (``len(x)``, ``x.shape[0]``), a string
# (``'o_%d' % k``, an f-string; indexing with one reads a mapping, not a tensor).
UNKNOWN_INT = object()
UNKNOWN_STR = object()
UNKNOWN = (UNKNOWN_INT, UNKNOWN_STR)
# The name of a list value that stands for a mapping of unknown keys (``dict(pairs)``):
# its element is a (key, item) pair.
MAPPING = "<mapping>"


def is_text(value: Value) -> bool:
    return value.kind == "const" and (isinstance(value.const, str) or
                                      value.const is UNKNOWN_STR)

GRAD_OFF = {
    "torch.no_grad",
    "torch.inference_mode",
    "torch.autograd.no_grad",
    "torch.autograd.grad_mode.no_grad",
}
GRAD_ON = {"torch.enable_grad", "torch.autograd.enable_grad"}


def _built_alike(a: Value, b: Value) -> bool:
    """Whether two modules were built by the same constructor call."""
    node_a = getattr(a.spec, "node", None)
    return node_a is not None and node_a is getattr(b.spec, "node", None)


def text_of(piece: Piece, node: ast.AST) -> str:
    """The source of ``node`` as a label (computed once a node)."""
    label: str | None = getattr(node, "_gg_label", None)
    if label is None:
        name = dotted_name(node)
        label = name if name is not None else piece.segment(node).strip()
        node._gg_label = label  # type: ignore[attr-defined]
    return label


class OutOfBudget(Exception):
    """The interpretation of one root took too many steps; its findings so far stand."""



def by_dim(args: list[Value], kwargs: dict[str, Value]) -> bool:
    """Whether a reduction is given a dimension (``x.max(1)``, ``torch.max(x, dim=1)``)
    rather than a second tensor (``torch.max(x, y)``)."""
    return "dim" in kwargs or bool(args) and args[0].kind == "const"

@dataclass
class Position:
    statements: Sequence[ast.stmt]
    index: int = 0


@dataclass
class Frame:
    env: dict[str, Value]
    piece: Piece
    program: Program
    self_value: Value | None = None
    returns: list[Value] = field(default_factory=list)
    # Whether every way through the statements run so far returned or raised: what
    # follows them in their block does not run.
    done: bool = False


AttrJournal = list[tuple[dict[str, Value], str, Value | None]]


class SummaryCache:
    """Summaries by function and context, shared by every root of an analysis (and, in
    an editor, kept from one edit to the next while they hold); ``trim`` drops those
    used least recently."""

    def __init__(self, indexed: bool = False) -> None:
        # Whether entries are indexed by what they looked up, for an editor to drop those
        # an edit invalidates (a run over files that do not change needs no index).
        self.indexed = indexed
        # By function and context key, then by the values of the constants it looked at;
        # in the order they were last used (a dict keeps the order of insertion).
        self.entries: dict[tuple[object, ...], Summary] = {}
        self.variants: dict[tuple[object, ...], list[Guard]] = {}
        self.computed = 0
        self.dropped = 0
        # Which entries looked up each name, and which were computed from each piece.
        self._by_name: dict[tuple[str, str], set[tuple[object, ...]]] = {}
        self._by_piece: dict[int, set[tuple[object, ...]]] = {}
        self._by_path: dict[str, set[tuple[object, ...]]] = {}

    def find(self, key: tuple[object, ...], context: Context) -> Summary | None:
        for guard in self.variants.get(key, []):
            if context.matches(guard):
                entry = (key, guard)
                summary = self.entries.pop(entry)
                self.entries[entry] = summary  # the most recently used now
                return summary
        return None

    def add(self, context_key: tuple[object, ...], summary: Summary) -> None:
        key = (context_key, summary.guard)
        if key not in self.entries:
            self.variants.setdefault(context_key, []).append(summary.guard)
        else:
            self._drop({key})
            self.variants.setdefault(context_key, []).append(summary.guard)
        self.entries[key] = summary
        self._by_path.setdefault(summary.function.path, set()).add(key)
        if not self.indexed:
            summary.before = {}  # only an editor computes a summary again to compare
        if self.indexed:
            for name in summary.names:
                self._by_name.setdefault(name, set()).add(key)
            for piece in _pieces_of(summary):
                self._by_piece.setdefault(piece, set()).add(key)

    def summaries_of(self, piece: Piece, node: ast.AST
                     ) -> list[tuple[tuple[object, ...], Summary]]:
        """(context key, summary) of each summary of the function at ``node``."""
        found = []
        for key in self._by_piece.get(id(piece), ()):
            summary = self.entries.get(key)
            if summary is not None and summary.function.node is node:
                found.append((key[0], summary))  # type: ignore[misc]
        return found  # type: ignore[return-value]

    def trim(self, fraction: float) -> None:
        """Drop that fraction of the summaries, those used least recently first (each is
        computed again if a call needs it). Called between runs: none is in use then."""
        count = int(len(self.entries) * fraction)
        stale = set(list(self.entries)[:count])
        self.dropped += len(stale)
        self._drop(stale)

    def forget_file(self, path: str) -> None:
        """Drop the summaries of one file's functions (it is no longer analysed)."""
        self._drop(self._by_path.pop(path, set()))

    def forget(self, gone_pieces: set[int], changed: frozenset[tuple[str, str]] | None,
               programs: Mapping[str, Program | None]) -> None:
        """Drop the summaries of pieces that are gone, and those whose lookups named
        something that changed and no longer find the same (``None``: check them all)."""
        doubtful: set[tuple[object, ...]] = set()
        for piece in gone_pieces:
            doubtful |= self._by_piece.pop(piece, set())
        stale = set(doubtful)
        names = self._by_name.keys() if changed is None else changed & self._by_name.keys()
        for name in list(names):
            for key in self._by_name.get(name, ()):
                if key not in stale:
                    summary = self.entries.get(key)
                    if summary is not None and not summary.reads.still_hold(programs):
                        stale.add(key)
        self._drop(stale)

    def _drop(self, stale: set[tuple[object, ...]]) -> None:
        for key in stale:
            summary = self.entries.pop(key, None)
            if summary is None:
                continue
            context_key, guard = key
            guards = self.variants.get(context_key)  # type: ignore[call-overload]
            if guards is not None and guard in guards:
                guards.remove(guard)
                if not guards:  # its key is the shape of a whole context: large
                    del self.variants[context_key]  # type: ignore[arg-type]
            for name in summary.names if self.indexed else ():
                keys = self._by_name.get(name)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del self._by_name[name]
            for piece in _pieces_of(summary) if self.indexed else ():
                _discard(self._by_piece, piece, key)
            _discard(self._by_path, summary.function.path, key)
            for storage in summary.storages:  # break their cycles: freed at once
                storage.saves, storage.pending = [], []


def _pieces_of(summary: Summary) -> set[int]:
    """The pieces a summary depends on: its function's, and those its context names by
    node (a layer built there, a function passed in). Once a piece is gone its nodes
    never come again, and no later call can have that context."""
    pieces = {id(summary.function.piece)}
    for obj in summary.placeholders:
        if isinstance(obj, (NnModule, Sequential)):
            pieces.add(id(obj.piece))
        elif isinstance(obj, Value) and isinstance(obj.const, FunctionInfo):
            pieces.add(id(obj.const.piece))
    return pieces


def _discard(index: dict[Any, set[tuple[object, ...]]], at: object,
             key: tuple[object, ...]) -> None:
    keys = index.get(at)
    if keys is not None:
        keys.discard(key)
        if not keys:
            del index[at]


@dataclass
class RunState:
    """What one run of the interpreter carries: a root's run, or a summary's being
    computed. A summary's run gets a fresh one and its caller's comes back untouched
    afterwards, so nothing is saved and restored field by field."""

    autograd: Autograd
    # Every lookup of a class, function or method, found or not: when results hold.
    reads: Reads = field(default_factory=Reads)
    # The constant inputs of the summary being computed that a context leaves out (by
    # id), and those of them the run looked at.
    watched: dict[int, int] = field(default_factory=dict)
    observed: set[int] = field(default_factory=set)
    # The statement being interpreted and the statement list holding it (for fixes).
    place: Place | None = None
    block: Sequence[ast.stmt] = ()
    # Attribute assignments since a branch began: (attributes, name, value before).
    attr_journal: AttrJournal | None = None
    # The statement lists of the current function being run, with the current index.
    positions: list[Position] = field(default_factory=list)
    # The lowest stack level a call was cut short at (recursion into it; -1: the depth
    # bound) since the run began; None: none was.
    cut: int | None = None


@dataclass
class State:
    """What the parts of one evaluator share: the tables, the programs, the summaries,
    the run under way, and the bounds on it. Each part holds this one object (never a
    copy: ``run`` is swapped while a summary is computed)."""

    facts: Facts
    # Every program a user module may belong to, by path (filled as files are read).
    programs: Mapping[str, Program | None]
    cache: SummaryCache
    # The run under way (a summary's, while one is computed).
    run: RunState
    steps: int = 0
    # The functions being run, innermost last.
    stack: list[ast.AST] = field(default_factory=list)
    # How many enclosing loops are in their second pass.
    repeating: int = 0
    # The module-level frame of each script being run, by path: the globals a function
    # it calls reads (``def train(): for p in model.parameters(): ...``).
    scripts: dict[str, Frame] = field(default_factory=dict)
    # Whether a method of a module instance runs in its caller's world instead of through
    # a summary (see ``Calls.call_function``).
    inline_methods: bool = False
    max_steps: int = MAX_STEPS

    # -- bounds -----------------------------------------------------------------------

    def tick(self) -> None:
        self.steps += 1
        if self.steps > self.max_steps:
            raise OutOfBudget

    def program_at(self, path: str) -> Program:
        program = self.programs.get(path)
        assert program is not None, f"no program for {path}"
        return program

    def enters_library(self, path: str) -> bool:
        """Whether a function of this file is an installed library's: a call into one
        is a call site its findings are moved onto (``relocate.py``), from a script's
        top level too."""
        program = self.programs.get(path)
        project = None if program is None else program.project
        return project is not None and project.in_library(path)

    def observe(self, *values: Value | None) -> None:
        """The run looks at these constants' values: its summary holds only for them."""
        watched = self.run.watched
        if watched:
            for value in values:
                if value is not None and id(value) in watched:
                    self.run.observed.add(id(value))

    def retains(self, kwargs: dict[str, Value]) -> bool:
        """Whether a backward keeps its graph (``retain_graph=``, ``create_graph=``)."""
        for key in ("retain_graph", "create_graph"):
            value = kwargs.get(key)
            self.observe(value)
            if value is not None and not (value.kind == "const" and not value.const):
                return True
        return False

    def join(self, a: Value, b: Value) -> Value:
        if a is not b and a.kind == "const" and b.kind == "const":
            self.observe(a, b)  # equal constants join to the constant
        if a.kind == b.kind == "module" and _built_alike(a, b):
            return a  # two layers built by one line: either does what the other does
        return join(a, b)

    @contextmanager
    def fixing(self, plan: Plan | None) -> Iterator[None]:
        """Findings made inside carry this fix plan."""
        outer = self.run.autograd.plan
        self.run.autograd.plan = plan
        try:
            yield
        finally:
            self.run.autograd.plan = outer
