"""The torch API: modules, optimizers, factories, functions and the tensor methods no
trace covers; which variant of a traced spelling a call is; a tensor's
``requires_grad`` switched."""

from __future__ import annotations

import ast

from gradguard.analysis.interpreter.fix_planning import FixPlanning
from gradguard.analysis.interpreter.state import (
    MAPPING,
    UNKNOWN,
    UNKNOWN_INT,
    Frame,
    State,
    by_dim,
    text_of,
)
from gradguard.analysis.syntax import Piece
from gradguard.analysis.values import (
    Kind,
    NnModule,
    Sequential,
    Storage,
    UnknownModule,
    Value,
    any_grad,
    constant,
    is_tensorish,
    unknown,
)
from gradguard.facts.table import InplaceFlag

OPTIMIZER_PREFIX = "torch.optim."
NON_TENSOR_METHODS = {"item", "tolist", "size", "dim", "numel", "numpy", "data_ptr",
                      "stride", "element_size", "is_contiguous", "get_device", "nelement",
                      "ndimension", "is_floating_point", "storage_offset"}
TUPLE_METHODS = {"max", "min", "sort", "topk", "kthvalue", "mode", "median", "nanmedian",
                 "unique", "unique_consecutive", "split", "chunk", "unbind", "tensor_split",
                 "svd", "qr", "slogdet", "aminmax", "frexp", "cummax", "cummin", "histogram"}


# The containers and wrappers of torch.nn, each built its own way below.
_CONTAINERS = {"torch.nn.Sequential", "torch.nn.ModuleList", "torch.nn.ModuleDict",
               "torch.nn.Module", "torch.nn.Parameter", "torch.nn.ParameterList",
               "torch.nn.ParameterDict"}


