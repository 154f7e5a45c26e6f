"""The instrument: sees every tensor autograd saves and every in-place write, under torch.

Three hooks, installed together by ``Tracker``:

- ``torch.autograd.graph.saved_tensors_hooks``: the pack hook records each saved
  tensor (a ``detach()`` of it, which shares the version counter, and the version at
  pack time), with the user's line and the op that saved it. While any such hooks are
  active autograd skips its own version check, so the unpack hook does it and raises
  autograd's error itself; without that, backward would silently use overwritten data.
- a ``TorchDispatchMode``: sees each aten op as it really runs (after decomposition).
  An op whose schema marks an argument as written (``Tensor(a!)``) is checked against
  the saved tensors sharing that argument's storage. The version bump of an in-place
  op happens after ``__torch_dispatch__`` returns, so the check compares versions as
  soon as the bump is visible: on the next Python event (a one-shot profile hook), or
  at the latest on the next op, save, unpack or the end of the run.
- global ``nn.Module`` forward hooks and a wrapped ``nn.Module.__init__``: which module
  an op runs in, and where that module was built, so a write done by an
  ``nn.Dropout(inplace=True)`` inside an ``nn.Sequential`` is reported at the
  ``nn.Dropout(...)`` line, as the static checker does. (And a wrapped
  ``FunctionCtx.save_for_backward``: which custom Function's node saved a tensor.)

Which op saved a tensor is not passed to the pack hook; it follows from the order
autograd works in: an op's inputs are packed before it is dispatched, its outputs
after (once they have their ``grad_fn``). A pack whose tensor is an output of the last
dispatched op, while that op's node still has ``_saved_result*`` slots to fill, is an
output save; any other pack waits for the next dispatched op, which saved it.

A write into a saved tensor's storage through a tensor with a version counter of its
own (``.data``, an ``unsafe_chunk`` output) is invisible to autograd. It matters only
if it touches an element of the saved tensor (ATen's GRU/LSTM cells write into chunks
next to saved ones, never into them), changes its values, and changes the gradient
backward computes from them: the old values are kept at the write, and the node that
unpacks the tensor runs its backward again with them in a post hook, to compare.
"""

from __future__ import annotations

import functools
import re
import sys
import weakref
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from types import CodeType
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from gradguard.probe.sites import Point, UserFiles, point

_RESULT_SLOT = re.compile(r"_saved_result\d*")
_PLAIN = (torch.Tensor, torch.nn.Parameter)
_NO_PYTHON_DISPATCH = torch._C._DisableTorchDispatch
# Function.apply is a classmethod: its code object is under the descriptor.
_FUNCTION_APPLY: CodeType = vars(torch.autograd.function.Function)["apply"].__func__.__code__
_CALL_IMPL: CodeType = torch.nn.Module._call_impl.__code__


# The running modules, innermost first, as a persistent linked list: a record keeps a
# reference to the stack as it was, for free, instead of copying it on every save.
Stack = tuple[torch.nn.Module, "Stack"] | None


@dataclass(eq=False)
class Place:
    """Where an op ran: the user's line, and the modules that line called into."""

    where: Point | None
    stack: Stack
    # How many modules, from the top of the stack, were entered from the same user line:
    # 0 = the op is written in the user's code; 1 = a module called there did it;
    # 2+ = a torch container called there ran the module that did it.
    depth: int


