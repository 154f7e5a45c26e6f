"""Per-function summaries: a function's effects computed once per calling context and
composed at every call site, instead of its body being run again for each caller.

A call's *context* is the shape of what it is given: the abstract values bound to its
parameters (and ``self``), every value, storage and layer reachable from them, what
kind each is, whether it requires grad, which of them share storage; the state of grad
mode and whether a loop is on its second pass. Two calls with the same context behave
the same, so the first one's run is kept as a :class:`Summary`:

- the function runs once on *placeholders*, copies of its inputs with storages of
  their own and nothing saved on them;
- every change to a placeholder's storage (a save, a save hidden while the other arm of
  a branch runs, an in-place write, a backward) is recorded in order: these are the
  effects a caller can see, because they land on the caller's tensors;
- so are the findings the run made on its own tensors, the value it returned, and what
  it changed on its inputs (an attribute set on ``self``, an item appended, grad turned
  on).

A call site *replays* the summary: each recorded effect is applied to the caller's own
storage that the placeholder stands for, so a save made in the callee is checked
against the caller's later writes, and a write in the callee against the caller's
earlier saves; the returned value and anything the callee built and handed back are
copied (fresh storages for each call, as running the body again would make). A summary
computed while a deeper call was cut short (recursion, the depth bound) depends on
where it was computed and is not kept.

Summaries compose: replaying a callee's summary inside another function's summary run
records, on that function's placeholders, the effects the callee had on them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from gradguard.analysis.autograd import Autograd, BackwardEvent, Event, WriteEvent
from gradguard.analysis.findings import Finding, Site
from gradguard.analysis.program import ClassInfo, FunctionInfo, Reads
from gradguard.analysis.values import (
    Lineage,
    ModuleSpec,
    NnModule,
    Save,
    Sequential,
    Storage,
    UserModule,
    Value,
)

Obj = Value | Storage | NnModule | Sequential


# Constants of these types enter a context as their type only: a function called with
# 79 model names is summarised once, unless it looks at the name (then the summary is
# guarded by the value it saw; see ``Summary.guard``).
SCALARS = (str, int, float, bool, type(None), bytes, complex)


def const_key(const: object) -> object:
    """A constant as a context key holds it exactly."""
    if isinstance(const, FunctionInfo):
        # A closure is one of many its ``def`` makes, each over the frame it was made in.
        return ("def", id(const.node)) if const.scope is None else ("closure", id(const))
    if isinstance(const, ClassInfo):
        return ("class", const.path, const.name)
    try:
        hash(const)
    except TypeError:
        return ("id", id(const))
    return (type(const).__name__, const)


def _const_key(const: object) -> object:
    if type(const) in SCALARS:
        return ("scalar", type(const).__name__)
    return const_key(const)


@dataclass(eq=False)
class Context:
    """A call's inputs in canonical order, and the key two equal contexts share."""

    key: tuple[object, ...]
    objects: list[Obj]
    # Where each input is among ``objects`` (None: a parameter left to its default).
    inputs: tuple[int | None, ...]

    def matches(self, guard: Guard) -> bool:
        """Whether the constants a summary looked at are the same here."""
        for index, expected in guard:
            found = self.objects[index]
            if not isinstance(found, Value) or const_key(found.const) != expected:
                return False
        return True


# (index in the context, exact constant) of each constant input a summary looked at.
Guard = tuple[tuple[int, object], ...]


def context_of(inputs: Sequence[Value | None]) -> Context:
    shapes = _Shapes()
    roots = tuple(None if v is None else shapes.value(v) for v in inputs)
    return Context((roots, tuple(shapes.keys)), shapes.objects, roots)