class TorchApi:
    """What the torch API does: a call by its qualified name, a tensor method no trace
    covers, an optimizer's step, ``requires_grad`` switched. Reads the tables and the
    run under way; plans a fix (``plans``) where a function writes in place."""

    def __init__(self, state: State, plans: FixPlanning) -> None:
        self.state = state
        self.facts = state.facts
        self.plans = plans

    def _asks_grad(self, kwargs: dict[str, Value]) -> bool:
        requires = kwargs.get("requires_grad")
        self.state.observe(requires)
        return requires is not None and requires.kind == "const" and requires.const is True

    def call_torch(self, name: str, call: ast.Call, frame: Frame, args: list[Value],
                   kwargs: dict[str, Value]) -> Value:
        run = self.state.run
        facts = self.facts
        piece = frame.piece
        label = text_of(piece, call.func)
        if name == "torch.is_grad_enabled":
            return constant(run.autograd.grad_enabled)
        if name in facts.modules:
            module = facts.modules[self.module_variant(name, kwargs)]
            inplace = self.flag(module.ctor_inplace, call, args, kwargs)
            params = run.autograd.new_storage(param=True, leaf=True)
            spec = NnModule(module, inplace, piece, call,
                            identity=self.is_identity(name, args, kwargs))
            return Value("module", spec=spec, params=params)
        if name in facts.module_wrappers:
            # weight_norm(layer) reparametrises the layer and hands it back.
            return args[0] if args and args[0].kind == "module" else unknown()
        if name == "torch.nn.Sequential":
            items = [a for a in args if a.kind == "module"]
            if len(items) != len(args):
                return Value("module", spec=UnknownModule())
            return Value("module", spec=Sequential(items, piece, call),
                         params=run.autograd.new_storage(param=True, leaf=True))
        if name.startswith("torch.nn.") and name.count(".") == 2 and name[9:10].isupper() \
                and name not in _CONTAINERS:
            # A layer no trace covers (``nn.RNN``): what its call does is unknown, but it
            # has parameters an optimizer or an update loop writes.
            return Value("module", spec=UnknownModule(),
                         params=run.autograd.new_storage(param=True, leaf=True))
        if name == "torch.nn.Module":
            # A bare module used as a container (``self.encoder = nn.Module()``, then
            # ``self.encoder.layer = ...``): it holds what is set on it.
            return Value("module", spec=UnknownModule(), attrs={},
                         params=run.autograd.new_storage(param=True, leaf=True))
        if name == "torch.nn.ModuleList":
            if args and args[0].kind == "list":
                return Value("list", items=None if args[0].items is None
                             else list(args[0].items), element=args[0].element)
            return Value("list", items=[])
        if name == "torch.nn.ModuleDict":
            # A dict of layers, looked up by key as a dict literal's items are (also by a
            # loop over its keys); one built empty takes what is set in it.
            if args and args[0].kind == "list" and args[0].name == MAPPING:
                given = args[0]
                return Value("list", name=MAPPING, element=given.element,
                             attrs=None if given.attrs is None else dict(given.attrs))
            return Value("list", name=MAPPING, attrs={} if not args else None)
        if name in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
            requires = kwargs.get("requires_grad")
            self.state.observe(requires)
            grad = not (requires is not None and requires.kind == "const" and
                        requires.const is False)
            storage = run.autograd.new_storage(leaf=grad, param=True)
            return Value("tensor", (storage,), grad)
        if name.startswith(OPTIMIZER_PREFIX) and name.count(".") == 2:
            updates: list[Value] = []
            for value in args[:1] + list(kwargs.values()):
                updates.extend(modules_in(value))
            return Value("optimizer", updates=updates)
        if name in ("torch.autograd.backward", "torch.autograd.grad"):
            loss = args[0] if args else None
            run.autograd.backward(piece, call, retain=self.state.retains(kwargs),
                                  place=run.place, loss=loss)
            return unknown()
        if name.startswith("torch.nn.init.") and name.endswith("_") and args:
            grad = run.autograd.grad_enabled
            run.autograd.grad_enabled = False
            try:
                run.autograd.write(args[0], piece, call, label)
            finally:
                run.autograd.grad_enabled = grad
            return args[0]
        if name in facts.factories:
            grad = self._asks_grad(kwargs)
            return Value("tensor", (run.autograd.new_storage(leaf=grad),), grad)
        effect = facts.functions.get(self.function_key(name, args, kwargs))
        if effect is not None and self.is_identity(name, args, kwargs, p_position=1):
            return args[0]
        if effect is not None:
            effect = effect.with_inplace(
                self.flag(effect.inplace_flag, call, args, kwargs) is True
            )
            tensors = tensor_operands(args)
            out = kwargs.get("out")
            plan = self.plans.function_plan(call, name) if effect.writes else None
            with self.state.fixing(plan):
                result = run.autograd.apply(effect, piece, call, label, tensors)
            if out is not None and is_tensorish(out):
                with self.state.fixing(self.plans.out_plan(call)):
                    run.autograd.write(out, piece, call, f"{label}(out=...)")
                return out
            return result
        tensors = tensor_operands(args)
        if name.startswith("torch.") and not tensors and "." not in name[6:]:
            # torch.linspace(...), torch.from_numpy(...): a new tensor, which requires
            # grad only when asked to.
            grad = self._asks_grad(kwargs)
            return Value("tensor", (run.autograd.new_storage(leaf=grad),), grad)
        if name.startswith("torch.") and tensors:
            out = kwargs.get("out")
            if out is not None:
                with self.state.fixing(self.plans.out_plan(call)):
                    run.autograd.write(out, piece, call, f"{label}(out=...)")
            # A torch function the tables do not know: its output's grad follows its inputs,
            # and what it saves is not guessed.
            graph = any_grad(tensors) if run.autograd.grad_enabled else False
            # Its output may be a tuple (torch.max(x, 1), torch.sort(x)): not a tensor for sure.
            return Value("unknown", (run.autograd.new_storage(),), graph,
                         history=tuple(tensors))
        return unknown()

    def module_variant(self, name: str, kwargs: dict[str, Value]) -> str:
        """The traced variant a keyword argument selects (``Embedding(max_norm=1.0)`` is
        ``torch.nn.Embedding#max_norm``), when it is given a value other than None."""
        for keyword, value in kwargs.items():
            variant = f"{name}#{keyword}"
            if variant in self.facts.modules:
                self.state.observe(value)
                if not (value.kind == "const" and value.const is None):
                    return variant
        return name

    def is_identity(self, name: str, args: list[Value], kwargs: dict[str, Value],
                    p_position: int = 0) -> bool:
        """Dropout with p == 0 returns its input untouched, inplace or not."""
        if "dropout" not in name.lower():
            return False
        p = kwargs.get("p")
        if p is None and len(args) > p_position:
            p = args[p_position]
        self.state.observe(p)
        return p is not None and p.kind == "const" and p.const == 0

    def function_key(self, name: str, args: list[Value],
                     kwargs: dict[str, Value] | None = None) -> str:
        """Picks the traced variant of a spelling whose behaviour depends on its arguments."""
        self.state.observe(*args[:2])
        reduced = f"{name}#dim"
        if reduced in self.facts.functions and by_dim(args[1:], kwargs or {}):
            return reduced  # torch.max(x, 1): (values, indices), not the maximum
        if name == "torch.einsum" and args and args[0].kind == "const" and \
                isinstance(args[0].const, str):
            inputs, _, output = args[0].const.replace(" ", "").partition("->")
            letters = set(inputs.replace(",", ""))
            if output and letters <= set(output) and "torch.einsum#broadcast" in \
                    self.facts.functions:
                return "torch.einsum#broadcast"
        scalar = f"{name}#scalar"
        if scalar in self.facts.functions and len(args) > 1 and args[1].kind == "const":
            return scalar  # torch.pow(x, 2): no tensor exponent to keep
        if name.endswith("adaptive_avg_pool2d") or name.endswith("adaptive_max_pool2d"):
            if len(args) > 1 and args[1].kind == "const" and args[1].const == 1 and \
                    f"{name}#1" in self.facts.functions:
                return f"{name}#1"
        return name

    def flag(self, where: InplaceFlag | None, call: ast.Call, args: list[Value],
             kwargs: dict[str, Value]) -> bool | None:
        """The value of an ``inplace`` switch at a call, when it is known."""
        if where is None:
            return False
        value = kwargs.get(where.name)
        if value is None and where.position is not None and where.position < len(args):
            if not any(isinstance(arg, ast.Starred) for arg in call.args):
                value = args[where.position]
        if value is None:
            return False
        self.state.observe(value)
        if value.kind == "const" and value.const not in UNKNOWN:
            return bool(value.const)
        return None

    def untraced_method(self, owner: Value, name: str, args: list[Value]) -> Value:
        """A Tensor method no spelling traced: what it returns, saving nothing known."""
        if name in NON_TENSOR_METHODS:
            return constant(UNKNOWN_INT)
        if name.startswith("new_") or (name == "sample" and owner.kind != "tensor"):
            # ``sample()`` of a torch distribution draws under no_grad (``rsample()`` is
            # the draw that keeps the graph): what it returns carries no history.
            return Value("tensor", (self.state.run.autograd.new_storage(),), False)
        grad = None if owner.requires_grad is not False else False
        kind: Kind = "unknown" if name in TUPLE_METHODS or owner.kind != "tensor" \
            else "tensor"
        return Value(kind, (self.state.run.autograd.new_storage(),), grad,
                     history=(owner, *[a for a in args if is_tensorish(a)]))

    def optimizer_step(self, optimizer: Value, piece: Piece, call: ast.Call) -> None:
        run = self.state.run
        grad = run.autograd.grad_enabled
        # optimizer.step() runs under no_grad: it bumps versions but is no leaf misuse.
        run.autograd.grad_enabled = False
        try:
            for module in optimizer.updates or []:
                for storage in parameter_storages(module):
                    if storage.grad_off:
                        continue  # frozen: no grad, so the step leaves it alone
                    run.autograd.write(Value("tensor", (storage,), True), piece, call,
                                       f"{text_of(piece, call.func)}()", place=run.place)
        finally:
            run.autograd.grad_enabled = grad

    def set_requires_grad(self, owner: Value, flag: Value | None) -> None:
        """``x.requires_grad_(flag)`` or ``x.requires_grad = flag`` (no flag: on). A tensor
        that did not require grad becomes a leaf that does."""
        self.state.observe(flag)
        on = flag is None or (flag.kind == "const" and bool(flag.const))
        off = flag is not None and flag.kind == "const" and not flag.const
        if owner.view is not None:
            owner.requires_grad = True if on else owner.requires_grad
            return
        for storage in owner.storages:
            if on and (owner.requires_grad is False or storage.grad_off):
                storage.leaf, storage.grad_off = True, False
            elif off and storage.leaf:
                storage.leaf, storage.grad_off = False, True
        owner.requires_grad = True if on else False if off else owner.requires_grad