class Saved:
    """One tensor saved for backward, alive exactly as long as autograd keeps it (the
    pack hook's return value is what autograd holds). Slots: one is made per save."""

    __slots__ = ("tensor", "version", "key", "place", "op", "role", "argument",
                 "source_id", "clobbered", "unpacked", "latent", "silent", "original",
                 "output", "restore", "proof", "finding", "__weakref__")

    def __init__(self, tensor: torch.Tensor, version: int, key: int, place: Place,
                 source_id: int) -> None:
        self.tensor = tensor
        self.version = version
        self.key = key
        self.place = place
        self.op = "?"
        self.role = "input"  # "input" | "output"
        self.argument: str | None = None
        self.source_id = source_id
        self.clobbered = False
        self.unpacked = False  # a backward has used it (it survives only with retain_graph)
        self.latent: Clobber | None = None  # a write after that, reported if used again
        self.silent: Write | None = None  # a write that did not bump its version
        self.original: torch.Tensor | None = None  # the values before that write
        # An output of the op that saved it, whose grad_fn is the node that will unpack
        # it (or, for a custom Function, that node itself: its ctx), held weakly: where
        # the probe recomputes the gradient without a silent write.
        self.output: weakref.ref[Any] | None = None
        self.restore = False  # unpack gives `original` (while recomputing)
        # none -> hooked -> used -> recomputing -> restored -> settled (see _prove)
        self.proof = "none"
        self.finding: int | None = None


class _Ref(weakref.ref):  # type: ignore[type-arg]
    """A weak reference to a ``Saved`` that knows its registry slot, for the callback."""

    __slots__ = ("key", "ident", "finding")
    key: int
    ident: int
    finding: int | None


@dataclass(eq=False)
class Write:
    """An in-place op on a tensor that shares storage with saved tensors."""

    op: str
    tensor: torch.Tensor
    place: Place
    in_optimizer: bool
    candidates: list[tuple[Saved, int]]  # sharing its version counter: (saved, version)
    # The saved tensors it writes through an alias with a version counter of its own
    # (`.data`, `unsafe_split` outputs), with their values from before the write.
    untracked: list[tuple[Saved, torch.Tensor]]


@dataclass(frozen=True)
class Clobber:
    """A write that bumped the version of a tensor autograd still needs."""

    saved: Saved
    write: Write
    after: int


@dataclass(frozen=True)
class SilentWrite:
    """A write autograd cannot see (no version bump) that changed the values of a saved
    tensor, which backward then used. ``difference``: the largest absolute difference
    between the gradients backward computed and those it computes with the values
    from before the write (> 0: the write changed the gradients, proven), or None
    when that could not be recomputed."""

    saved: Saved
    write: Write
    difference: float | None


@dataclass(frozen=True)
class StaleUnpack:
    """Backward found a saved tensor modified; carries autograd's error text."""

    saved: Saved
    message: str


class _Mode(TorchDispatchMode):  # type: ignore[no-untyped-call, misc]
    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # torch wraps a mode's __torch_dispatch__ in a dynamo-disable guard unless told
        # not to: about 7 us on each op. The child runs with TORCH_COMPILE_DISABLE=1
        # (the probe checks eager semantics), so there is no compiler to keep out.
        return False

    def __init__(self, tracker: Tracker) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.tracker = tracker

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        # The hot path of the probe: every aten op of forward, backward and the
        # optimizer comes through here, so the common case is a few attribute tests.
        if kwargs is None:
            kwargs = {}
        tracker = self.tracker
        if tracker.quiet:  # the tracker's own detach() in the pack hook
            return func(*args, **kwargs)
        if tracker.pending_writes:
            tracker.flush()
        inputs = tracker.attribute_inputs(func, args) if tracker.pending_inputs else None
        writes = tracker.writes_of.get(id(func))
        if writes is None:
            writes = tracker.written_arguments(func)
        if not writes:
            out = func(*args, **kwargs)
        else:
            pending = len(tracker.pending_writes)
            tracker.check_writes(func, writes, args, kwargs)
            try:
                out = func(*args, **kwargs)
            except BaseException:
                del tracker.pending_writes[pending:]  # it wrote nothing: no version bump
                raise
        if inputs:
            _link_output(inputs, out)
        tracker.last_out = out
        tracker.last_op = func
        tracker.slots_node = None
        return out