class _Shapes:
    """The objects reachable from a call's inputs, each numbered once, with its shape.

    (A class rather than nested functions: a nested function that calls itself is a
    reference cycle, and each call would leave its whole walk to the cyclic collector.)
    """

    def __init__(self) -> None:
        self.index: dict[int, int] = {}
        self.objects: list[Obj] = []
        self.keys: list[object] = []

    def storage(self, s: Storage) -> int:
        found = self.index.get(id(s))
        if found is None:
            found = self.index[id(s)] = len(self.objects)
            self.objects.append(s)
            self.keys.append((s.leaf, s.param, s.grad_off))
        return found

    def value(self, v: Value) -> int:
        index, objects, keys, value, storage = \
            self.index, self.objects, self.keys, self.value, self.storage
        found = index.get(id(v))
        if found is not None:
            return found
        at = index[id(v)] = len(objects)
        objects.append(v)
        keys.append(None)
        spec = v.spec
        spec_key: object = None
        if isinstance(spec, NnModule):
            index[id(spec)] = len(objects)
            objects.append(spec)
            keys.append(None)
            spec_key = ("nn", spec.facts.name, spec.inplace, spec.identity, id(spec.node),
                        tuple(const_key(hook) for hook in spec.hooks))
        elif isinstance(spec, Sequential):
            index[id(spec)] = len(objects)
            objects.append(spec)
            keys.append(None)
            spec_key = ("seq", id(spec.node), tuple(value(item) for item in spec.items))
        elif isinstance(spec, UserModule):
            spec_key = ("user", spec.path, spec.class_name)
        elif spec is not None:
            spec_key = "unknown"
        keys[at] = (
            v.kind, v.requires_grad, v.view, _const_key(v.const), v.name, v.maybe_list,
            tuple(storage(s) for s in v.storages),
            None if v.items is None else tuple(value(item) for item in v.items),
            spec_key,
            None if v.attrs is None else tuple((k, value(a)) for k, a in v.attrs.items()),
            None if v.params is None else storage(v.params),
            None if v.updates is None else tuple(value(u) for u in v.updates),
            None if v.element is None else value(v.element),
        )
        return at


def _placeholders(context: Context, autograd: Autograd) -> list[Obj]:
    """Copies of the context's objects, related as the originals are, saving nothing."""
    return _copies(context.objects, autograd)


def _copies(objects: list[Obj], autograd: Autograd,
            before: Mapping[int, object] | None = None) -> list[Obj]:
    """Copies of ``objects``, related as they are; with ``before`` (their snapshot),
    as they were when it was taken."""
    copies: list[Obj] = []
    memo: dict[int, Obj] = {}
    for at, obj in enumerate(objects):
        old = None if before is None else before.get(at)
        copy: Obj
        if isinstance(obj, Storage):
            leaf, grad_off = obj.leaf, obj.grad_off
            if isinstance(old, tuple):
                leaf, grad_off = old
            copy = autograd.new_storage(leaf, obj.param)
            copy.grad_off = grad_off
        elif isinstance(obj, NnModule):
            inplace, hooks, switched = obj.inplace, obj.hooks, obj.switched
            if isinstance(old, tuple):
                inplace, hooks, switched = old
            copy = NnModule(obj.facts, inplace, obj.piece, obj.node, identity=obj.identity,
                            hooks=hooks, switched=switched)
        elif isinstance(obj, Sequential):
            copy = Sequential([], obj.piece, obj.node)
        else:
            grad = obj.requires_grad if not isinstance(old, _Snapshot) else old.requires_grad
            copy = Value(obj.kind, requires_grad=grad, view=obj.view,
                         const=obj.const, name=obj.name, maybe_list=obj.maybe_list)
        memo[id(obj)] = copy
        copies.append(copy)

    def same(v: Value) -> Value:
        found = memo[id(v)]
        assert isinstance(found, Value)
        return found

    for at, (obj, copy) in enumerate(zip(objects, copies, strict=True)):
        old = None if before is None else before.get(at)
        if isinstance(obj, Sequential):
            assert isinstance(copy, Sequential)
            items = obj.items if old is None else old
            copy.items = [same(item) for item in items]  # type: ignore[attr-defined]
        elif isinstance(obj, Value):
            assert isinstance(copy, Value)
            copy.storages = tuple(memo[id(s)] for s in obj.storages)  # type: ignore[misc]
            if isinstance(old, _Snapshot):
                obj = Value(obj.kind, obj.storages, old.requires_grad, view=obj.view,
                            const=obj.const, name=obj.name, maybe_list=obj.maybe_list,
                            items=old.items, spec=old.spec, attrs=old.attrs,
                            params=obj.params, updates=obj.updates, element=obj.element)
            copy.items = None if obj.items is None else [same(item) for item in obj.items]
            spec = obj.spec
            copy.spec = memo[id(spec)] if isinstance(spec, (NnModule, Sequential)) \
                else spec  # type: ignore[assignment]
            copy.attrs = None if obj.attrs is None else \
                {key: same(item) for key, item in obj.attrs.items()}
            copy.params = None if obj.params is None else memo[id(obj.params)]  # type: ignore[assignment]
            copy.updates = None if obj.updates is None else [same(u) for u in obj.updates]
            copy.element = None if obj.element is None else same(obj.element)
    return copies


@dataclass(frozen=True)
class _Snapshot:
    requires_grad: bool | None
    attrs: dict[str, Value] | None
    items: list[Value] | None
    spec: ModuleSpec | None