def tensor_operands(args: list[Value]) -> list[Value]:
    tensors: list[Value] = []
    for value in args:
        if is_tensorish(value):
            tensors.append(value)
        elif value.kind == "list" and value.items is not None:
            tensors.extend(v for v in value.items if is_tensorish(v))
    return tensors


def modules_in(value: Value) -> list[Value]:
    """The modules whose parameters an optimizer argument refers to."""
    if value.kind == "module":
        return [value]
    if value.updates is not None:
        return list(value.updates)
    if value.kind == "list" and value.items is not None:
        found: list[Value] = []
        for item in value.items:
            found.extend(modules_in(item))
        return found
    return []


def parameter_storages(module: Value, depth: int = 0) -> list[Storage]:
    """The storages of a module's parameters and of those of the modules it holds."""
    found: list[Storage] = [] if module.params is None else [module.params]
    if depth > 6:
        return found
    if isinstance(module.spec, Sequential):
        for item in module.spec.items:
            found.extend(parameter_storages(item, depth + 1))
    for value in (module.attrs or {}).values():
        if value.kind == "module":
            found.extend(parameter_storages(value, depth + 1))
        elif value.kind == "list" and value.items:
            for item in value.items:
                if item.kind == "module":
                    found.extend(parameter_storages(item, depth + 1))
        elif value.kind == "tensor" and any(s.param for s in value.storages):
            found.extend(s for s in value.storages if s.param)
    return found