class Tracker:
    """Installs the hooks and calls back as hazards happen: ``on_clobber`` when a write
    bumps a saved tensor's version, ``on_stale`` when something unpacks one so bumped
    (just before the autograd-style error is raised), ``on_silent`` when backward uses
    one written behind autograd's back, ``on_release`` when autograd drops a clobbered
    tensor (with the finding id the reporter gave it).

    Callbacks run inside torch ops in the user's call stack: they must not raise.
    """

    def __init__(self, user_files: UserFiles, on_clobber: Callable[[Clobber], None],
                 on_stale: Callable[[StaleUnpack], None],
                 on_release: Callable[[int], None] = lambda finding: None,
                 on_silent: Callable[[SilentWrite], None] = lambda event: None) -> None:
        self.user_files = user_files
        self.on_clobber = on_clobber
        self.on_stale = on_stale
        self.on_silent = on_silent
        self.on_release = on_release  # a clobbered tensor's finding, when autograd drops it
        self.quiet = False
        self.pending_writes: list[Write] = []
        self.pending_inputs: list[Saved] = []
        self.last_out: Any = None
        self.last_op: Any = None
        self.slots_node: Any = None
        self.slots_left = 0
        self.stack: Stack = None
        self.built_at: weakref.WeakKeyDictionary[torch.nn.Module, Point] = \
            weakref.WeakKeyDictionary()
        self.roots: weakref.WeakSet[torch.nn.Module] = weakref.WeakSet()
        self._saved: dict[int, dict[int, _Ref]] = {}
        # Keyed by id(): an OpOverload hashes in Python, a cost on every op. Op
        # overloads live as long as torch, and _ops keeps them for certain.
        self.writes_of: dict[int, tuple[tuple[int, str], ...]] = {}
        self._ops: list[Any] = []
        self._slot_counts: dict[type, int] = {}
        self._op_names: dict[int, str] = {}
        self._arg_names: dict[int, tuple[str, ...]] = {}
        self._drop = self._forget  # one bound method for every weakref callback
        self._awaiting: dict[int, Saved] = {}  # silent writes used, their proof to come
        self._ctx_of: dict[int, weakref.ref[Any]] = {}  # id(tensor) -> the Function's ctx
        self._watching = False

    # -- installation ------------------------------------------------------------------

    @contextmanager
    def installed(self) -> Iterator[Tracker]:
        with ExitStack() as stack:
            stack.enter_context(self._module_init_patched())
            stack.enter_context(self._save_for_backward_patched())
            pre = torch.nn.modules.module.register_module_forward_pre_hook(self._enter)
            stack.callback(pre.remove)
            post = torch.nn.modules.module.register_module_forward_hook(
                self._leave, always_call=True)
            stack.callback(post.remove)
            stack.enter_context(_Mode(self))
            stack.enter_context(torch.autograd.graph.saved_tensors_hooks(self._pack,
                                                                         self._unpack))
            stack.callback(self.flush)
            yield self

    def reset(self) -> None:
        """Forget the run so far (between targets run in one process)."""
        self.flush()
        self.pending_inputs.clear()
        self.last_out = self.last_op = self.slots_node = None
        self.stack = None

    @contextmanager
    def _module_init_patched(self) -> Iterator[None]:
        original = torch.nn.Module.__init__
        tracker = self

        def __init__(module: torch.nn.Module, *args: Any, **kwargs: Any) -> None:
            original(module, *args, **kwargs)
            try:
                tracker._note_construction(module, sys._getframe(1))
            except Exception:  # never break the user's model over a line number
                pass

        __init__.__wrapped__ = original  # type: ignore[attr-defined]
        __init__.__doc__ = original.__doc__
        torch.nn.Module.__init__ = __init__  # type: ignore[method-assign, assignment]
        try:
            yield
        finally:
            torch.nn.Module.__init__ = original  # type: ignore[method-assign]

    @contextmanager
    def _save_for_backward_patched(self) -> Iterator[None]:
        """Note which custom Function's ctx saves each tensor: the ctx is the node that
        unpacks it, which the pack hook (run as apply() ends) is not told."""
        context = torch.autograd.function.FunctionCtx
        original = context.save_for_backward
        tracker = self

        def save_for_backward(ctx: Any, *tensors: Any) -> None:
            original(ctx, *tensors)
            try:
                ref = weakref.ref(ctx)
            except TypeError:
                return
            if len(tracker._ctx_of) > 10_000:  # saves never packed (apply raised)
                tracker._ctx_of.clear()
            for tensor in tensors:
                if isinstance(tensor, torch.Tensor):
                    tracker._ctx_of[id(tensor)] = ref

        save_for_backward.__wrapped__ = original  # type: ignore[attr-defined]
        save_for_backward.__doc__ = original.__doc__
        context.save_for_backward = save_for_backward  # type: ignore[method-assign, assignment]
        try:
            yield
        finally:
            context.save_for_backward = original  # type: ignore[method-assign]

    def _note_construction(self, module: torch.nn.Module, frame: Any) -> None:
        # Skip the __init__ chain of the module itself (super().__init__() calls): the
        # site is where it was called from, e.g. the `nn.Dropout(...)` inside a Sequential.
        while frame is not None and frame.f_locals.get("self") is module:
            frame = frame.f_back
        user = self.user_files.innermost(frame)
        if user is not None and module not in self.built_at:
            self.built_at[module] = point(user)

    # -- module stack ------------------------------------------------------------------

    def _enter(self, module: torch.nn.Module, args: Any) -> None:
        if self.stack is None:
            self.roots.add(module)
        self.stack = (module, self.stack)

    def _leave(self, module: torch.nn.Module, args: Any, output: Any) -> None:
        stack = self.stack
        while stack is not None and stack[0] is not module:
            stack = stack[1]
        self.stack = None if stack is None else stack[1]

    def place(self) -> Place:
        """The innermost user frame, and how many modules it entered to get here: each
        ``Module._call_impl`` frame passed on the way up is one module call. (Starting
        from this frame is fine: the tracker's own frames are not the user's files.)"""
        frame: Any = sys._getframe(1)
        depth = 0
        user_files = self.user_files
        while frame is not None:
            code = frame.f_code
            if code is _CALL_IMPL:
                depth += 1
            elif code.co_filename in user_files:
                return Place(point(frame), self.stack, depth)
            frame = frame.f_back
        return Place(None, self.stack, 0)

    # -- saves -------------------------------------------------------------------------

    def _pack(self, tensor: torch.Tensor) -> Saved:
        if self.pending_writes:
            self.flush()
        if type(tensor) in _PLAIN:  # skip the mode for our own detach: cheaper
            with _NO_PYTHON_DISPATCH():
                detached = tensor.detach()
        else:  # a tensor subclass's own __torch_dispatch__ must still see it
            self.quiet = True
            try:
                detached = tensor.detach()
            finally:
                self.quiet = False
        frame = sys._getframe(1)
        saved = Saved(detached, tensor._version, _storage_key(tensor), self.place(), id(tensor))
        if frame.f_code is _FUNCTION_APPLY:  # ctx.save_for_backward, packed as apply() ends
            function = frame.f_locals.get("cls")
            saved.op = getattr(function, "__name__", "autograd.Function")
            node = tensor.grad_fn
            saved.role = "output" if node is not None and \
                type(node).__name__ == f"{saved.op}Backward" else "input"
            saved.output = weakref.ref(tensor) if saved.role == "output" \
                else self._ctx_of.pop(id(tensor), None)
        elif self._is_result_save(tensor):
            saved.op = self.op_name(self.last_op)
            saved.role = "output"
            saved.output = weakref.ref(tensor)
        else:
            self.pending_inputs.append(saved)
        if saved.key:
            ref = _Ref(saved, self._drop)
            ref.key, ref.ident, ref.finding = saved.key, id(saved), None
            bucket = self._saved.get(saved.key)
            if bucket is None:
                bucket = self._saved[saved.key] = {}
            bucket[ref.ident] = ref
        return saved

    def _forget(self, ref: _Ref) -> None:
        """A saved tensor was released by autograd (backward ran, the graph was freed)."""
        bucket = self._saved.get(ref.key)
        if bucket is not None:
            bucket.pop(ref.ident, None)
            if not bucket:
                del self._saved[ref.key]
        if ref.finding is not None:
            self.on_release(ref.finding)

    def _is_result_save(self, tensor: torch.Tensor) -> bool:
        out = self.last_out
        if out is None:
            return False
        if isinstance(out, (tuple, list)):
            if not any(tensor is o for o in out):
                return False
            node = next((o.grad_fn for o in out if isinstance(o, torch.Tensor)
                         and o.grad_fn is not None), None)
        elif tensor is out:
            node = tensor.grad_fn
        else:
            return False
        if node is None:
            return False
        if node is not self.slots_node:
            self.slots_node = node
            self.slots_left = self._result_slots(type(node))
        if self.slots_left <= 0:
            return False
        self.slots_left -= 1
        return True

    def _result_slots(self, node_type: type) -> int:
        count = self._slot_counts.get(node_type)
        if count is None:
            count = sum(1 for name in dir(node_type) if _RESULT_SLOT.fullmatch(name))
            self._slot_counts[node_type] = count
        return count

    def attribute_inputs(self, func: Any, args: Any) -> list[Saved]:
        """The saves packed since the last op were its inputs: name the op and argument."""
        op, names = self.op_name(func), self._argument_names(func)
        attributed, self.pending_inputs = self.pending_inputs, []
        for saved in attributed:
            saved.op = op
            for index, value in enumerate(args):
                if id(value) == saved.source_id:
                    saved.argument = names[index] if index < len(names) else None
                    break
        return attributed

    def op_name(self, func: Any) -> str:
        name = self._op_names.get(id(func))
        if name is None:
            name = self._op_names[id(func)] = _op_name(func)
        return name

    def _argument_names(self, func: Any) -> tuple[str, ...]:
        names = self._arg_names.get(id(func))
        if names is None:
            names = self._arg_names[id(func)] = tuple(a.name for a in func._schema.arguments)
        return names

    def _unpack(self, saved: Saved) -> torch.Tensor:
        tensor = saved.tensor
        if saved.restore and saved.original is not None:
            saved.proof = "restored"
            return saved.original  # recomputing without the silent write (see _prove)
        saved.unpacked = True
        if saved.silent is not None and saved.proof != "used" \
                and tensor._version == saved.version:
            self.flush()
            if saved.proof == "hooked":  # the node's post hook decides (see _prove)
                saved.proof = "used"
                self._awaiting[id(saved)] = saved
            else:
                write, saved.silent, saved.original = saved.silent, None, None
                saved.proof = "settled"
                self.on_silent(SilentWrite(saved, write, None))
        if tensor._version != saved.version:
            self.flush()
            if saved.latent is not None:
                self._report(saved.latent)
                saved.latent = None
            message = (
                "one of the variables needed for gradient computation has been modified "
                f"by an inplace operation: [{tensor.type()} {list(tensor.shape)}] is at "
                f"version {tensor._version}; expected version {saved.version} instead. "
                "(raised by gradguard probe, which names the write in its finding)"
            )
            self.on_stale(StaleUnpack(saved, message))
            raise RuntimeError(message)
        return tensor

    # -- writes ------------------------------------------------------------------------

    def written_arguments(self, func: Any) -> tuple[tuple[int, str], ...]:
        writes = self.writes_of.get(id(func))
        if writes is None:
            writes = tuple(
                (index, argument.name)
                for index, argument in enumerate(func._schema.arguments)
                if argument.alias_info is not None and argument.alias_info.is_write
            )
            self.writes_of[id(func)] = writes
            self._ops.append(func)
        return writes

    def check_writes(self, func: Any, writes: tuple[tuple[int, str], ...], args: Any,
                     kwargs: Any) -> None:
        for index, name in writes:
            value = args[index] if index < len(args) else kwargs.get(name)
            tensors = value if isinstance(value, (list, tuple)) else (value,)
            for tensor in tensors:
                if not isinstance(tensor, torch.Tensor):
                    continue
                bucket = self._saved.get(_storage_key(tensor))
                if not bucket:
                    continue
                tracked: list[tuple[Saved, int]] = []
                untracked: list[tuple[Saved, torch.Tensor]] = []
                for ref in list(bucket.values()):
                    saved = ref()
                    if saved is None or saved.clobbered:
                        continue
                    if shares_version_counter(tensor, saved.tensor):
                        tracked.append((saved, saved.tensor._version))
                    elif saved.silent is None and shares_elements(tensor, saved.tensor):
                        # Autograd will not see this write. Whether it matters depends
                        # on the values: keep the old ones to compare (rare: correct
                        # code does not write into memory autograd saved).
                        untracked.append((saved, _copy(saved.tensor)))
                if tracked or untracked:
                    self.pending_writes.append(Write(
                        self.op_name(func), tensor, self.place(), _in_optimizer(), tracked,
                        untracked))
                    if tracked:
                        self._watch_for_bump()

    def _watch_for_bump(self) -> None:
        """Report as soon as the write's version bump has happened, not at the next op:
        the code may crash (os.abort) or hang right after the write. A one-shot profile
        hook sees the next Python event after the op returns (its c_return, or the next
        call). Not when a profiler already holds the hook: then the next op reports."""
        if not self._watching and sys.getprofile() is None:
            self._watching = True
            sys.setprofile(self._profile)

    def _profile(self, frame: Any, event: str, arg: Any) -> None:
        # Events of the dispatch itself come before the bump: wait for one that sees it.
        for write in self.pending_writes:
            for saved, before in write.candidates:
                if saved.tensor._version > before:
                    self.flush()
                    return

    def flush(self) -> None:
        """Compare versions now that the pending writes' bumps have happened."""
        if self._watching:
            self._watching = False
            sys.setprofile(None)
        writes, self.pending_writes = self.pending_writes, []
        for write in writes:
            for saved, before in write.candidates:
                after = saved.tensor._version
                # A bump during the write is the write's own: nothing else runs between
                # the dispatch and this flush.
                if after > before and not saved.clobbered:
                    saved.clobbered = True
                    clobber = Clobber(saved, write, after)
                    if saved.unpacked:
                        # Backward already used it (retain_graph=True): the write matters
                        # only if another backward comes, and then _unpack reports it.
                        saved.latent = clobber
                    else:
                        self._report(clobber)
            for saved, original in write.untracked:
                if saved.silent is None and not saved.clobbered \
                        and not _same_values(saved.tensor, original):
                    # Same memory, own version counter: autograd will never notice. It
                    # is a bug if backward uses these values: see _unpack and _prove.
                    saved.silent, saved.original = write, original
                    self._hook_proof(saved)

    # -- silent writes: proven by recomputing the gradient -----------------------------

    def _hook_proof(self, saved: Saved) -> None:
        """Have the node that will unpack ``saved`` recompute its gradient, once it ran,
        with the values from before the silent write (a post hook, which runs before
        autograd frees the node's saved tensors)."""
        found = saved.output() if saved.output is not None else None
        node = found.grad_fn if isinstance(found, torch.Tensor) else found
        if node is None:
            return
        target = weakref.ref(saved)

        def recompute(grad_inputs: Any, grad_outputs: Any) -> None:
            current = target()
            if current is not None and current.proof == "used":
                self._prove(current, grad_inputs, grad_outputs)

        try:
            node.register_hook(recompute)
            saved.proof = "hooked"
        except (RuntimeError, TypeError, AttributeError):
            pass

    def _prove(self, saved: Saved, grad_inputs: Any, grad_outputs: Any) -> None:
        """Inside the node's post hook: run its backward again on the same incoming
        gradients, with ``saved`` unpacking its old values, and compare."""
        write = saved.silent
        self._awaiting.pop(id(saved), None)
        difference: float | None = None
        node: Any = torch._C._current_autograd_node()  # callable: runs its backward
        if node is not None and write is not None \
                and all(g is None or isinstance(g, torch.Tensor) for g in grad_outputs):
            saved.restore, saved.proof = True, "recomputing"
            try:
                with torch.no_grad():  # a custom Function's node runs by its apply()
                    again = node(*grad_outputs) if callable(node) \
                        else node.apply(*grad_outputs)
                # Only a recomputation that really read the old values proves anything
                # (the hooked node may not be the one that used the tensor).
                if saved.proof == "restored":
                    difference = _largest_difference(grad_inputs, again)
            except Exception:  # a node that cannot be called again: not proven
                difference = None
            finally:
                saved.restore = False
        saved.proof = "settled"
        saved.silent = saved.original = None
        if write is not None and difference != 0.0:
            self.on_silent(SilentWrite(saved, write, difference))

    def settle_silent(self) -> None:
        """The target ended: a silent write backward used, whose proof never ran (the
        node that used it was not the one hooked), is reported unproven."""
        awaiting, self._awaiting = self._awaiting, {}
        for saved in awaiting.values():
            if saved.proof == "used" and saved.silent is not None:
                write, saved.silent, saved.original = saved.silent, None, None
                saved.proof = "settled"
                self.on_silent(SilentWrite(saved, write, None))

    def _report(self, clobber: Clobber) -> None:
        saved = clobber.saved
        self.on_clobber(clobber)
        if saved.finding is not None:  # let the weakref tell when autograd lets go of it
            ref = self._saved.get(saved.key, {}).get(id(saved))
            if ref is not None:
                ref.finding = saved.finding


