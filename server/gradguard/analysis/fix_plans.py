"""What a fix will do, decided where the analysis knows the code: which rewrite, where.

A plan holds ast nodes and the piece they were parsed in;
:mod:`gradguard.fixes.edits`
turns it into text edits. Plans are made only where the rewrite keeps what the code
computes.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from gradguard.analysis.syntax import Piece


@dataclass(frozen=True, eq=False)
class Place:
    """A statement, the statement list holding it, and the piece it was parsed in."""

    statement: ast.stmt
    block: Sequence[ast.stmt]
    piece: Piece
    # The body of the function (or the module's statements) the statement runs in, and
    # the names its module imports: what a fix that puts the statement under
    # ``torch.no_grad()`` looks at (is the leaf's gradient read there? what is torch
    # called?).
    scope: Sequence[ast.stmt] = ()
    aliases: Mapping[str, str] = field(default_factory=dict)

    @property
    def index(self) -> int:
        return next(i for i, s in enumerate(self.block) if s is self.statement)


@dataclass(frozen=True)
class Rename:
    """The call's method renamed: ``x.add_(y)`` -> ``x.add(y)``."""

    name: str


@dataclass(frozen=True)
class DropArgument:
    """The call without one argument (by keyword, else by position)."""

    keyword: str | None
    position: int | None


CallEdit = Rename | DropArgument


@dataclass(frozen=True, eq=False)
class OutOfPlace:
    """``x.add_(y)`` -> ``x = x.add(y)``: the out-of-place call, assigned back."""

    call: ast.Call
    edit: CallEdit
    rebind: ast.expr | None
    place: Place


@dataclass(frozen=True, eq=False)
class AugmentedToBinary:
    """``x += y`` -> ``x = x + y``."""

    node: ast.AugAssign
    symbol: str
    place: Place


@dataclass(frozen=True, eq=False)
class SelectRows:
    """``for t in x: t.mul_(2)`` -> ``for t in (x.select(0, i) for i in range(x.size(0)))``.

    The rows of iterating a tensor are outputs of one unbind, which autograd forbids
    writing into; single ``select`` views of the same rows may be written, and the
    writes still reach ``x``, as the code meant.
    """

    iterated: ast.expr
    place: Place  # the statement that iterates


@dataclass(frozen=True, eq=False)
class DataToGraph:
    """``x.data += y`` -> ``x = x + y``: the change made where autograd sees it (the
    saved tensor left alone, and the change part of the graph, as it was meant to be)."""

    node: ast.AugAssign
    symbol: str
    place: Place


@dataclass(frozen=True, eq=False)
class DropData:
    """``x.data[i] = f(x.data[i])`` -> ``x[i] = f(x[i])``: the statement's change made
    through ``x`` itself, where autograd sees it."""

    name: str
    place: Place


@dataclass(frozen=True, eq=False)
class CloneFirst:
    """``x[i] = v`` -> ``x = x.clone()`` before it: the write goes to a copy."""

    root: ast.expr
    place: Place


@dataclass(frozen=True, eq=False)
class CloneIfUsedLater:
    """An in-place layer writes the caller's ``x``, which later code reads.

    Building the layer out of place would hand those reads the unwritten values; a copy
    keeps them: ``x = x.clone()`` before the call. When nothing reads ``x`` afterwards,
    building the layer out of place is the simpler fix and computes the same.
    """

    root: ast.expr
    place: Place
    later: tuple[ast.stmt, ...]


@dataclass(frozen=True, eq=False)
class DropOut:
    """``torch.add(a, b, out=y)`` -> ``y = torch.add(a, b)``."""

    call: ast.Call
    target: ast.expr
    place: Place


@dataclass(frozen=True, eq=False)
class MoveAfter:
    """``opt.step()`` moved after the backward that still needs the old parameters."""

    place: Place
    after: Place


@dataclass(frozen=True, eq=False)
class UnderNoGrad:
    """``w -= lr * w.grad`` -> the same statement under ``with torch.no_grad():``.

    For a leaf that is state rather than a step of the computation: a parameter, a
    tensor updated from its own gradient, one whose ``.grad`` the code reads. Its values
    change and it stays the leaf it was; rebinding it out of place would make the name a
    new tensor (with no ``.grad``, no longer the one an optimizer or a module holds).
    """

    root: ast.expr
    reason: str
    place: Place


@dataclass(frozen=True, eq=False)
class InPlaceOnly:
    """A write with no out-of-place form (``c.index_copy_(...)``): no fix of its own, but
    into a leaf it can go under no_grad (``leaf_plan``)."""

    root: ast.expr
    place: Place


@dataclass(frozen=True, eq=False)
class SelectsForUnbind:
    """``rows = x.unbind(0)`` -> ``rows = tuple(x.select(0, i) for i in range(x.size(0)))``.

    Autograd forbids writing into an output of unbind, but lets a single view be written
    (it rebases the view's history): the same pieces, made one ``select`` each, so that
    a write into one still reaches ``x``, as the code meant.
    """

    call: ast.Call
    place: Place  # the statement that unbinds


@dataclass(frozen=True, eq=False)
class CloneArgument:
    """An installed library writes in place into the tensor the user's call hands it
    (``model(labels=labels)``, and the model clamps ``labels``): the call hands it a
    copy, ``labels=labels.clone()``. The library's code is not the user's to edit."""

    argument: ast.expr
    place: Place  # the call, as a statement of its own


Plan = (OutOfPlace | AugmentedToBinary | DataToGraph | DropData | CloneFirst | CloneIfUsedLater
        | DropOut | MoveAfter | UnderNoGrad | InPlaceOnly | SelectsForUnbind | SelectRows
        | CloneArgument)


