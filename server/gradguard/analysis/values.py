"""The abstract values the interpreter tracks: tensors, their storages, and saves.

A tensor value points at one or more storages (more than one after branches join).
Views share their base's storage, because autograd's version counter is per storage:
a write through any view bumps the version every saved view of it is checked against.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import libcst as cst

from gradguard.analysis.hazard import Confidence
from gradguard.facts.table import ModuleFacts
from gradguard.fixes.plans import Place

Kind = Literal["tensor", "unknown", "module", "optimizer", "list", "const", "function"]
ViewKind = Literal["view", "multi", "leaf", "nograd"]


@dataclass(eq=False)
class Save:
    """A tensor autograd keeps for backward: which op saved it, and where."""

    node: cst.CSTNode
    op: str
    role: str
    confidence: Confidence
    # The output of the op that made this save: the save belongs to that op's graph.
    source: object = None


@dataclass(eq=False)
class PendingWrite:
    """A write to saved parameters, reported only if a later backward needs them."""

    node: cst.CSTNode
    op: str
    saves: list[Save]
    confidence: Confidence
    place: Place | None = None


@dataclass(eq=False)
class Storage:
    saves: list[Save] = field(default_factory=list)
    leaf: bool = False
    param: bool = False
    pending: list[PendingWrite] = field(default_factory=list)


@dataclass(eq=False)
class NnModule:
    facts: ModuleFacts
    inplace: bool | None
    node: cst.CSTNode
    # Every call site of this instance seen so far (a fix to its constructor reaches all).
    calls: set[cst.CSTNode] = field(default_factory=set)
    # Built so that it returns its input untouched (``nn.Dropout(0.0)``).
    identity: bool = False


@dataclass(eq=False)
class Sequential:
    items: list[Value]
    node: cst.CSTNode


@dataclass(eq=False)
class UserModule:
    class_name: str


@dataclass(eq=False)
class UnknownModule:
    pass


ModuleSpec = NnModule | Sequential | UserModule | UnknownModule


@dataclass(eq=False)
class Value:
    kind: Kind
    storages: tuple[Storage, ...] = ()
    requires_grad: bool | None = None
    view: ViewKind | None = None
    desc: str = ""
    const: object = None
    items: list[Value] | None = None
    spec: ModuleSpec | None = None
    attrs: dict[str, Value] | None = None
    params: Storage | None = None
    name: str = ""
    # Which modules an optimizer updates.
    updates: list[Value] | None = None
    # What every element of a list of unknown length is like (a comprehension's element).
    element: Value | None = None
    # Taken to be a tensor without proof: it may be a list (``forward(self, x)``).
    maybe_list: bool = False
    # The values this one was computed from: which graph a backward from it runs over.
    history: tuple[Value, ...] = ()


UNKNOWN_CONST = object()


def unknown(desc: str = "") -> Value:
    return Value("unknown", (Storage(),), None, desc=desc)


def constant(value: object) -> Value:
    return Value("const", const=value)


def tensor(requires_grad: bool | None, desc: str, storage: Storage | None = None) -> Value:
    return Value("tensor", (storage or Storage(),), requires_grad, desc=desc)


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
        kind: Kind = "tensor" if a.kind == b.kind == "tensor" else "unknown"
        return Value(kind, storages, merge_grad(a.requires_grad, b.requires_grad), view, a.desc,
                     history=(a, b))
    return unknown(a.desc)


def any_grad(values: list[Value]) -> bool | None:
    """Whether an op over these inputs records a graph: True, False, or unknown."""
    result: bool | None = False
    for value in values:
        if value.requires_grad is True:
            return True
        if value.requires_grad is None and is_tensorish(value):
            result = None
    return result


def ancestry(value: Value) -> set[int]:
    """Ids of ``value`` and of every value it was computed from."""
    seen: set[int] = set()
    todo = [value]
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        todo.extend(current.history)
    return seen