def _link_output(saves: list[Saved], out: Any) -> None:
    """Point input saves at an output of the op that saved them (see ``Saved.output``)."""
    first = out[0] if isinstance(out, (tuple, list)) and out else out
    if isinstance(first, torch.Tensor):
        ref = weakref.ref(first)
        for saved in saves:
            saved.output = ref


def _op_name(func: Any) -> str:
    """``relu_``, ``copy_``; ``add(out=)`` for the out= overloads, whose name says less."""
    if func is None:
        return "?"
    packet = getattr(func, "overloadpacket", None)
    name = str(getattr(packet, "__name__", func))
    if getattr(func, "_overloadname", "").startswith("out"):
        return f"{name}(out=)"
    return name


def _storage_key(tensor: torch.Tensor) -> int:
    """The storage's address: tensors (views, bases, detached aliases) writing the same
    memory share it. 0 when there is no plain storage (sparse, meta, empty)."""
    try:
        return int(tensor.untyped_storage().data_ptr())
    except (RuntimeError, NotImplementedError, TypeError):
        return 0


def shares_version_counter(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether a write to ``a`` bumps the version ``b`` reports: they share a counter
    (a tensor, its views, its ``detach()``), unlike ``.data``, ``unsafe_split`` outputs
    or tensors made from the same storage by hand. Told by setting ``a``'s counter one
    up and back, which no op sees; any doubt counts as shared (autograd's own case)."""
    try:
        version = a._version
        if version != b._version:
            return False
        _set_version((a,), (version + 1,))
        shared = b._version == version + 1
        _set_version((a,), (version,))
        return shared
    except (RuntimeError, TypeError):
        return True


_set_version = torch._C._autograd._unsafe_set_version_counter
_MARK_LIMIT = 1 << 26  # elements; past that, overlapping byte ranges count as shared


def shares_elements(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether two tensors on one storage have an element in common. Interleaved views
    (the gate chunks of a GRU or LSTM cell, columns of one matrix) share a byte range
    but no element; they are told apart by marking ``a``'s elements in a scratch buffer."""
    try:
        if a.numel() == 0 or b.numel() == 0 or a.device != b.device:
            return False
        spans = []
        for t in (a, b):
            extent = sum((size - 1) * stride for size, stride in zip(t.shape, t.stride(),
                                                                      strict=True))
            spans.append((t.data_ptr(), t.data_ptr() + (extent + 1) * t.element_size()))
        (a0, a1), (b0, b1) = spans
        if not (a0 < b1 and b0 < a1):
            return False
        item = a.element_size()
        low, high = min(a0, b0), max(a1, b1)
        if b.element_size() != item or (a0 - low) % item or (b0 - low) % item:
            return True
        if a.stride() == b.stride() and a.shape == b.shape:
            # Slices of one layout (the usual case): solved from the strides alone.
            answer = _same_layout_overlap((b0 - a0) // item, tuple(a.shape), a.stride())
            if answer is not None:
                return answer
        if (high - low) // item > _MARK_LIMIT:
            return True
        with _NO_PYTHON_DISPATCH(), torch.no_grad():
            marks = torch.zeros((high - low) // item, dtype=torch.bool, device=a.device)
            marks.as_strided(a.shape, a.stride(), (a0 - low) // item).fill_(True)
            return bool(marks.as_strided(b.shape, b.stride(), (b0 - low) // item).any())
    except RuntimeError:
        return True


@functools.lru_cache(maxsize=4096)  # an RNN cell asks the same question at every step
def _same_layout_overlap(distance: int, shape: tuple[int, ...],
                         stride: tuple[int, ...]) -> bool | None:
    dims = sorted(((size, step) for size, step in zip(shape, stride, strict=True)
                   if size > 1), key=lambda d: -d[1])
    return _reachable(distance, dims)


def _reachable(distance: int, dims: list[tuple[int, int]]) -> bool | None:
    """Whether ``distance`` (in elements) is ``sum(k * stride)`` with ``|k| < size`` for
    the (size, stride) pairs ``dims``, largest stride first: then two tensors of that
    layout, that far apart, share an element. None when it would take a search (a
    layout whose inner dimensions span more than an outer stride)."""
    if not dims:
        return distance == 0
    (size, stride), rest = dims[0], dims[1:]
    span = sum((s - 1) * t for s, t in rest)
    if stride <= 0 or span >= stride:
        return None
    low = max(-(size - 1), -((span - distance) // stride))  # ceil((distance - span) / stride)
    high = min(size - 1, (distance + span) // stride)
    for k in range(low, high + 1):  # at most two candidates: span < stride
        inner = _reachable(distance - k * stride, rest)
        if inner is None or inner:
            return inner
    return False


def _copy(tensor: torch.Tensor) -> torch.Tensor:
    with _NO_PYTHON_DISPATCH(), torch.no_grad():
        return tensor.clone()


def _same_values(tensor: torch.Tensor, original: torch.Tensor) -> bool:
    """Bit for bit, but NaN equal to NaN: a write that stored what was there is harmless."""
    with _NO_PYTHON_DISPATCH(), torch.no_grad():
        if tensor.is_floating_point() or tensor.is_complex():
            return bool(torch.allclose(tensor, original, rtol=0.0, atol=0.0, equal_nan=True))
        return bool(torch.equal(tensor, original))


def _largest_difference(actual: Any, again: Any) -> float | None:
    """The largest absolute difference between two lists of gradients (None entries are
    gradients not computed); None when they cannot be compared."""
    actual = actual if isinstance(actual, (tuple, list)) else (actual,)
    again = again if isinstance(again, (tuple, list)) else (again,)
    if len(actual) != len(again):
        return None
    largest = 0.0
    with _NO_PYTHON_DISPATCH(), torch.no_grad():
        for first, second in zip(actual, again, strict=True):
            if first is None or second is None:
                if (first is None) != (second is None):
                    return None
                continue
            if first.shape != second.shape:
                # The engine reduces a broadcast gradient to its input's shape after
                # the node ran (validate_outputs); the direct call did not.
                try:
                    second = second.sum_to_size(first.shape)
                except RuntimeError:
                    return None
            if first.numel():
                gap = (first.double() - second.double()).abs()
                gap[first.isnan() & second.isnan()] = 0.0
                largest = max(largest, float(gap.nan_to_num(nan=float("inf")).max()))
    return largest


def _in_optimizer() -> bool:
    """Whether a write runs under an ``optimizer.step()`` (torch/optim on the stack)."""
    frame: Any = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename.startswith(_OPTIM_DIR):
            return True
        frame = frame.f_back
    return False


_OPTIM_DIR = torch.optim.__file__.rsplit("__init__", 1)[0]
