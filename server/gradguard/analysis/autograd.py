"""The autograd model: applying an op's facts to abstract values, and the hazard checks.

This is where saves are recorded and where writes are checked against them; the
interpreter decides *which* op a piece of code is, this module decides what it does.

While a function's summary is computed (:mod:`gradguard.analysis.summaries`), every
change to a storage of the function's inputs is also written to ``events``, in order,
so that a call site can replay it on the caller's own storages.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import cast

from gradguard.analysis.findings import (
    FORBIDDEN_VIEWS,
    Finding,
    ForbiddenView,
    ForbiddenViewWritten,
    LeafWrittenInPlace,
    ParametersUpdatedBeforeBackward,
    SavedTensorChangedSilently,
    SavedTensorOverwritten,
    Site,
    better,
    finding_key,
    surer,
)
from gradguard.analysis.fix_plans import (
    AugmentedToBinary,
    CloneFirst,
    DataToGraph,
    DropData,
    OutOfPlace,
    Place,
    Plan,
    UnderNoGrad,
    leaf_plan,
    step_move,
)
from gradguard.analysis.hazard import Confidence
from gradguard.analysis.syntax import Piece
from gradguard.analysis.values import (
    DeferredOverwrite,
    Lineage,
    NnModule,
    PendingWrite,
    Save,
    Storage,
    Value,
    ViewKind,
    ancestry,
    any_grad,
    is_tensorish,
    lineage_key,
)
from gradguard.facts.table import Effect
from gradguard.rules import SAVED_TENSOR_CHANGED_SILENTLY, SAVED_TENSOR_OVERWRITTEN


def _confidence(*levels: bool | None) -> Confidence | None:
    """High when every condition is known true, medium when some are unknown."""
    if any(level is False for level in levels):
        return None
    return "high" if all(level is True for level in levels) else "medium"


def _shares_storage(a: Value, b: Value) -> bool:
    return any(x is y for x in a.storages for y in b.storages)


def _backward_name(effect: Effect, op: str) -> str:
    """Whose backward needs a save: the aten op when the call is one, else the call."""
    # An in-place operator copies its old input first (``aten::clone``): the op is the other.
    atens = [name for name in effect.aten if name != "aten::clone"]
    if len(atens) == 1:
        return atens[0].removeprefix("aten::").split(".")[0]
    name, _, note = op.partition(" (")
    if note:
        return note.split(",")[0].rstrip(")")
    return name.split("(")[0].rsplit(".", 1)[-1] or op


def _lower(a: Confidence, b: Confidence) -> Confidence:
    return "high" if a == b == "high" else "medium"


@dataclass(frozen=True)
class WriteEvent:
    storage: Storage
    piece: Piece
    node: ast.AST
    op: str
    confidence: Confidence
    place: Place | None
    layer: NnModule | None
    plan: Plan | None
    via: tuple[Site, ...]
    exempt: tuple[Save, ...] = ()
    # Through ``.data``: past autograd's version check.
    silent: bool = False
    # Which input of the summary the write went through (its index among the
    # placeholders), if one did: the caller's value for it may exempt saves of its own.
    written: int | None = None


@dataclass(frozen=True)
class BackwardEvent:
    piece: Piece
    node: ast.AST
    retain: bool
    place: Place | None
    # The loss whose graph it runs over (None: unknown, every save is in it).
    loss: Value | Lineage | None
    via: tuple[Site, ...]


# ("save" | "unsave" | "resave", storage, save), a write, or a backward.
Event = tuple[str, Storage, Save] | WriteEvent | BackwardEvent


@dataclass
class Autograd:
    grad_enabled: bool = True
    # Inside ``torch.autograd.graph.allow_mutation_on_saved_tensors()``: autograd keeps a
    # copy of a saved tensor before it is written, so no write breaks a save.
    mutation_allowed: bool = False
    findings: dict[tuple[object, ...], Finding] = field(default_factory=dict)
    storages: list[Storage] = field(default_factory=list)
    # The ids of ``storages``: a storage made elsewhere (an unknown value's) joins them
    # when it is first saved, so that backward and ``forget_graph`` free its saves too.
    tracked: set[int] = field(default_factory=set)
    via: tuple[Site, ...] = ()
    # The rewrite that would remove a hazard found at the current write, if one is safe.
    plan: Plan | None = None
    # Saves made since a branch began, so that the other branch can run without them.
    journal: list[tuple[Storage, Save]] | None = None
    # While a summary is computed: the ids of its inputs' storages, and what befell them.
    inputs: set[int] | None = None
    # ... and the ids of its input values, by their index among the placeholders.
    input_values: dict[int, int] | None = None
    events: list[Event] = field(default_factory=list)
    # How many backwards ran (a function that runs one is where its loss is reached).
    backwards: int = 0

    def new_storage(self, leaf: bool = False, param: bool = False) -> Storage:
        storage = Storage(leaf=leaf, param=param)
        self.storages.append(storage)
        self.tracked.add(id(storage))
        return storage

    def _track(self, storage: Storage) -> None:
        if id(storage) not in self.tracked:
            self.tracked.add(id(storage))
            self.storages.append(storage)

    def fresh(self, requires_grad: bool | None) -> Value:
        return Value("tensor", (self.new_storage(),), requires_grad)

    def tuple_around(self, first: Value, structure: object) -> Value:
        """A layer's nested tuple result (an LSTM's ``(output, (h_n, c_n))``) around the
        tensor its facts describe; the other tensors are new ones of the same graph."""
        unused = [first]

        def build(part: object) -> Value:
            if isinstance(part, list):
                return Value("list", items=[build(item) for item in part])
            if unused:
                return unused.pop()
            tensor = self.fresh(first.requires_grad)
            tensor.history = (first,)
            return tensor

        return build(structure)

    def report(self, finding: Finding) -> None:
        key = finding.key()
        known = self.findings.get(key)
        if known is None or better(finding, known):
            self.findings[key] = finding

    def wants(self, key: tuple[object, ...], confidence: Confidence, via: int) -> bool:
        """Would a report of this hazard be kept? (Most are made again and again, as
        summaries are replayed: asking first spares building each.)"""
        known = self.findings.get(key)
        return known is None or surer(confidence, via, known)

    def _recorded(self, storage: Storage) -> bool:
        return self.inputs is not None and id(storage) in self.inputs

    # -- saves ------------------------------------------------------------------------

    def add_save(self, storage: Storage, save: Save) -> None:
        self._track(storage)
        storage.saves.append(save)
        if self.journal is not None:
            self.journal.append((storage, save))
        if self._recorded(storage):
            self.events.append(("save", storage, save))

    def take_back(self, storage: Storage, save: Save) -> None:
        """A branch's save hidden while the other branch runs."""
        if save in storage.saves:
            storage.saves.remove(save)
            if self._recorded(storage):
                self.events.append(("unsave", storage, save))

    def give_back(self, storage: Storage, save: Save) -> None:
        self._track(storage)
        storage.saves.append(save)
        if self._recorded(storage):
            self.events.append(("resave", storage, save))

    # -- applying facts -------------------------------------------------------------

    def apply(
        self,
        effect: Effect,
        piece: Piece,
        node: ast.AST,
        op: str,
        inputs: list[Value],
        layer: NnModule | None = None,
        output_save: Site | None = None,
        place: Place | None = None,
    ) -> Value:
        """Run one op: check its write, record its saves, return its output."""
        first = inputs[0] if inputs else None
        other = inputs[1] if len(inputs) > 1 else None
        graph = any_grad(inputs) if self.grad_enabled else False
        save_piece, save_node = output_save or (piece, node)
        aten = _backward_name(effect, op)
        # An in-place op keeps its operand before it writes (``x[..., 5:] *= x[..., 4:5]``
        # saves a view of the x it then bumps): that save is recorded first, so the op's own
        # write is checked against it.
        early = graph is not False and effect.writes and effect.returns == "input" and \
            "other" in effect.saves and first is not None and other is not None and \
            other.kind == "tensor" and _shares_storage(first, other)
        if early and first is not None and other is not None:
            self._save_role(effect.saves["other"], other, first, other, graph,
                            save_piece, save_node, f"{op}|{aten}", "other", first)
        if effect.writes and first is not None:
            # Under no_grad a write is an update of state (a weight copied in): where it
            # sits is what a GG004 fix moves.
            self.write(first, piece, node, op, layer=layer,
                       place=None if self.grad_enabled else place)
        result = self._output(effect, first, graph)
        # A tuple's saves and lineage are its first item's (topk's values).
        output = result.items[0] if effect.returns == "tuple" and result.items else result
        if output is first and first is not None:
            first.history = first.history + tuple(v for v in inputs[1:] if v is not first)
        elif effect.differentiable:
            output.history = tuple(inputs)  # detach() and argmax() start a new lineage
        if graph is not False:
            for role, condition in effect.saves.items():
                target = {"input": first, "other": other, "output": output}.get(role)
                if early and role == "other":
                    continue
                self._save_role(condition, target, first, other, graph, save_piece,
                                save_node, f"{op}|{aten}", role, output)
        return result

    def _save_role(self, condition: str, target: Value | None, first: Value | None,
                   other: Value | None, graph: bool | None, save_piece: Piece,
                   save_node: ast.AST, op: str, role: str, output: Value) -> None:
        # Saves are charged only to values known to be tensors: an unknown value may be a
        # Python number or a list, which nothing can overwrite.
        if target is None or target.kind != "tensor":
            return
        confidence = _confidence(graph, self._condition(condition, first, other))
        if confidence is None:
            return
        for storage in target.storages:
            self.add_save(storage, Save(save_piece, save_node, op, role, confidence, output,
                                        self.via))

    @staticmethod
    def _condition(condition: str, first: Value | None, other: Value | None) -> bool | None:
        if condition == "always":
            return True
        subject = other if condition == "other_requires_grad" else first
        if subject is None or not is_tensorish(subject):
            return False
        return subject.requires_grad

    def _output(self, effect: Effect, first: Value | None, graph: bool | None) -> Value:
        grad = graph if effect.differentiable else False
        if effect.returns == "tuple":
            items = [self.fresh(grad if carries else False) for _, carries in effect.outputs]
            return Value("list", items=items,
                         attrs={name: item for (name, _), item in zip(effect.outputs, items,
                                                                      strict=True) if name})
        if effect.returns == "input" and first is not None:
            if grad is True:
                first.requires_grad = True
            return first
        if effect.returns == "view_pieces" and first is not None and is_tensorish(first):
            # tensor_split, hsplit: slices of the input, each written like any view of it.
            return Value("list", storages=first.storages, requires_grad=grad,
                         view=self._view_kind(first), exempt=first.exempt)
        if effect.returns in ("view", "views") and first is not None and is_tensorish(first):
            if effect.returns == "views":
                # A tuple of views; each element is found when it is unpacked or indexed.
                return Value("list", storages=first.storages, requires_grad=grad,
                             view="multi", exempt=first.exempt)
            return Value("tensor", first.storages, grad, view=self._view_kind(first),
                         exempt=first.exempt)
        return self.fresh(grad)

    def _view_kind(self, base: Value) -> ViewKind:
        # The cheap test first: a value joined in a loop can hold hundreds of storages.
        if base.requires_grad and any(storage.leaf for storage in base.storages):
            return "leaf"
        if not self.grad_enabled and base.requires_grad is True:
            return "nograd"
        if base.view in ("multi", "leaf", "nograd", "data", "hooked", "custom"):
            return base.view
        return "view"

    # -- the checks -------------------------------------------------------------------

    def write(
        self,
        target: Value,
        piece: Piece,
        node: ast.AST,
        op: str,
        layer: NnModule | None = None,
        confidence: Confidence = "high",
        place: Place | None = None,
    ) -> None:
        """An in-place write to ``target``: report what it breaks."""
        if not is_tensorish(target):
            return
        silent = target.view == "data"
        if self.grad_enabled and not silent and \
                self._check_leaf_and_views(target, piece, node, op, layer, confidence):
            # Autograd raises at the write itself; nothing after it happens.
            return
        written = None if self.input_values is None else self.input_values.get(id(target))
        for storage in target.storages:
            self.write_one(storage, piece, node, op, layer, confidence, place, target.exempt,
                           silent, written)

    def write_one(self, storage: Storage, piece: Piece, node: ast.AST, op: str,
                  layer: NnModule | None, confidence: Confidence,
                  place: Place | None, exempt: tuple[Save, ...] = (),
                  silent: bool = False, written: int | None = None) -> None:
        if self._recorded(storage):
            self.events.append(WriteEvent(storage, piece, node, op, confidence, place,
                                          layer, self.plan, self.via, exempt, silent,
                                          written))
        self.write_storage(storage, piece, node, op, layer, confidence, place, exempt, silent)

    def write_storage(self, storage: Storage, piece: Piece, node: ast.AST, op: str,
                      layer: NnModule | None, confidence: Confidence,
                      place: Place | None, exempt: tuple[Save, ...] = (),
                      silent: bool = False) -> None:
        if self.mutation_allowed:
            return
        live = [save for save in storage.saves if not any(save is e for e in exempt)]
        if silent and not storage.param:
            # Only a copy made first keeps what the code computes: the alias written is
            # then the copy, and the saved tensor is left alone.
            plan: CloneFirst | DataToGraph | DropData | None = None
            if isinstance(self.plan, CloneFirst) and isinstance(self.plan.root, ast.Name):
                plan = self.plan
            if isinstance(self.plan, (DataToGraph, DropData)) and not storage.leaf:
                plan = self.plan  # a leaf's .data edit is an update, not part of a graph
            for save in live:
                level = _lower(confidence, save.confidence)
                if self.wants(finding_key(SAVED_TENSOR_CHANGED_SILENTLY, node, (save,)),
                              level, len(self.via)):
                    self.report(SavedTensorChangedSilently(piece, node, op, level, (save,),
                                                           self.via, layer, plan))
        elif live and storage.param:
            # Any one save made for sure makes the later backward fail for sure.
            surest: Confidence = "high" if any(s.confidence == "high" for s in live) \
                else "medium"
            storage.pending.append(PendingWrite(piece, node, op, live,
                                                _lower(confidence, surest), place))
        else:
            retained = [save for save in live if save.retained]
            if retained:
                # Its backward ran and kept the graph: only another backward through it
                # would find the tensor changed.
                storage.pending.append(PendingWrite(
                    piece, node, op, retained, confidence, place,
                    DeferredOverwrite(layer, self.plan, self.via)))
            for save in live:
                if not save.retained:
                    self.overwritten(piece, node, op, _lower(confidence, save.confidence),
                                     save, self.via, layer, self.plan)

    def overwritten(self, piece: Piece, node: ast.AST, op: str, level: Confidence,
                    save: Save, via: tuple[Site, ...], layer: NnModule | None,
                    plan: Plan | None) -> None:
        if self.wants(finding_key(SAVED_TENSOR_OVERWRITTEN, node, (save,)), level, len(via)):
            self.report(SavedTensorOverwritten(piece, node, op, level, (save,), via, layer,
                                               plan))

    def _check_leaf_and_views(self, target: Value, piece: Piece, node: ast.AST, op: str,
                              layer: NnModule | None, confidence: Confidence) -> bool:
        """Report a write autograd refuses outright; True when there was one."""
        grad = target.requires_grad
        if target.view == "nograd":
            # Made under no_grad from a tensor that requires grad: the view itself does
            # not require grad, yet autograd refuses to let it be written with grad on.
            grad = True
        if grad is False:
            return False
        level: Confidence = confidence if grad is True else "medium"
        view = target.view
        leaf = view is None and grad is True and any(s.leaf for s in target.storages)
        if not leaf and view not in FORBIDDEN_VIEWS:
            return False
        # A leaf is written under no_grad or out of place, whichever the code means
        # (``leaf_plan``); a view of one is left to its author. Other views can be rebuilt.
        plan = self.plan if view in ("multi", "nograd") else None
        if view in ("hooked", "custom") and isinstance(self.plan, (AugmentedToBinary,
                                                                   OutOfPlace)):
            plan = self.plan  # planned only where rebinding keeps what the write meant
        if view == "multi" and any(s.leaf for s in target.storages):
            # A piece of a leaf's chunk or split (``bias.chunk(4)[1].fill_(1)``): an
            # initialisation, written under no_grad, or left to its author.
            plan = leaf_plan(self.plan, any(s.param for s in target.storages),
                             any(s.saves for s in target.storages))
            plan = plan if isinstance(plan, UnderNoGrad) else None
        if leaf or view == "leaf":
            plan = leaf_plan(self.plan, any(s.param for s in target.storages),
                             any(s.saves for s in target.storages))
            if view == "leaf" and not isinstance(plan, UnderNoGrad):
                # Rebuilt out of place, a view of a leaf would no longer write the leaf:
                # only an update of state (under no_grad) keeps what the code computes.
                plan = None
        if leaf:
            self.report(LeafWrittenInPlace(piece, node, op, level, via=self.via, plan=plan))
        else:
            self.report(ForbiddenViewWritten(piece, node, op, level, via=self.via,
                                             layer=layer, plan=plan,
                                             view=cast(ForbiddenView, view)))
        return True

    def forget_graph(self) -> None:
        """As if every graph built so far had been freed: between independent roots."""
        for storage in self.storages:
            storage.saves.clear()
            storage.pending.clear()

    def backward(self, piece: Piece, node: ast.AST, retain: bool, place: Place | None = None,
                 loss: Value | Lineage | None = None) -> None:
        """A backward from ``loss``: report parameter writes it trips over, free its graph.

        Only the saves of ops ``loss`` was computed from belong to its graph; without a
        known history (a loss from an unknown call) every save is taken to, except those
        of graphs an earlier backward retained.
        """
        self.backwards += 1
        if self.inputs is not None:
            self.events.append(BackwardEvent(piece, node, retain, place, loss, self.via))
        reached = ancestry(loss) if loss is not None and loss.history else None

        def in_graph(save: Save) -> bool:
            if reached is None:
                # An unknown loss may run through this forward's saves, but a graph an
                # earlier backward kept is reached only by a loss known to come from it:
                # a step's forward rebuilt in a loop is not a backward through the last.
                return not save.retained
            return save.source is not None and lineage_key(save.source) in reached

        # One finding a write: optimizer.step() updates many parameters at once.
        by_write: dict[tuple[int, bool], list[PendingWrite]] = {}
        for storage in self.storages:
            if not storage.pending:
                continue
            kept = []
            for pending in storage.pending:
                if any(in_graph(save) for save in pending.saves):
                    by_write.setdefault((id(pending.node), pending.overwrite is None),
                                        []).append(pending)
                else:
                    kept.append(pending)
            storage.pending[:] = kept
        for writes in by_write.values():
            writes.sort(key=lambda pending: pending.confidence != "high")
            first = writes[0]
            later = first.overwrite
            if later is not None:
                for pending in writes:
                    for save in pending.saves:
                        if in_graph(save):
                            self.overwritten(pending.piece, pending.node, pending.op,
                                             _lower(pending.confidence, save.confidence),
                                             save, later.via, later.layer, later.plan)
                continue
            saves = tuple(save for pending in writes for save in pending.saves
                          if in_graph(save))
            saves = tuple(sorted(saves, key=lambda save: save.confidence != "high"))
            # One save per saving op: a layer saves its weight once per call.
            saves = tuple({id(save.node): save for save in reversed(saves)}.values())[::-1]
            plan, again = None, False
            if first.place is not None and place is not None:
                plan = step_move(first.place, place)
                # The backward comes first: it runs again after the step.
                again = plan is None and first.place.block is place.block
            self.report(ParametersUpdatedBeforeBackward(
                first.piece, first.node, first.op, first.confidence, saves, self.via,
                plan=plan, backward=(piece, node), runs_again=again))
        for storage in self.storages:
            if not storage.saves:
                continue
            if retain:
                for save in storage.saves:
                    if in_graph(save):
                        save.retained = True
            else:
                storage.saves[:] = [save for save in storage.saves if not in_graph(save)]