def _snapshot(objects: list[Obj]) -> list[object]:
    taken: list[object] = []
    for obj in objects:
        if isinstance(obj, Value):
            taken.append(_Snapshot(obj.requires_grad,
                                   None if obj.attrs is None else dict(obj.attrs),
                                   None if obj.items is None else list(obj.items),
                                   obj.spec))
        elif isinstance(obj, Storage):
            taken.append((obj.leaf, obj.grad_off))
        elif isinstance(obj, NnModule):
            taken.append((obj.inplace, obj.hooks, obj.switched))
        elif isinstance(obj, Sequential):
            taken.append(list(obj.items))
        else:
            taken.append(None)
    return taken


@dataclass(eq=False)
class Change:
    """What a function left different on one of its inputs."""

    index: int
    requires_grad: bool | None = None
    history: tuple[Value | Lineage, ...] = ()
    attrs: dict[str, Value] = field(default_factory=dict)
    items: list[Value] | None = None
    items_changed: bool = False
    leaf: bool | None = None
    calls: frozenset[object] = frozenset()
    hooks: tuple[object, ...] | None = None
    grad_off: bool | None = None
    # A layer's inplace switch set (``m.inplace = True``): (the new value, where), if it was.
    inplace: tuple[bool | None, Site | None] | None = None


def _changes(objects: list[Obj], before: list[object]) -> list[Change]:
    found: list[Change] = []
    for at, (obj, old) in enumerate(zip(objects, before, strict=True)):
        if isinstance(obj, Value):
            assert isinstance(old, _Snapshot)
            attrs = {} if obj.attrs is None or old.attrs is None else {
                key: item for key, item in obj.attrs.items() if old.attrs.get(key) is not item}
            items_changed = obj.items is not None and (
                old.items is None or len(obj.items) != len(old.items)
                or any(a is not b for a, b in zip(obj.items, old.items, strict=True)))
            items_changed = items_changed or (obj.items is None and old.items is not None)
            if obj.requires_grad != old.requires_grad or obj.history or attrs or \
                    items_changed:
                found.append(Change(at, obj.requires_grad, obj.history, attrs,
                                    obj.items, items_changed))
        elif isinstance(obj, Storage):
            if (obj.leaf, obj.grad_off) != old:
                found.append(Change(at, leaf=obj.leaf, grad_off=obj.grad_off))
        elif isinstance(obj, NnModule) and (obj.calls or obj.hooks or obj.inplace != old[0]):  # type: ignore[index]
            # Its hooks started as the caller's: those it ends with replace them.
            found.append(Change(at, calls=frozenset(obj.calls), hooks=obj.hooks,
                                inplace=(obj.inplace, obj.switched)
                                if obj.inplace != old[0] else None))  # type: ignore[index]
        elif isinstance(obj, Sequential) and isinstance(old, list) and (
                len(obj.items) != len(old) or
                any(a is not b for a, b in zip(obj.items, old, strict=True))):
            # Layers added to a Sequential the caller holds (``seq.add_module(...)``).
            found.append(Change(at, items=list(obj.items), items_changed=True))
    return found


@dataclass(eq=False)
class Summary:
    """One function's effects in one context (see the module's docstring)."""

    function: FunctionInfo
    placeholders: list[Obj]
    events: list[Event]
    findings: list[Finding]
    result: Value
    changes: list[Change]
    reads: Reads
    # Where a deeper call was cut short outside the function's own recursion (then the
    # summary holds only where it was made); None: nowhere.
    cut: int | None = None
    # Every storage of the run (to break their cycles once the summary is dropped).
    storages: list[Storage] = field(default_factory=list)
    # The constant inputs whose values the run looked at: it holds where they are equal.
    guard: Guard = ()
    # Where each input is among the placeholders, and the state before the run of
    # those it changed: the context, for an editor to compute the summary again after
    # an edit and compare.
    inputs: tuple[int | None, ...] = ()
    before: dict[int, object] = field(default_factory=dict)

    _names: frozenset[tuple[str, str]] | None = None

    @property
    def names(self) -> frozenset[tuple[str, str]]:
        """What its lookups named (an editor drops it when one of them changes)."""
        if self._names is None:
            self._names = self.reads.names()
        return self._names