def receiver_root(node: ast.expr) -> ast.expr | None:
    """The name a chain of views starts from: ``x`` in ``x[..., 0].t()``."""
    while True:
        if is_dotted(node):
            return node
        if isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            node = node.func.value
        elif isinstance(node, ast.Attribute):
            node = node.value
        else:
            return None


def is_dotted(node: ast.AST) -> bool:
    """A name or an attribute chain on a name: ``x``, ``self.h``."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def rebinds(plan: Plan) -> ast.expr | None:
    """The name an out-of-place plan makes a new tensor (the leaf it wrote before)."""
    if isinstance(plan, OutOfPlace):
        return plan.rebind
    if isinstance(plan, AugmentedToBinary):
        return plan.node.target
    if isinstance(plan, (CloneFirst, CloneIfUsedLater)):
        return plan.root
    if isinstance(plan, DropOut):
        return plan.target
    if isinstance(plan, InPlaceOnly):
        return plan.root
    return None


def leaf_plan(rebuild: Plan | None, parameter: bool, saved: bool) -> Plan | None:
    """The fix of an in-place write into a leaf that requires grad (GG002).

    Autograd allows it in two ways, which compute different things: under
    ``torch.no_grad()`` the leaf takes the new values and stays a leaf (what an
    initialisation or an update of a parameter means); out of place (``rebuild``), the
    name becomes a new tensor computed from the leaf, and gradients flow back to it
    through the op (what a step of the computation means). Which one the code means:

    - a leaf some op saved for backward: only out of place (a write under no_grad
      would overwrite what that backward needs);
    - a parameter (of a module, or handed out by ``.parameters()``), a write whose
      value reads a ``.grad`` (an optimisation step), or a leaf whose ``.grad`` the code
      reads: under no_grad (rebound, the name would no longer be the leaf);
    - anything else, a step of the computation: out of place.
    """
    root = rebinds(rebuild) if rebuild is not None else None
    if rebuild is None or root is None:
        return None
    if saved:
        return rebuild
    place = rebuild.place
    if parameter:
        return UnderNoGrad(root, "a parameter", place)
    if any(isinstance(node, ast.Attribute) and node.attr == "grad"
           for node in ast.walk(place.statement)):
        return UnderNoGrad(root, "updated from a gradient", place)
    name = dotted_text(root)
    for leaf in _names_of_leaf(place.scope, name) if name is not None else []:
        if _reads_grad_of(place.scope, leaf):
            what = "a leaf" if leaf == name else f"a row of `{leaf}`, a leaf"
            return UnderNoGrad(root, f"{what} whose `.grad` the code reads", place)
    return None if isinstance(rebuild, InPlaceOnly) else rebuild


def _names_of_leaf(statements: Sequence[ast.stmt], name: str) -> list[str]:
    """``name``, and what it iterates over when it is a loop's variable (``for row in
    b``: a row is a view of ``b``, whose ``.grad`` says it is state)."""
    names = [name]
    for statement in statements:
        for node in ast.walk(statement):
            if isinstance(node, ast.For) and isinstance(node.target, ast.Name) and \
                    node.target.id == name and (base := dotted_text(node.iter)) is not None:
                names.append(base)
    return names


def _reads_grad_of(statements: Sequence[ast.stmt], name: str) -> bool:
    return any(isinstance(node, ast.Attribute) and node.attr == "grad" and
               dotted_text(node.value) == name
               for statement in statements for node in ast.walk(statement))


def dotted_text(node: ast.AST) -> str | None:
    """``self.h`` for a name or an attribute chain on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def step_move(step: Place, backward: Place) -> MoveAfter | None:
    """Where to move an optimizer step that a later backward still needs the parameters
    of: after that backward, or after the statement of the step's own block that holds
    it (``if gen_loss is not None: gen_loss.backward()``). None when the backward is not
    later in the step's block (another function, or the next pass of a loop)."""
    for statement in step.block[step.index + 1:]:
        if statement is backward.statement or \
                any(node is backward.statement for node in ast.walk(statement)):
            return MoveAfter(step, Place(statement, step.block, step.piece))
    # A write alone in a ``with`` block (``with torch.no_grad(): w.copy_(v)``) moves with
    # its block, when that block sits in the backward's.
    if len(step.block) == 1:
        for statement in backward.block:
            if isinstance(statement, ast.With) and statement.body is step.block:
                return step_move(Place(statement, backward.block, step.piece), backward)
    return None


def unbind_plan(name: str, place: Place) -> SelectsForUnbind | None:
    """The unbind that made ``name``, a tuple of views written at ``place``: the last
    statement before it in its block that binds ``name``, when that is
    ``name = x.unbind(dim)`` (``x`` a name, ``dim`` a number or a name)."""
    for statement in reversed(place.block[:place.index]):
        if not any(isinstance(node, ast.Name) and node.id == name and
                   isinstance(node.ctx, ast.Store) for node in ast.walk(statement)):
            continue
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1 and
                isinstance(statement.targets[0], ast.Name)):
            return None
        call = statement.value
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and
                call.func.attr == "unbind" and is_dotted(call.func.value)):
            return None
        dims = call.args + [k.value for k in call.keywords if k.arg == "dim"]
        if len(dims) > 1 or len(call.keywords) > len(dims) - len(call.args) or \
                any(not isinstance(d, (ast.Constant, ast.Name)) for d in dims):
            return None
        return SelectsForUnbind(call, Place(statement, place.block, place.piece))
    return None
