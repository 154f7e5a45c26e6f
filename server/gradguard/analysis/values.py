"""The abstract values the interpreter tracks: tensors, their storages, and saves.

A tensor value points at one or more storages (more than one after branches join).
Views share their base's storage, because autograd's version counter is per storage:
a write through any view bumps the version every saved view of it is checked against.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from gradguard.analysis.hazard import Confidence
from gradguard.analysis.syntax import Piece
from gradguard.facts.table import ModuleFacts

if TYPE_CHECKING:
    from gradguard.analysis.fix_plans import Place, Plan, SelectRows

Kind = Literal["tensor", "unknown", "module", "optimizer", "list", "const", "function"]
# "data": ``x.data``, the same storage under a version counter of its own, so that a
# write through it goes past autograd's check (the gradients silently come out wrong).
ViewKind = Literal["view", "multi", "leaf", "nograd", "data", "hooked", "custom"]


@dataclass(eq=False, slots=True)
class Save:
    """A tensor autograd keeps for backward: which op saved it, and where."""

    piece: Piece
    node: ast.AST
    op: str
    role: str
    confidence: Confidence
    # The output of the op that made this save: the save belongs to that op's graph.
    source: Value | Lineage | None = None
    # The call sites through which the save reached the run holding it, outermost first
    # (as ``Finding.via`` for a write): where the saved tensor came back out of calls,
    # for explaining a finding. Kept for that alone; no check reads it.
    via: tuple[tuple[Piece, ast.AST], ...] = ()
    # Its graph has run backward with ``retain_graph=True``: kept for another backward,
    # which a write from now on breaks only if one comes.
    retained: bool = False


@dataclass(eq=False, slots=True)
class PendingWrite:
    """A write to saved parameters, or to tensors a retained graph keeps, reported only
    if a later backward needs them."""

    piece: Piece
    node: ast.AST
    op: str
    saves: list[Save]
    confidence: Confidence
    place: Place | None = None
    # Not a parameter's update: what to report if a backward comes (the write's layer,
    # fix plan and call sites, as it would have been reported at once).
    overwrite: DeferredOverwrite | None = None


@dataclass(frozen=True, slots=True)
class DeferredOverwrite:
    layer: NnModule | None
    plan: Plan | None
    via: tuple[tuple[Piece, ast.AST], ...]


@dataclass(eq=False, slots=True)
class Storage:
    saves: list[Save] = field(default_factory=list)
    leaf: bool = False
    param: bool = False
    # A leaf whose requires_grad was switched off (``w.requires_grad = False``, the usual
    # way to copy into a parameter): not a leaf that requires grad until switched on.
    grad_off: bool = False
    pending: list[PendingWrite] = field(default_factory=list)


@dataclass(eq=False, slots=True)
class NnModule:
    facts: ModuleFacts
    inplace: bool | None
    piece: Piece
    node: ast.AST
    # Every call site of this instance seen so far (a fix to its constructor reaches all).
    calls: set[ast.AST] = field(default_factory=set)
    # Built so that it returns its input untouched (``nn.Dropout(0.0)``).
    identity: bool = False
    # Forward hooks registered on it (``register_forward_hook``): the functions (project
    # ``FunctionInfo``s) run on (module, inputs, output) after each call; None for one
    # the analysis cannot follow, whose output is then unknown.
    hooks: tuple[object | None, ...] = ()
    # Where ``m.inplace = True`` switched it in place after it was built (piece, statement).
    switched: tuple[Piece, ast.AST] | None = None


@dataclass(eq=False, slots=True)
class Sequential:
    items: list[Value]
    piece: Piece
    node: ast.AST


@dataclass(eq=False, frozen=True)
class UserModule:
    """An instance of a class of the project: found again by its file and name."""

    path: str
    class_name: str
    # The constructor call that built it: instances built by one call (in a loop filling
    # a ModuleList) do what each other does.
    node: ast.AST | None = None


@dataclass(eq=False)
class UnknownModule:
    pass


@dataclass(eq=False)
class FunctionContext(UnknownModule):
    """The ``ctx`` a custom autograd Function's forward is given: what it saves for
    backward (with where) and what it marks dirty."""

    saved: list[tuple[Piece, ast.AST, Value]] = field(default_factory=list)
    dirty: list[Value] = field(default_factory=list)


ModuleSpec = NnModule | Sequential | UserModule | UnknownModule


@dataclass(eq=False, slots=True)
class Value:
    kind: Kind
    storages: tuple[Storage, ...] = ()
    requires_grad: bool | None = None
    view: ViewKind | None = None
    const: object = None
    items: list[Value] | None = None
    spec: ModuleSpec | None = None
    attrs: dict[str, Value] | None = None
    params: Storage | None = None
    # A torch or project name this function value stands for.
    name: str = ""
    # Which modules an optimizer updates.
    updates: list[Value] | None = None
    # What every element of a list of unknown length is like (a comprehension's element).
    element: Value | None = None
    # Taken to be a tensor without proof: it may be a list (``forward(self, x)``).
    maybe_list: bool = False
    # The values this one was computed from: which graph a backward from it runs over.
    history: tuple[Value | Lineage, ...] = ()
    # Saves a write through this value cannot break: made on one arm of a branch on a
    # tensor that this value holds only when the other arm ran (``if c: h = gate(h)``
    # saves the old ``h``, which ``h`` then holds only if the gate did not run).
    exempt: tuple[Save, ...] = ()
    # A row taken by iterating a tensor (``for t in x``): a write to it was meant to
    # change ``x``, which rebinding ``t`` to a new tensor would not.
    # (Where it was iterated, when known: the fix makes the rows single views.)
    row: SelectRows | bool = False


def unknown() -> Value:
    return Value("unknown", (Storage(),), None)


def constant(value: object) -> Value:
    return Value("const", const=value)


def is_tensorish(value: Value) -> bool:
    return value.kind in ("tensor", "unknown")


def merge_grad(a: bool | None, b: bool | None) -> bool | None:
    return a if a == b else None


def join(a: Value, b: Value) -> Value:
    """The value a name holds after two branches that bound it differently."""
    if a is b:
        return a
    if a.kind == "const" and b.kind == "const" and a.const == b.const:
        return a
    if is_tensorish(a) and is_tensorish(b):
        storages = tuple(dict.fromkeys(a.storages + b.storages))
        view = a.view if a.view == b.view else None
        if "multi" in (a.view, b.view) and None in (a.view, b.view):
            # One output of chunk/split on one path, a tensor of its own on the other
            # (``q, k, v = qkv.chunk(3)`` or ``q = proj_q(x)``): a write through it is
            # refused on the first path, so the joined value keeps the stricter kind.
            view = "multi"
        kind: Kind = "tensor" if a.kind == b.kind == "tensor" else "unknown"
        return Value(kind, storages, merge_grad(a.requires_grad, b.requires_grad), view,
                     history=(a, b), exempt=tuple(dict.fromkeys(a.exempt + b.exempt)))
    return unknown()


def any_grad(values: list[Value]) -> bool | None:
    """Whether an op over these inputs records a graph: True, False, or unknown."""
    result: bool | None = False
    for value in values:
        if value.requires_grad is True:
            return True
        if value.requires_grad is None and is_tensorish(value):
            result = None
    return result


class Lineage:
    """A value a called function computed, as one call of it sees it.

    A summary's values are computed once and shared by every call, but a backward from
    one call's result must reach that call's saves only. So each call gets stand-ins,
    made when a backward walks them (most calls never see one): a stand-in's history is
    its value's, with the function's inputs replaced by that call's own values. The
    value may itself be a stand-in of a call inside the function.
    """

    __slots__ = ("call", "inner", "_history")

    def __init__(self, call: dict[int, Value], inner: Value | Lineage) -> None:
        # The call's inputs: the function's placeholders' ids -> the caller's values.
        self.call = call
        self.inner = inner
        self._history: tuple[Value | Lineage, ...] | None = None

    @property
    def key(self) -> tuple[int, object]:
        return (id(self.call), lineage_key(self.inner))

    @property
    def history(self) -> tuple[Value | Lineage, ...]:
        if self._history is None:
            self._history = tuple(self.seen(h) for h in self.inner.history)
        return self._history

    def seen(self, value: Value | Lineage) -> Value | Lineage:
        """``value`` of the function, as this call sees it."""
        if isinstance(value, Value):
            found = self.call.get(id(value))
            if found is not None:
                return found
        return Lineage(self.call, value)


def lineage_key(value: Value | Lineage) -> object:
    return value.key if isinstance(value, Lineage) else id(value)


def ancestry(value: Value | Lineage) -> set[object]:
    """Keys of ``value`` and of every value it was computed from."""
    seen: set[object] = set()
    todo = [value]
    while todo:
        current = todo.pop()
        key = lineage_key(current)
        if key in seen:
            continue
        seen.add(key)
        todo.extend(current.history)
    return seen