class Run:
    """A summary being computed: its placeholders and the world they live in."""

    def __init__(self, context: Context, grad_enabled: bool) -> None:
        self.autograd = Autograd(grad_enabled=grad_enabled)
        self.placeholders = _placeholders(context, self.autograd)
        self.autograd.inputs = {id(p) for p in self.placeholders if isinstance(p, Storage)}
        self.autograd.input_values = {id(p): index for index, p in enumerate(self.placeholders)
                                      if isinstance(p, Value)}
        self.before = _snapshot(self.placeholders)
        self.inputs = context.inputs
        # The constant inputs whose values a context leaves out: looking at one of them
        # makes the summary hold only for that value.
        self.watched = {id(p): index for index, p in enumerate(self.placeholders)
                        if isinstance(p, Value) and p.kind == "const"
                        and type(p.const) in SCALARS}
        self.observed: set[int] = set()

    def input(self, position: int) -> Value | None:
        at = self.inputs[position]
        if at is None:
            return None
        found = self.placeholders[at]
        assert isinstance(found, Value)
        return found

    def finish(self, function: FunctionInfo, result: Value, reads: Reads,
               cut: int | None) -> Summary:
        guard = tuple(sorted((index, const_key(self.placeholders[index].const))  # type: ignore[union-attr]
                             for index in (self.watched[i] for i in self.observed)))
        changes = _changes(self.placeholders, self.before)
        return Summary(function, self.placeholders, self.autograd.events,
                       list(self.autograd.findings.values()), result, changes, reads, cut,
                       self.autograd.storages, guard, self.inputs,
                       {change.index: self.before[change.index] for change in changes})


def context_again(summary: Summary) -> Context:
    """The context ``summary`` was computed in, made again from its placeholders as
    they were before its run (new objects: the summary's own are left as they are)."""
    copies = _copies(summary.placeholders, Autograd(), summary.before)
    return context_of([None if at is None else copies[at]  # type: ignore[misc]
                       for at in summary.inputs])


def replay(summary: Summary, context: Context, autograd: Autograd,
           attr_journal: list[tuple[dict[str, Value], str, Value | None]] | None,
           via: tuple[Site, ...]) -> Value:
    """Apply ``summary`` at a call whose inputs are ``context``; returns the call's value.

    ``via`` is the caller's path to this call site: findings made in the callee are
    reported as reached through it. What the callee computed gets, for this call, a
    lineage of its own (light stand-ins whose history leads back to the caller's
    values), so that a backward from this call's result frees this call's saves only.
    """
    return _Replay(summary, context, autograd).run(attr_journal, via)


class _Replay:
    """One application of a summary: the callee's objects mapped to the caller's."""

    def __init__(self, summary: Summary, context: Context, autograd: Autograd) -> None:
        self.summary = summary
        self.context = context
        self.autograd = autograd
        pairs = list(zip(summary.placeholders, context.objects, strict=True))
        self.actual: dict[int, object] = {id(p): a for p, a in pairs}
        # The inputs stand for themselves; what the callee computed gets stand-ins.
        self.call: dict[int, Value] = {id(p): a for p, a in pairs if isinstance(a, Value)}
        self.saves: dict[int, Save] = {}
        # The call site's path: a save the callee made came back to the caller through it.
        self.via: tuple[Site, ...] = ()

    def run(self, attr_journal: list[tuple[dict[str, Value], str, Value | None]] | None,
            via: tuple[Site, ...]) -> Value:
        autograd, summary = self.autograd, self.summary
        self.via = via
        outer_via, outer_plan = autograd.via, autograd.plan
        try:
            for event in summary.events:
                self.apply(event, via)
            autograd.plan = None
            for finding in summary.findings:
                if not autograd.wants(finding.key(), finding.confidence,
                                      len(via) + len(finding.via)):
                    continue
                autograd.via = via + finding.via
                autograd.report(finding.replayed(tuple(self.save_of(s) for s in finding.saves),
                                                 autograd.via, self.layer_of(finding.layer)))
        finally:
            autograd.via, autograd.plan = outer_via, outer_plan
        for change in summary.changes:
            self.change(change, attr_journal)
        return self.out(summary.result)

    def apply(self, event: Event, via: tuple[Site, ...]) -> None:
        autograd = self.autograd
        if isinstance(event, WriteEvent):
            autograd.via, autograd.plan = via + event.via, event.plan
            exempt = tuple(self.save_of(s) for s in event.exempt)
            written = None
            if event.written is not None:
                # Written through an input: the saves the caller's value for it exempts
                # (one arm's, on a tensor it holds only when the other arm ran) too.
                caller = self.context.objects[event.written]
                if isinstance(caller, Value):
                    exempt += caller.exempt
                    if autograd.input_values is not None:
                        written = autograd.input_values.get(id(caller))
            autograd.write_one(self.storage_of(event.storage), event.piece, event.node,
                               event.op, self.layer_of(event.layer), event.confidence,
                               event.place, exempt, event.silent, written)
        elif isinstance(event, BackwardEvent):
            autograd.via, autograd.plan = via + event.via, None
            loss = None if event.loss is None else self.lineage(event.loss)
            autograd.backward(event.piece, event.node, event.retain, event.place, loss)
        else:
            kind, storage, save = event
            onto = self.storage_of(storage)
            if kind == "save":
                autograd.add_save(onto, self.save_of(save))
            elif kind == "unsave":
                autograd.take_back(onto, self.save_of(save))
            else:
                autograd.give_back(onto, self.save_of(save))

    def change(self, change: Change,
               attr_journal: list[tuple[dict[str, Value], str, Value | None]] | None) -> None:
        changed = self.context.objects[change.index]
        if isinstance(changed, Storage):
            if change.leaf is not None:
                changed.leaf = change.leaf
            if change.grad_off is not None:
                changed.grad_off = change.grad_off
        elif isinstance(changed, NnModule):
            changed.calls |= change.calls  # type: ignore[arg-type]
            if change.hooks is not None:
                changed.hooks = change.hooks
            if change.inplace is not None:
                changed.inplace, changed.switched = change.inplace
        elif isinstance(changed, Sequential) and change.items is not None:
            changed.items = [self.out(item) for item in change.items]
        elif isinstance(changed, Value):
            changed.requires_grad = change.requires_grad
            if change.history:
                changed.history = changed.history + tuple(self.lineage(h)
                                                          for h in change.history)
            if change.attrs and changed.attrs is not None:
                for key, item in change.attrs.items():
                    if attr_journal is not None:
                        attr_journal.append((changed.attrs, key, changed.attrs.get(key)))
                    changed.attrs[key] = self.out(item)
            if change.items_changed:
                changed.items = None if change.items is None else \
                    [self.out(item) for item in change.items]

    def lineage(self, value: Value | Lineage) -> Value | Lineage:
        """``value`` of the callee, as this call sees it (its own lineage)."""
        if isinstance(value, Value):
            found = self.call.get(id(value))
            if found is not None:
                return found
        return Lineage(self.call, value)

    def storage_of(self, storage: Storage) -> Storage:
        found = self.actual.get(id(storage))
        if found is None:
            copy = self.autograd.new_storage(storage.leaf, storage.param)
            copy.grad_off = storage.grad_off
            copy.saves = [self.save_of(save) for save in storage.saves]
            copy.pending = list(storage.pending)
            self.actual[id(storage)] = found = copy
        assert isinstance(found, Storage)
        return found

    def save_of(self, save: Save) -> Save:
        found = self.saves.get(id(save))
        if found is None:
            source = save.source
            found = Save(save.piece, save.node, save.op, save.role, save.confidence,
                         None if source is None else self.lineage(source),
                         self.via + save.via, save.retained)
            self.saves[id(save)] = found
        return found

    def layer_of(self, layer: NnModule | None) -> NnModule | None:
        found = None if layer is None else self.actual.get(id(layer))
        return found if isinstance(found, NnModule) else layer

    def out(self, value: Value) -> Value:
        """The caller's value for one the callee returned or stored on its inputs."""
        found = self.actual.get(id(value))
        if found is not None:
            assert isinstance(found, Value)
            return found
        copy = Value(value.kind, requires_grad=value.requires_grad, view=value.view,
                     const=value.const, name=value.name, maybe_list=value.maybe_list)
        self.actual[id(value)] = copy
        copy.storages = tuple(self.storage_of(s) for s in value.storages)
        copy.items = None if value.items is None else [self.out(item) for item in value.items]
        copy.spec = self.spec_of(value.spec)  # type: ignore[assignment]
        copy.attrs = None if value.attrs is None else \
            {key: self.out(item) for key, item in value.attrs.items()}
        copy.params = None if value.params is None else self.storage_of(value.params)
        copy.updates = None if value.updates is None else [self.out(u) for u in value.updates]
        copy.element = None if value.element is None else self.out(value.element)
        copy.history = (self.lineage(value),)
        copy.exempt = tuple(self.save_of(save) for save in value.exempt)
        return copy

    def spec_of(self, spec: object) -> object:
        if isinstance(spec, (NnModule, Sequential)) and id(spec) in self.actual:
            return self.actual[id(spec)]
        if isinstance(spec, NnModule):
            copy = NnModule(spec.facts, spec.inplace, spec.piece, spec.node, set(spec.calls),
                            spec.identity, spec.hooks, spec.switched)
            self.actual[id(spec)] = copy
            return copy
        if isinstance(spec, Sequential):
            sequence = Sequential([], spec.piece, spec.node)
            self.actual[id(spec)] = sequence
            sequence.items = [self.out(item) for item in spec.items]
            return sequence
        return spec
