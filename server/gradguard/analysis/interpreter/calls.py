"""Calls: which function, module or method a call reaches, and running user functions
through their summaries (:mod:`gradguard.analysis.summaries`)."""

from __future__ import annotations

import ast
import functools

from gradguard.analysis.findings import Site, better
from gradguard.analysis.fix_plans import CloneIfUsedLater, Plan, SelectRows, is_dotted
from gradguard.analysis.interpreter.classes import class_of, is_autograd_function, is_sequential
from gradguard.analysis.interpreter.expressions import Expressions
from gradguard.analysis.interpreter.fix_planning import FixPlanning
from gradguard.analysis.interpreter.state import (
    GRAD_OFF,
    MAPPING,
    MAX_DEPTH,
    UNKNOWN_INT,
    UNKNOWN_STR,
    Frame,
    RunState,
    State,
    by_dim,
    text_of,
)
from gradguard.analysis.interpreter.statements import Statements
from gradguard.analysis.interpreter.torch_api import TorchApi, parameter_storages
from gradguard.analysis.names import dotted_name
from gradguard.analysis.program import ClassInfo, FunctionInfo, decorator_names
from gradguard.analysis.reach import demote_unreached
from gradguard.analysis.summaries import Context, Run, Summary, context_of, replay
from gradguard.analysis.syntax import Piece
from gradguard.analysis.values import (
    FunctionContext,
    NnModule,
    Save,
    Sequential,
    UnknownModule,
    UserModule,
    Value,
    any_grad,
    constant,
    is_tensorish,
    unknown,
)

MODULE_RETURNS_SELF = {"train", "eval", "to", "cuda", "cpu", "float", "double", "half",
                       "requires_grad_", "type", "share_memory"}
# The longest ``range(n)`` whose numbers are told apart: a loop over it is unrolled, and
# runs no more often than the two rounds any other loop gets.
MAX_RANGE = 2
NAMESPACES = ("types.SimpleNamespace", "argparse.Namespace")
SMALL_BUILTINS = ("range", "len", "int", "max", "min", "sum", "round", "abs")
# The attribute a name computed at run time stands for (``setattr(self, f"conv{i}", m)``).
ANY_ATTR = "<any>"

# Annotations of a parameter that holds tensors in a container, not a tensor.
_CONTAINERS = frozenset({"list", "List", "tuple", "Tuple", "Sequence", "MutableSequence",
                         "Iterable", "dict", "Dict", "Mapping", "MutableMapping"})


def is_container(annotation: ast.expr | None) -> bool:
    """``list[torch.Tensor]``, ``typing.List[Tensor]``, ``Sequence[Tensor]``, ..."""
    if isinstance(annotation, ast.Subscript):
        annotation = annotation.value
    if isinstance(annotation, ast.Attribute):
        return annotation.attr in _CONTAINERS
    return isinstance(annotation, ast.Name) and annotation.id in _CONTAINERS


def as_annotated(param: ast.arg, value: Value) -> Value:
    """What a parameter is bound to: a value not known to be a tensor, given to a
    parameter annotated as a container, is a container of such values."""
    if is_container(param.annotation) and (
            value.kind == "unknown" or value.kind == "tensor" and value.maybe_list):
        return Value("list", element=value)
    return value


# How a parameter no argument was given for is filled inside the callee.
_DEFAULT, _UNKNOWN = "default", "unknown"
_GLOBAL = "global:"


@functools.lru_cache(maxsize=4096)
def free_names(node: ast.AST) -> tuple[str, ...]:
    """The names a function reads that it does not bind itself: its globals."""
    bound: set[str] = set()
    read: dict[str, None] = {}
    args = getattr(node, "args", None)
    if isinstance(args, ast.arguments):
        for arg in args.posonlyargs + args.args + args.kwonlyargs + \
                [a for a in (args.vararg, args.kwarg) if a is not None]:
            bound.add(arg.arg)
    for child in ast.walk(node):
        if isinstance(child, ast.Name):
            if isinstance(child.ctx, ast.Load):
                read.setdefault(child.id, None)
            else:
                bound.add(child.id)
        elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and \
                child is not node:
            bound.add(child.name)
        elif isinstance(child, ast.arg) and child is not node:
            bound.add(child.arg)
    return tuple(name for name in read if name not in bound)


def keywords_mapping(keywords: dict[str, Value]) -> Value:
    """The dict a ``**kwargs`` parameter receives: its items known by key."""
    values = list(keywords.values())
    # Iterated, its items are any one of them: known only when there is one.
    pair = Value("list", items=[constant(UNKNOWN_STR),
                                values[0] if len(values) == 1 else unknown()])
    return Value("list", name=MAPPING, element=pair, attrs=dict(keywords))


def is_super(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
        node.func.id == "super"


def partial_applied(call: ast.Call) -> ast.Call:
    """``functools.partial(f, a, k=v)(b)`` as the ``f(a, b, k=v)`` it makes (made once a
    node: a summary knows code by its nodes)."""
    made = getattr(call, "_gradguard_partial", None)
    if isinstance(made, ast.Call):
        return made
    inner = call.func
    assert isinstance(inner, ast.Call)
    made = ast.copy_location(ast.Call(inner.args[0], inner.args[1:] + call.args,
                                      inner.keywords + call.keywords), call)
    made.end_lineno, made.end_col_offset = call.end_lineno, call.end_col_offset
    call._gradguard_partial = made  # type: ignore[attr-defined]
    return made


def partial_of(func: Value, args: list[Value], kwargs: dict[str, Value]) -> Value:
    """``functools.partial(func, *args, **kwargs)``: a function value that holds the
    arguments it was given (``items`` and ``attrs``, which no other function value has)."""
    if func.kind != "function":
        return unknown()
    if func.items is not None:  # a partial of a partial
        args = [*func.items, *args]
        kwargs = {**(func.attrs or {}), **kwargs}
    return Value("function", const=func.const, name=func.name, items=args,
                 attrs=dict(kwargs))


def returns_value(function: FunctionInfo) -> bool:
    """Whether a function can return something other than None (a forward hook that
    does not keeps the module's output)."""
    return any(isinstance(node, ast.Return) and node.value is not None and
               not (isinstance(node.value, ast.Constant) and node.value.value is None)
               for node in ast.walk(function.node)) or \
        any(isinstance(node, (ast.Yield, ast.YieldFrom)) for node in ast.walk(function.node))

# What ``register_full_backward_hook`` adds to a layer's hooks (beside the forward hooks).
BACKWARD_HOOK = "<full backward hook>"


def behind_backward_hook(value: Value) -> Value:
    """A tensor as a BackwardHookFunction hands it on: the same storage, a view that may
    not be written in place."""
    if not is_tensorish(value) or value.requires_grad is False:
        return value
    return Value("tensor", value.storages, value.requires_grad, view="hooked",
                 history=(value,), exempt=value.exempt)


def named_attribute(func: ast.expr) -> ast.expr:
    """``getattr(x, "name")`` called, as the ``x.name`` it looks up (made once a node)."""
    if not (isinstance(func, ast.Call) and isinstance(func.func, ast.Name) and
            func.func.id == "getattr" and len(func.args) == 2 and not func.keywords and
            isinstance(func.args[1], ast.Constant) and isinstance(func.args[1].value, str)):
        return func
    made = getattr(func, "_gradguard_attribute", None)
    if not isinstance(made, ast.Attribute):
        made = ast.copy_location(ast.Attribute(func.args[0], func.args[1].value, ast.Load()),
                                 func)
        made.end_lineno, made.end_col_offset = func.end_lineno, func.end_col_offset
        func._gradguard_attribute = made  # type: ignore[attr-defined]
    return made


def map_as_comprehension(call: ast.Call) -> ast.ListComp | None:
    """``map(f, xs, ys)`` as the list ``[f(x, y) for x, y in zip(xs, ys)]`` it yields, made
    of the call's own nodes (made once a call: a summary knows code by its nodes)."""
    made = getattr(call, "_gradguard_map", None)
    if isinstance(made, ast.ListComp):
        return made
    if len(call.args) < 2 or call.keywords or \
            any(isinstance(arg, ast.Starred) for arg in call.args):
        return None
    function, *iterables = call.args
    names = [f"_gradguard_item{i}" for i in range(len(iterables))]
    target: ast.expr = ast.Name(names[0], ast.Store())
    source = iterables[0]
    if len(iterables) > 1:
        target = ast.Tuple([ast.Name(n, ast.Store()) for n in names], ast.Store())
        source = ast.Call(ast.Name("zip", ast.Load()), list(iterables), [])
    element = ast.Call(function, [ast.Name(n, ast.Load()) for n in names], [])
    made = ast.ListComp(element, [ast.comprehension(target, source, [], 0)])
    for node in ast.walk(made):
        if not hasattr(node, "lineno") and isinstance(node, (ast.expr, ast.stmt)):
            ast.copy_location(node, call)
            node.end_lineno, node.end_col_offset = call.end_lineno, call.end_col_offset
    call._gradguard_map = made  # type: ignore[attr-defined]
    return made


class _Given:
    """A call's own values, handed to ``Calls._frame`` as a summary's run hands it its
    placeholders."""

    def __init__(self, inputs: list[Value | None]) -> None:
        self.inputs = inputs

    def input(self, position: int) -> Value | None:
        return self.inputs[position] if position < len(self.inputs) else None


class Calls:
    """Runs calls: evaluates the arguments (``expressions``), then what is called, a
    user function through its summary (its body run by ``statements``), a module, a
    method, or the torch API (``torch_api``)."""

    def __init__(self, state: State, expressions: Expressions, statements: Statements,
                 torch_api: TorchApi, plans: FixPlanning) -> None:
        self.state = state
        self.facts = state.facts
        self.expressions = expressions
        self.statements = statements
        self.torch_api = torch_api
        self.plans = plans

    # -- entry points -----------------------------------------------------------------

    def run_function(self, function: FunctionInfo, self_value: Value | None,
                     info: ClassInfo | None) -> None:
        """Run a function as an entry point, with the arguments a caller would pass."""
        run = self.state.run
        args: list[Value] = []
        program = self.state.program_at(function.path)
        if function.name == "forward" and info is not None and \
                program.is_module_class(info, run.reads):
            # A module's forward is called with tensors. The first is taken to be the
            # activation a network passes on, which requires grad in training; whether
            # the others do (masks, targets) depends on the caller.
            params = function.node.args.args
            required = params[:len(params) - len(function.node.args.defaults)][1:]
            for index, param in enumerate(required):
                tensor = run.autograd.fresh(True if index == 0 else None)
                if is_container(param.annotation):
                    # ``features: list[Tensor]``: ``features[i] = ...`` replaces an item.
                    args.append(Value("list", element=tensor))
                else:
                    tensor.maybe_list = True  # forward(self, x) is also called with lists
                    args.append(tensor)
        self.call_function(function, args, {}, self_value, None)

    def instantiate(self, info: ClassInfo, site: Site | None, args: list[Value],
                    kwargs: dict[str, Value]) -> Value:
        """A user class instance: its attributes are whatever ``__init__`` assigns."""
        run = self.state.run
        params = run.autograd.new_storage(param=True, leaf=True)
        instance = Value("module", spec=UserModule(info.path, info.name,
                                                   None if site is None else site[1]),
                         attrs={},
                         params=params)
        dataclass = any((dotted_name(d.func if isinstance(d, ast.Call) else d) or "")
                        .endswith("dataclass") for d in info.node.decorator_list)
        if dataclass or not info.bases:
            self._class_fields(info, instance, args, kwargs, dataclass)
        found = self.state.program_at(info.path).method(info, "__init__", run.reads)
        if found is not None:
            self.call_function(found[1], args, kwargs, instance, site)
        return instance

    def _class_fields(self, info: ClassInfo, instance: Value, args: list[Value],
                      kwargs: dict[str, Value], dataclass: bool) -> None:
        """A plain class's (or a dataclass's) class-level values, which its instances
        read as attributes (``Config().act``), and a dataclass's fields given to its
        constructor. Not a torch module's: its class attributes are flags for the
        libraries that load it, which a value known here would only decide wrongly."""
        if info.piece is None or instance.attrs is None:
            return
        frame = Frame({}, info.piece, self.state.program_at(info.path))
        fields = []
        for statement in info.node.body:
            target: ast.expr | None = None
            value: ast.expr | None = None
            if isinstance(statement, ast.AnnAssign):
                target, value = statement.target, statement.value
            elif isinstance(statement, ast.Assign) and len(statement.targets) == 1:
                target, value = statement.targets[0], statement.value
            if not isinstance(target, ast.Name):
                continue
            fields.append(target.id)
            if value is not None:
                instance.attrs[target.id] = self.expressions.eval(value, frame)
        if dataclass and "__init__" not in info.methods:
            given = dict(zip(fields, args, strict=False))
            given.update((name, kwargs[name]) for name in fields if name in kwargs)
            instance.attrs.update(given)

    # -- user functions, through summaries ----------------------------------------------

    def call_function(self, function: FunctionInfo, args: list[Value],
                      kwargs: dict[str, Value], self_value: Value | None,
                      site: Site | None) -> Value:
        """Apply ``function``'s summary for the values it is given (computed if new)."""
        state = self.state
        run = state.run
        node = function.node
        if len(state.stack) >= MAX_DEPTH or node in state.stack:
            # Recursion is cut where it closes: a summary computed inside that loop holds
            # wherever it is used; one cut by the depth bound holds only where it was made.
            level = state.stack.index(node) if node in state.stack else -1
            run.cut = level if run.cut is None else min(run.cut, level)
            return unknown()
        names = decorator_names(node)
        inputs, fills = self._bind(function, args, kwargs, self_value,
                                   "staticmethod" in names)
        script = state.scripts.get(function.path)
        if script is not None:
            # The globals it reads, as the script has bound them so far: inputs too.
            for name in free_names(node):
                value = script.env.get(name)
                # A def or class of the file is found by its name; a name bound to a
                # torch class or a partial (``act_layer = partial(nn.ReLU, ...)``) is not.
                if value is not None and (value.kind != "function" or value.const is None
                                          or value.items is not None):
                    inputs.append(value)
                    fills += (f"{_GLOBAL}{name}",)
        if isinstance(function.scope, Frame):
            # A closure's free names, as its defining frame has them bound now.
            for name in free_names(node):
                value = function.scope.env.get(name)
                if value is not None and name not in function.outer:
                    inputs.append(value)
                    fills += (f"{_GLOBAL}{name}",)
        grad = run.autograd.grad_enabled
        if any(n in GRAD_OFF or n.split(".")[-1] in ("no_grad", "inference_mode")
               for n in names):
            grad = False
        if state.inline_methods and any(value is not None and value.kind == "module"
                                        for value in inputs):
            # A function given a module (its method, or a helper such as
            # ``get_module_from_name(model, name)``) is given the whole module (its layers,
            # their parameters, what they hold): a context that large costs more to key,
            # copy and replay than running the body again, and is seldom met twice
            # (post_init walks a different model in each file).
            return self._inline(function, inputs, fills, grad, site)
        context = context_of(inputs)
        allowed = run.autograd.mutation_allowed
        key = (id(node), grad, allowed, state.repeating > 0, fills, context.key)
        summary = state.cache.find(key, context)
        if summary is None or summary.function.node is not node:
            summary = self._summarise(function, context, fills, grad, allowed)
            if summary.cut is None:
                state.cache.add(key, summary)
        else:
            run.reads.update(summary.reads)
        # What the callee looked at, the caller's run has looked at too.
        state.observe(*(found for index, _ in summary.guard
                        if isinstance(found := context.objects[index], Value)))
        via = run.autograd.via
        if site is not None and (state.stack or state.enters_library(function.path)):
            via = via + (site,)
        return replay(summary, context, run.autograd, run.attr_journal, via)

    def _inline(self, function: FunctionInfo, inputs: list[Value | None],
                fills: tuple[str | None, ...], grad: bool, site: Site | None) -> Value:
        """Run ``function``'s body on the caller's own values, in the caller's world: what
        a summary's replay would do, without the summary."""
        state = self.state
        run = state.run
        autograd = run.autograd
        outer = autograd.grad_enabled, autograd.via, autograd.plan
        # Where the caller is (the statement a fix would rewrite): the callee's own
        # statements take their place while it runs, as in a summary's fresh run.
        where = run.place, run.block, run.positions
        run.positions = []
        autograd.grad_enabled = grad
        if site is not None and (state.stack or state.enters_library(function.path)):
            autograd.via = autograd.via + (site,)
        autograd.plan = None
        known, backwards = dict(autograd.findings), autograd.backwards
        state.stack.append(function.node)
        try:
            frame = self._frame(function, _Given(inputs), fills)
            self.statements.exec_block(function.node.body, frame)
        finally:
            state.stack.pop()
            autograd.grad_enabled, autograd.via, autograd.plan = outer
            run.place, run.block, run.positions = where
        # What this call reported (again, perhaps, under a key an earlier call had).
        made = {key: finding for key, finding in autograd.findings.items()
                if known.get(key) is not finding}
        if made:
            demote_unreached(made, function.piece, function.node, frame.returns,
                             [value for value in inputs if value is not None],
                             autograd.backwards - backwards)
            for key, finding in made.items():
                earlier = known.get(key)
                autograd.findings[key] = earlier if earlier is not None and \
                    better(earlier, finding) else finding
        result = constant(None)
        if frame.returns:
            result = frame.returns[0]
            for value in frame.returns[1:]:
                result = state.join(result, value)
        return result

    @staticmethod
    def _bind(function: FunctionInfo, args: list[Value], kwargs: dict[str, Value],
              self_value: Value | None, is_static: bool
              ) -> tuple[list[Value | None], tuple[str | None, ...]]:
        """The values bound to ``self`` and each parameter (None: filled in the callee)."""
        spec = function.node.args
        params = list(spec.posonlyargs) + list(spec.args)
        defaults = [None] * (len(params) - len(spec.defaults)) + list(spec.defaults)
        inputs: list[Value | None] = [None]
        fills: list[str | None] = []
        positional = list(args)
        if self_value is not None and not is_static and params:
            inputs[0] = self_value
            params, defaults = params[1:], defaults[1:]
        for param, default in zip(params, defaults, strict=True):
            if positional:
                inputs.append(as_annotated(param, positional.pop(0)))
                fills.append(None)
            elif param.arg in kwargs:
                inputs.append(as_annotated(param, kwargs[param.arg]))
                fills.append(None)
            elif isinstance(given := function.defaults.get(param.arg), Value):
                inputs.append(given)  # evaluated where the function was defined
                fills.append(None)
            else:
                inputs.append(None)
                fills.append(_UNKNOWN if default is None else _DEFAULT)
        for param, kw_default in zip(spec.kwonlyargs, spec.kw_defaults, strict=True):
            if param.arg in kwargs:
                inputs.append(as_annotated(param, kwargs[param.arg]))
                fills.append(None)
            elif isinstance(given := function.defaults.get(param.arg), Value):
                inputs.append(given)
                fills.append(None)
            else:
                inputs.append(None)
                fills.append(_UNKNOWN if kw_default is None else _DEFAULT)
        if spec.vararg is not None:
            inputs.append(Value("list", items=positional))
            fills.append(None)
        named = {param.arg for param in params} | {param.arg for param in spec.kwonlyargs}
        extra = {name: value for name, value in kwargs.items() if name not in named}
        if spec.kwarg is not None:
            # ``**kwargs``: the keywords no parameter took, by name (None: not known).
            inputs.append(keywords_mapping(extra) if extra else None)
            fills.append(None if extra else _UNKNOWN)
        return inputs, tuple(fills)

    def _summarise(self, function: FunctionInfo, context: Context,
                   fills: tuple[str | None, ...], grad: bool, allowed: bool) -> Summary:
        state = self.state
        state.cache.computed += 1
        summary_run = Run(context, grad)
        summary_run.autograd.mutation_allowed = allowed
        caller = state.run
        inner = state.run = RunState(summary_run.autograd, watched=summary_run.watched,
                                     observed=summary_run.observed)
        level = len(state.stack)
        state.stack.append(function.node)
        try:
            frame = self._frame(function, summary_run, fills)
            self.statements.exec_block(function.node.body, frame)
        except BaseException:
            state.run = caller
            # What was found before the run stopped still stands.
            for finding in list(summary_run.autograd.findings.values()):
                caller.autograd.report(finding)
            raise
        finally:
            state.stack.pop()
        state.run = caller
        caller.reads.update(inner.reads)
        cut = inner.cut
        if cut is not None and cut >= level:
            cut = None  # only recursion into this function or deeper: holds anywhere
        if cut is not None:
            caller.cut = cut if caller.cut is None else min(caller.cut, cut)
        demote_unreached(summary_run.autograd.findings, function.piece, function.node,
                         frame.returns, summary_run.placeholders,
                         summary_run.autograd.backwards)
        result = constant(None)
        if frame.returns:
            result = frame.returns[0]
            for value in frame.returns[1:]:
                result = state.join(result, value)
        return summary_run.finish(function, result, inner.reads, cut)

    def _frame(self, function: FunctionInfo, run: Run | _Given,
               fills: tuple[str | None, ...]) -> Frame:
        spec = function.node.args
        program = self.state.program_at(function.path)
        frame = Frame({name: Value("function", const=info)
                       for name, info in function.outer.items()},
                      function.piece, program, run.input(0))
        params = list(spec.posonlyargs) + list(spec.args)
        defaults: list[ast.expr | None] = \
            [None] * (len(params) - len(spec.defaults)) + list(spec.defaults)
        if frame.self_value is not None:
            frame.env[params[0].arg] = frame.self_value
            params, defaults = params[1:], defaults[1:]
        named = list(zip(params, defaults, strict=True)) + \
            list(zip(spec.kwonlyargs, spec.kw_defaults, strict=True))
        # Defaults are read where the function was defined: the globals it was given.
        outside = Frame({fill.removeprefix(_GLOBAL): run.input(position + 1) or unknown()
                         for position, fill in enumerate(fills)
                         if fill is not None and fill.startswith(_GLOBAL)},
                        function.piece, program)
        for position, ((param, default), fill) in enumerate(zip(named, fills, strict=False)):
            given = run.input(position + 1)
            if given is not None:
                frame.env[param.arg] = given
            elif fill == _DEFAULT and default is not None:
                frame.env[param.arg] = self.expressions.eval(default, outside)
            else:
                frame.env[param.arg] = as_annotated(param, unknown())
        if spec.vararg is not None:
            frame.env[spec.vararg.arg] = run.input(len(named) + 1) or Value("list")
        if spec.kwarg is not None:
            at = len(named) + 1 + (spec.vararg is not None)
            frame.env[spec.kwarg.arg] = run.input(at) or unknown()
        frame.env.update(outside.env)
        return frame

    # -- calls ------------------------------------------------------------------------

    def eval_call(self, call: ast.Call, frame: Frame) -> Value:
        if isinstance(call.func, ast.Call) and call.func.args and \
                frame.program.qualify(call.func.func, self.state.run.reads) == \
                "functools.partial":
            call = partial_applied(call)
        func = named_attribute(call.func)
        piece = frame.piece
        if isinstance(func, ast.Attribute) and is_super(func.value) and \
                frame.self_value is not None and \
                (method := self.super_method(frame, func.attr)) is not None:
            args, kwargs = self.arguments(call, frame)
            return self.call_function(method, args, kwargs, frame.self_value, (piece, call))
        if isinstance(func, ast.Attribute) and is_super(func.value) and \
                frame.self_value is not None and frame.self_value.kind == "module" and \
                func.attr in MODULE_RETURNS_SELF:
            # ``super().train(mode)`` in a model that overrides ``train`` (transformers'
            # PreTrainedModel does): torch's Module.train, which sets the modes and
            # returns the module.
            return self.call_module_method(frame.self_value, func.attr, call, frame,
                                           own=False)
        if isinstance(func, ast.Attribute) and is_super(func.value) and \
                func.attr == "__init__" and (layers := self._sequential_layers(call, frame)):
            # ``super().__init__(*layers)`` in a subclass of nn.Sequential: torch adds the
            # layers as its first modules, named by position, and runs them in that order
            # (torchvision's ops.MLP).
            self_value = frame.self_value
            assert self_value is not None and self_value.attrs is not None
            journal = self.state.run.attr_journal
            for index, layer in enumerate(layers):
                if journal is not None:
                    journal.append((self_value.attrs, str(index),
                                    self_value.attrs.get(str(index))))
                self_value.attrs[str(index)] = layer
            return constant(None)
        if isinstance(func, ast.Attribute):
            owner = self.expressions.eval(func.value, frame)
            attrs = owner.attrs or {}
            if func.attr in attrs:
                callee = attrs[func.attr]  # self.relu(x): a module held by self
            elif owner.kind != "function":
                return self.call_method(owner, func.attr, call, frame)
            elif func.attr == "apply" and isinstance(owner.const, ClassInfo) and \
                    is_autograd_function(self.state, owner.const):
                args, kwargs = self.arguments(call, frame)
                return self.apply_function(owner.const, args, kwargs, piece, call)
            elif isinstance(owner.const, ClassInfo) and func.attr in owner.const.methods:
                # ``Ops.scale_(x)``: a function of the class, given the class itself when
                # it is a classmethod, nothing when static, else its arguments as they are.
                method = owner.const.methods[func.attr]
                args, kwargs = self.arguments(call, frame)
                bound = owner if "classmethod" in decorator_names(method.node) else None
                return self.call_function(method, args, kwargs, bound, (piece, call))
            else:
                callee = self.expressions.attribute_of(owner, func, frame)
        else:
            callee = self.expressions.eval(func, frame)
        if callee.kind == "module":
            args, kwargs = self.arguments(call, frame)
            first = call.args[0] if call.args and \
                not isinstance(call.args[0], ast.Starred) else None
            return self.call_module(callee, args, piece, call, text_of(piece, func), first,
                                    kwargs=kwargs)
        if callee.kind != "function":
            return unknown()
        if callee.items is not None:
            args, kwargs = self.arguments(call, frame)
            return self.call_partial(callee, call, frame, args, kwargs)
        const = callee.const
        if isinstance(const, FunctionInfo):
            args, kwargs = self.arguments(call, frame)
            # A closure reads ``self`` from its scope; a nested function of a script
            # (or an unknown frame) is run like a method of the function around it.
            bound = frame.self_value if const.nested and const.scope is None else None
            return self.call_function(const, args, kwargs, bound, (piece, call))
        if isinstance(const, ClassInfo):
            args, kwargs = self.arguments(call, frame)
            return self.instantiate(const, (piece, call), args, kwargs)
        return self.call_named(callee.name, call, frame)

    def _sequential_layers(self, call: ast.Call, frame: Frame) -> list[Value]:
        """The modules a ``super().__init__(...)`` call gives nn.Sequential, when the
        running method is an ``__init__`` of a subclass of it (none: not such a call)."""
        self_value = frame.self_value
        if self_value is None or self_value.attrs is None or \
                not isinstance(self_value.spec, UserModule) or not self.state.stack or \
                getattr(self.state.stack[-1], "name", None) != "__init__":
            return []
        info = class_of(self.state, self_value.spec)
        if info is None or not is_sequential(self.state, info):
            return []
        args, _ = self.arguments(call, frame)
        return args if args and all(arg.kind == "module" for arg in args) else []

    def super_method(self, frame: Frame, name: str) -> FunctionInfo | None:
        """``super().name``: the method of that name a base of the class whose method is
        running defines, when the bases are the project's."""
        if not self.state.stack:
            return None
        running = self.state.stack[-1]
        reads = self.state.run.reads
        program = frame.program
        for info in program.classes.values():
            if not any(method.node is running for method in info.methods.values()):
                continue
            for base in info.bases:
                base_info = program.base_class(info, base, reads)
                if base_info is None:
                    continue
                found = self.state.program_at(base_info.path).method(base_info, name, reads)
                if found is not None:
                    return found[1]
            return None
        return None

    def arguments(self, call: ast.Call,
                  frame: Frame) -> tuple[list[Value], dict[str, Value]]:
        args: list[Value] = []
        kwargs: dict[str, Value] = {}
        for arg in call.args:
            if isinstance(arg, ast.Starred):
                value = self.expressions.eval(arg.value, frame)
                if value.kind == "list" and value.items is not None:
                    args.extend(value.items)
                else:
                    args.append(Value("list"))
            else:
                args.append(self.expressions.eval(arg, frame))
        for keyword in call.keywords:
            value = self.expressions.eval(keyword.value, frame)
            if keyword.arg is not None:
                kwargs[keyword.arg] = value
            elif value.kind == "list" and value.name == MAPPING and value.attrs is not None:
                kwargs.update(value.attrs)  # ``**config``: a dict of known keys
        return args, kwargs

    def call_named(self, name: str, call: ast.Call, frame: Frame) -> Value:
        """A call of a dotted name: a class or function of the project, or a torch API."""
        definition = frame.program.definition(name, self.state.run.reads)
        if name == "map" and definition is None and (mapped := map_as_comprehension(call)):
            return self.expressions.eval(mapped, frame)
        args, kwargs = self.arguments(call, frame)
        return self.call_given(name, definition, call, frame, args, kwargs)

    def apply_function(self, info: ClassInfo, args: list[Value], kwargs: dict[str, Value],
                       piece: Piece, call: ast.Call) -> Value:
        """``Fn.apply(...)`` of a custom autograd Function: its forward run with grad off
        on a ``ctx``; then what ``ctx.save_for_backward`` kept is saved for ``Fn``'s
        backward, an input it marked dirty was written in place, an input returned as
        it was is a view no in-place op may write, and the outputs require grad when an
        input does."""
        run = self.state.run
        autograd = run.autograd
        reads = run.reads
        found = self.state.program_at(info.path).method(info, "forward", reads)
        if found is None:
            return unknown()
        context = FunctionContext()
        ctx = Value("module", spec=context, attrs={})
        inputs, fills = self._bind(found[1], [ctx, *args], kwargs, None, True)
        out = self._inline(found[1], inputs, fills, False, (piece, call))
        given = [a for a in [*args, *kwargs.values()] if is_tensorish(a)]
        graph = any_grad(given) if autograd.grad_enabled else False
        label = f"{info.name}.apply"
        dirty = {id(s) for value in context.dirty for s in value.storages}
        for value in context.dirty:
            autograd.write(value, piece, call, label)
        passed = {id(s) for value in given for s in value.storages}

        def output(value: Value) -> Value:
            if value.kind == "list" and value.items is not None:
                return Value("list", items=[output(item) for item in value.items])
            if not is_tensorish(value):
                return value
            ids = {id(s) for s in value.storages}
            # An input returned as it was, or a view made inside: both are views autograd
            # cannot rebase onto the Function's backward.
            viewed = (bool(ids & passed) and not ids & dirty) or \
                (value.view is not None and value.view != "data")
            return Value("tensor", value.storages, graph, view="custom" if viewed else None,
                         history=tuple(given))

        result = output(out)
        if graph is not False:
            made = {id(s) for value in (result.items or [result]) for s in value.storages}
            for save_piece, save_node, value in context.saved:
                if not is_tensorish(value):
                    continue
                role = "output" if {id(s) for s in value.storages} & made else "input"
                for storage in value.storages:
                    autograd.add_save(storage, Save(
                        save_piece, save_node, f"{info.name}.forward|{info.name}", role,
                        "high" if graph is True else "medium", result, autograd.via))
        return result

    def call_partial(self, partial: Value, call: ast.Call, frame: Frame,
                     args: list[Value], kwargs: dict[str, Value]) -> Value:
        """A ``functools.partial`` object called: what it wraps, given the arguments it
        holds before the call's own (``act_layer = partial(nn.ReLU, inplace=True)``,
        then ``act_layer()``)."""
        args = [*(partial.items or []), *args]
        kwargs = {**(partial.attrs or {}), **kwargs}
        const = partial.const
        if isinstance(const, FunctionInfo):
            return self.call_function(const, args, kwargs, None, (frame.piece, call))
        definition = const if isinstance(const, ClassInfo) else None
        if definition is None and not partial.name:
            return unknown()
        return self.call_given(partial.name, definition, call, frame, args, kwargs)

    def call_given(self, name: str, definition: object, call: ast.Call, frame: Frame,
                   args: list[Value], kwargs: dict[str, Value]) -> Value:
        """``call_named`` once the arguments are values."""
        if name == "functools.partial" and definition is None and args:
            return partial_of(args[0], args[1:], kwargs)
        if isinstance(definition, ClassInfo):
            return self.instantiate(definition, (frame.piece, call), args, kwargs)
        if isinstance(definition, FunctionInfo):
            return self.call_function(definition, args, kwargs, None, (frame.piece, call))
        if name == "super":
            return Value("function", name="super")
        if name in NAMESPACES and not args:
            # An object whose attributes are the keywords it is given.
            return Value("module", spec=UserModule(frame.program.path, name, call),
                         attrs=dict(kwargs))
        if name == "next" and args and args[0].kind == "list":
            # The first item (a generator's first value), or any one when not known.
            return args[0].items[0] if args[0].items else \
                self.expressions.element_of(args[0])
        if name == "iter" and len(args) == 1:
            return args[0]
        if name == "sum" and args and args[0].kind == "list":
            # ``sum(x * w for x, w in zip(xs, ws))``: a new tensor when its items are.
            item = self.expressions.element_of(args[0])
            if is_tensorish(item):
                total = self.state.run.autograd.fresh(item.requires_grad)
                total.history = (item,)
                return total
        if name in SMALL_BUILTINS:
            if name == "range":
                return self.small_range(args)
            if name == "len" and len(args) == 1 and args[0].kind == "list" and \
                    args[0].items is not None and args[0].name != MAPPING and \
                    args[0].view != "multi":
                return constant(len(args[0].items))
            return constant(UNKNOWN_INT) if not any(is_tensorish(a) for a in args) \
                else unknown()
        if name in ("list", "tuple") and args and args[0].kind == "list":
            return Value("list", items=None if args[0].items is None else list(args[0].items),
                         view=args[0].view, storages=args[0].storages)
        if name == "dict" and len(args) == 1 and not kwargs:
            pair = self.expressions.element_of(args[0]) if args[0].kind == "list" else None
            if pair is not None and pair.kind == "list" and pair.items is not None and \
                    len(pair.items) == 2:
                # ``dict(model.named_parameters())``: a mapping of unknown keys, each item
                # like the pairs' second half.
                return Value("list", name=MAPPING, element=pair)
        if name in ("setattr", "getattr") and len(args) >= 2:
            return self.dynamic_attribute(name, args, frame)
        written = spread(call.args)
        if name == "isinstance" and len(written) == 2 and args:
            decided = self.instance_of(args[0], written[1], frame)
            return constant(UNKNOWN_INT if decided is None else decided)
        if name in ("isinstance", "hasattr", "callable"):
            return constant(UNKNOWN_INT)
        if name == "zip":
            known = [len(a.items) for a in args if a.kind == "list" and a.items is not None]
            if known:
                # Zipped with a list of known items: as many tuples, each item in its own.
                return Value("list", items=[
                    Value("list", items=[a.items[i] if a.kind == "list" and
                                         a.items is not None else self.row_of(a, call, n)
                                         for n, a in enumerate(args)])
                    for i in range(min(known))])
            return Value("list", element=Value(
                "list", items=[self.row_of(a, call, n) for n, a in enumerate(args)]))
        if name == "enumerate" and args and args[0].kind == "list" and \
                args[0].items is not None and args[0].view != "multi":
            return Value("list", items=[Value("list", items=[constant(i), item])
                                        for i, item in enumerate(args[0].items)])
        if name == "enumerate" and args:
            return Value("list", element=Value(
                "list", items=[constant(UNKNOWN_INT), self.expressions.element_of(args[0])]))
        return self.torch_api.call_torch(name, call, frame, args, kwargs)

    def instance_of(self, value: Value, classes: ast.expr, frame: Frame) -> bool | None:
        """``isinstance(value, classes)`` when the value's class is known: a torch layer
        against torch.nn classes, a tensor against ``torch.Tensor``."""
        parts = classes.elts if isinstance(classes, ast.Tuple) else [classes]
        names = [frame.program.qualify(part, self.state.run.reads) for part in parts]
        if any(name is None for name in names):
            return None
        spec = value.spec
        own: tuple[str, ...] | None = None
        if value.kind == "module" and isinstance(spec, NnModule):
            own = (spec.facts.name.split("#")[0], *spec.facts.bases)
        elif value.kind == "module" and isinstance(spec, Sequential):
            own = ("torch.nn.Sequential", "torch.nn.Module")
        elif value.kind == "tensor" and not value.maybe_list:
            own = ("torch.Tensor",)
        elif value.kind == "list" and value.items is not None:
            own = ("tuple", "list")
        if own is None:
            return None
        if any(name in own for name in names):
            return True
        # Another class of torch.nn (or torch.Tensor): known not to be one.
        if all(name is not None and (name == "torch.Tensor" or (
                name.startswith("torch.nn.") and name.count(".") == 2 and
                name[9:10].isupper())) for name in names):
            return False
        return None

    def row_of(self, value: Value, call: ast.Call, position: int) -> Value:
        """An element of ``zip``'s argument at ``position``; a row of a tensor knows
        where it was iterated (its fix makes the rows single views)."""
        run = self.state.run
        element = self.expressions.element_of(value)
        node = call.args[position] if position < len(call.args) else None
        if element.row is True and run.place is not None and node is not None and \
                not any(isinstance(arg, ast.Starred) for arg in call.args):
            element.row = SelectRows(node, run.place)
        return element

    def small_range(self, args: list[Value]) -> Value:
        """``range(n)`` of a known ``n`` up to 2: its numbers, so that a loop over it runs
        once for each (``for i in range(self.nl): x[i] = conv(x[i])`` replaces each item
        of ``x``, not any one of them); otherwise a number not known."""
        if len(args) == 1 and args[0].kind == "const" and type(args[0].const) is int and \
                0 <= args[0].const <= MAX_RANGE:
            self.state.observe(args[0])
            return Value("list", items=[constant(n) for n in range(args[0].const)])
        return constant(UNKNOWN_INT)

    def dynamic_attribute(self, name: str, args: list[Value], frame: Frame) -> Value:
        """``setattr(m, 'conv%d' % i, block)`` and ``getattr(m, 'conv%d' % i)``: a name
        not known stands for every attribute set with a name not known (``ANY_ATTR``)."""
        run = self.state.run
        owner, key = args[0], args[1]
        self.state.observe(key)
        text = key.const if key.kind == "const" and isinstance(key.const, str) else None
        if name == "getattr":
            if text is not None:
                return self.expressions.attribute(owner, text)
            found = (owner.attrs or {}).get(ANY_ATTR)
            if found is None and isinstance(owner.spec, NnModule) and \
                    owner.spec.facts.has_parameters and owner.params is not None:
                # A torch layer's attribute by a computed name: one of its parameters
                # (``getattr(lstm, f"weight_hh_l{i}")``).
                found = Value("tensor", (owner.params,), not owner.params.grad_off)
            return found if found is not None else (args[2] if len(args) > 2 else unknown())
        if owner.attrs is not None and len(args) > 2:
            attr = text if text is not None else ANY_ATTR
            value = args[2]
            before = owner.attrs.get(attr)
            if run.attr_journal is not None:
                run.attr_journal.append((owner.attrs, attr, before))
            owner.attrs[attr] = value if before is None or text is not None else \
                self.state.join(before, value)
        return constant(None)

    def call_method(self, owner: Value, name: str, call: ast.Call, frame: Frame) -> Value:
        run = self.state.run
        piece = frame.piece
        if owner.kind == "module":
            return self.call_module_method(owner, name, call, frame)
        if owner.kind == "optimizer":
            if name == "step":
                self.torch_api.optimizer_step(owner, piece, call)
            return constant(None)
        if owner.kind == "list" and owner.name == MAPPING and \
                name not in ("items", "values", "keys", "get"):
            owner.attrs = None  # update, pop, setdefault...: its items are no longer known
        if owner.kind == "list" and owner.name == MAPPING and owner.attrs is not None and \
                name in ("items", "values", "keys"):
            known = owner.attrs  # each item, in order
            return Value("list", items=[
                {"items": Value("list", items=[constant(key), value]), "values": value,
                 "keys": constant(key)}[name] for key, value in known.items()])
        if owner.kind == "list" and owner.name == MAPPING and owner.element is not None and \
                name in ("items", "values", "keys"):
            pair = owner.element
            assert pair.items is not None
            return Value("list", element={"items": pair, "values": pair.items[1],
                                          "keys": pair.items[0]}[name])
        if owner.kind == "list":
            args = self.arguments(call, frame)[0]
            if owner.items is not None:
                if name == "append" and args:
                    owner.items.append(args[0])
                elif name == "extend" and args:
                    extra = args[0]
                    if extra.kind == "list" and extra.items is not None:
                        owner.items.extend(extra.items)
                    else:
                        owner.items = None
                elif name == "insert" and len(args) > 1:
                    owner.items.append(args[1])
            return constant(None)
        if owner.kind == "function":
            return unknown()
        args, kwargs = self.arguments(call, frame)
        if owner.kind == "const" and isinstance(owner.const, str) and \
                owner.const != UNKNOWN_STR and name in ("split", "rsplit"):
            return self._split(owner, name, args, kwargs)
        if not is_tensorish(owner):
            return unknown()
        label = f"{text_of(piece, call.func)}()"
        if name == "backward":
            run.autograd.backward(piece, call, retain=self.state.retains(kwargs),
                                  place=run.place, loss=owner)
            return constant(None)
        if name == "requires_grad_":
            flag = args[0] if args else kwargs.get("requires_grad")
            self.torch_api.set_requires_grad(owner, flag)
            return owner
        key = name
        if f"{name}#dim" in self.facts.methods and by_dim(args, kwargs):
            key = name = f"{name}#dim"
        elif f"{name}#scalar" in self.facts.methods and args and args[0].kind == "const":
            # ``x.pow_(2)``: no tensor operand, and what autograd keeps differs (pow_
            # keeps its own copy of the input; with a tensor exponent, its result). The
            # method keeps its name: the fix renames it.
            key = f"{name}#scalar"
        effect = self.facts.methods.get(key) or self.facts.inplace_method(name)
        if effect is None:
            return self.torch_api.untraced_method(owner, name, args)
        inplace = self.torch_api.flag(effect.inplace_flag, call, [owner, *args], kwargs)
        effect = effect.with_inplace(inplace is True)
        operands = [owner] + [a for a in args if is_tensorish(a)]
        # A method looked up by ``getattr`` has no receiver in the text to rewrite.
        plan = self.plans.method_plan(call, name, owner, frame) \
            if effect.writes and isinstance(call.func, ast.Attribute) else None
        with self.state.fixing(plan):
            return run.autograd.apply(effect, piece, call, label, operands,
                                      place=run.place)

    def _split(self, text: Value, name: str, args: list[Value],
               kwargs: dict[str, Value]) -> Value:
        """``"model_17_cv3_act".split("_")``: the parts, known (a layer's path spelt in
        a string, walked through ``_modules``)."""
        given = [*args, *kwargs.values()]
        if len(given) > 1 or any(a.kind != "const" or not isinstance(a.const, (str, type(None)))
                                 or a.const == UNKNOWN_STR for a in given):
            return Value("list")
        self.state.observe(text)
        separator = given[0].const if given else None
        assert isinstance(text.const, str) and isinstance(separator, (str, type(None)))
        if separator == "":
            return Value("list")  # Python raises ValueError
        parts = text.const.split(separator) if name == "split" else \
            text.const.rsplit(separator)
        return Value("list", items=[constant(part) for part in parts])

    def call_module_method(self, owner: Value, name: str, call: ast.Call,
                           frame: Frame, own: bool = True) -> Value:
        args, kwargs = self.arguments(call, frame)
        if own and isinstance(owner.spec, UserModule):
            # The class's own method first: ``Trainer().train(...)`` is not Module.train.
            info = class_of(self.state, owner.spec)
            found = None if info is None else \
                self.state.program_at(info.path).method(info, name, self.state.run.reads)
            if found is not None:
                owner_info, method = found
                site = (frame.piece, call)
                if "property" in decorator_names(method.node):
                    # ``self.proj(x)`` where ``proj`` is a property: call what it returns.
                    held = self.call_function(method, [], {}, owner, site)
                    if held.kind == "module":
                        return self.call_module(held, args, frame.piece, call,
                                                text_of(frame.piece, call.func))
                    if held.kind == "function" and isinstance(held.const, FunctionInfo):
                        return self.call_function(held.const, args, kwargs, None, site)
                    return unknown()
                bound = None if name in owner_info.staticmethods else owner
                return self.call_function(method, args, kwargs, bound, site)
        if name == "parameters":
            storages = tuple(parameter_storages(owner))
            parameter = Value("tensor", storages, True)
            return Value("list", updates=[owner], element=parameter)
        if name in ("modules", "named_modules"):
            inside = submodules(owner)
            if name == "named_modules":
                inside = [Value("list", items=[constant(UNKNOWN_STR), m]) for m in inside]
            return Value("list", items=inside)
        if name == "named_parameters":
            # (name, parameter) pairs: an update loop over them writes the parameters.
            storages = tuple(parameter_storages(owner))
            pair = Value("list", items=[constant(UNKNOWN_STR),
                                        Value("tensor", storages, True)])
            return Value("list", updates=[owner], element=pair)
        if name in ("eval", "train") and owner.attrs is not None:
            self.state.observe(*args[:1])
            mode = name == "train" and not (args and args[0].kind == "const" and
                                            args[0].const is False)
            for module in submodules(owner):  # as torch sets every child's mode
                if module.attrs is not None and isinstance(module.spec, UserModule):
                    module.attrs["training"] = constant(mode)
            return owner
        if name in MODULE_RETURNS_SELF:
            return owner
        if isinstance(owner.spec, Sequential) and name in ("add_module", "append"):
            # A Sequential grown after it was built: it runs what is added, in order.
            added = args[1] if name == "add_module" and len(args) > 1 else \
                args[0] if name == "append" and args else None
            if added is not None and added.kind == "module":
                owner.spec.items.append(added)
            elif added is not None:
                owner.spec = UnknownModule()  # something it cannot tell runs in there
            return owner if name == "append" else constant(None)
        if name in ("register_buffer", "register_parameter", "add_module") and \
                len(args) > 1 and owner.attrs is not None:
            self.state.observe(args[0])
            key = args[0].const if args[0].kind == "const" else None
            if isinstance(key, str):
                owner.attrs[key] = args[1]
            return constant(None)
        if name == "forward":
            return self.call_module(owner, args, frame.piece, call,
                                    text_of(frame.piece, call.func))
        if isinstance(owner.spec, FunctionContext):
            if name == "save_for_backward":
                owner.spec.saved += [(frame.piece, call, value) for value in args]
            elif name == "mark_dirty":
                owner.spec.dirty += args
            return constant(None)
        if name in ("register_full_backward_hook", "register_full_backward_pre_hook"):
            if isinstance(owner.spec, NnModule):
                owner.spec.hooks = owner.spec.hooks + (BACKWARD_HOOK,)
            elif isinstance(owner.spec, UserModule) and owner.attrs is not None:
                owner.attrs[BACKWARD_HOOK] = constant(True)
            return unknown()
        if name == "register_forward_hook" and args and isinstance(owner.spec, NnModule):
            # A hook it cannot follow (a lambda, a bound method) may replace the output,
            # unless it is a method that returns nothing (one that keeps the output).
            hook = args[0].const if isinstance(args[0].const, FunctionInfo) else None
            callback = self.bound_method(call.args[0], frame) if call.args else None
            if hook is not None or callback is None or returns_value(callback):
                owner.spec.hooks = owner.spec.hooks + (hook,)
        return unknown()

    def bound_method(self, expr: ast.expr, frame: Frame) -> FunctionInfo | None:
        """The method ``self.store`` names, on an instance of a project class."""
        if not isinstance(expr, ast.Attribute):
            return None
        owner = self.expressions.eval(expr.value, frame)
        if owner.kind != "module" or not isinstance(owner.spec, UserModule) or \
                (owner.attrs is not None and expr.attr in owner.attrs):
            return None
        info = class_of(self.state, owner.spec)
        found = None if info is None else \
            self.state.program_at(info.path).method(info, expr.attr, self.state.run.reads)
        return None if found is None else found[1]

    def _hooked(self, module: Value, args: list[Value], output: Value, piece: Piece,
                node: ast.AST) -> Value:
        """A module's output after its forward hooks ran on it."""
        assert isinstance(module.spec, NnModule)
        for hook in module.spec.hooks:
            if hook is BACKWARD_HOOK:
                continue
            if hook is None:
                output = unknown()
                continue
            # ``output.requires_grad_(True)`` in a hook (transformers'
            # enable_input_require_grads) makes the output a leaf that requires grad.
            assert isinstance(hook, FunctionInfo)
            given = self.call_function(hook, [module, Value("list", items=list(args)),
                                              output], {}, None, (piece, node))
            if given.kind != "const":
                output = given  # a hook that returns a value replaces the output
        return output

    def call_module(self, module: Value, args: list[Value], piece: Piece, node: ast.AST,
                    label: str, argument: ast.expr | None = None,
                    hooked: bool = False, kwargs: dict[str, Value] | None = None) -> Value:
        """Call a module on ``args``; ``argument`` is the caller's expression for the
        input, when the module receives it directly (to fix a write into it)."""
        run = self.state.run
        spec = module.spec
        if not hooked and run.autograd.grad_enabled and (
                (isinstance(spec, NnModule) and BACKWARD_HOOK in spec.hooks) or
                (isinstance(spec, UserModule) and BACKWARD_HOOK in (module.attrs or {}))):
            # A full backward hook runs the module between two BackwardHookFunctions:
            # what it is given (when any of it requires grad) and what it returns are
            # views no in-place op may write.
            if any(is_tensorish(a) and a.requires_grad is not False for a in args):
                args = [behind_backward_hook(a) for a in args]
            return behind_backward_hook(self.call_module(module, args, piece, node, label,
                                                         argument, hooked=True, kwargs=kwargs))
        if isinstance(spec, NnModule):
            facts = spec.facts
            if spec.identity:
                return self._hooked(module, args, args[0] if args else unknown(), piece, node)
            effect = facts.effect(spec.inplace is True)
            described = label
            if spec.inplace is True and "(" not in label:
                described = f"{label} ({facts.name.rsplit('.', 1)[-1]}, inplace=True)"
            if facts.writes_parameters and module.params is not None:
                # Its call edits its own weight under no_grad (Embedding's max_norm): a
                # weight edit that a backward through earlier uses of it trips over. No
                # step to move: the call is the forward itself.
                grad = run.autograd.grad_enabled
                run.autograd.grad_enabled = False
                try:
                    run.autograd.write(Value("tensor", (module.params,), True), piece, node,
                                       label)
                finally:
                    run.autograd.grad_enabled = grad
            # A loss module (no parameters) is given its target second, as the
            # function is: ``CrossEntropyLoss()(logits, labels)`` saves the labels.
            operands = args[:1] if facts.has_parameters else args[:2]
            if operands and facts.index_input and is_tensorish(operands[0]):
                # Indices (an Embedding's input) never require grad, whatever else is
                # unknown about them.
                given = operands[0]
                operands[0] = Value(given.kind, given.storages, False, view=given.view,
                                    history=given.history)
            if operands and facts.has_parameters and module.params is not None:
                # Frozen (``weight.requires_grad_(False)``): its output needs no grad for it.
                operands.append(Value("tensor", (module.params,), not module.params.grad_off))
            spec.calls.add(node)
            plan: Plan | None = None
            if spec.inplace is True and argument is not None and is_dotted(argument) and \
                    run.place is not None:
                plan = CloneIfUsedLater(argument, run.place, self.statements.later_statements())
            with self.state.fixing(plan):
                output = run.autograd.apply(effect, piece, node, described, operands,
                                            layer=spec if spec.inplace is True else None)
            if facts.outputs is not None:
                output = run.autograd.tuple_around(output, facts.outputs)
            return self._hooked(module, args, output, piece, node)
        if isinstance(spec, Sequential):
            value = args[0] if args else unknown()
            outer = run.autograd.via
            run.autograd.via = outer + ((piece, node),)
            try:
                for index, item in enumerate(spec.items):
                    item_piece, item_node = piece, node
                    if isinstance(item.spec, (NnModule, Sequential)):
                        item_piece, item_node = item.spec.piece, item.spec.node
                    item_label = text_of(item_piece, item_node) if item_node is not node \
                        else label
                    value = self.call_module(item, [value], item_piece, item_node, item_label,
                                             argument if index == 0 else None)
            finally:
                run.autograd.via = outer
            return value
        if isinstance(spec, UserModule):
            info = class_of(self.state, spec)
            found = None
            if info is not None:
                program = self.state.program_at(info.path)
                found = program.method(info, "forward", run.reads) or \
                    program.method(info, "__call__", run.reads)
            if found is not None:
                # Its keywords too: ``policy(obs, reparameterize=False)`` picks a branch.
                return self.call_function(found[1], args, kwargs or {}, module, (piece, node))
            if info is not None and is_sequential(self.state, info) and module.attrs is not None:
                # ``class ConvBlock(nn.Sequential)`` filled by ``add_module``: its layers
                # run in the order they were added.
                layers = [v for v in module.attrs.values() if v.kind == "module"]
                chain = Sequential(layers, piece, node)
                return self.call_module(Value("module", spec=chain), args, piece, node,
                                        label, argument)
        return unknown()


def submodules(module: Value, depth: int = 0) -> list[Value]:
    """``module.modules()``: the module and every module inside it, in order."""
    found = [module]
    if depth > 6:
        return found
    children: list[Value] = []
    if isinstance(module.spec, Sequential):
        children.extend(module.spec.items)
    for value in (module.attrs or {}).values():
        if value.kind == "module":
            children.append(value)
        elif value.kind == "list" and value.items:
            children.extend(item for item in value.items if item.kind == "module")
    for child in children:
        found.extend(submodules(child, depth + 1))
    return list({id(m): m for m in found}.values())


def spread(arguments: list[ast.expr]) -> list[ast.expr]:
    """A call's arguments as written, a list or tuple unpacked in place
    (``isinstance(*[m, nn.ReLU])`` names its class as ``isinstance(m, nn.ReLU)`` does)."""
    found: list[ast.expr] = []
    for argument in arguments:
        if isinstance(argument, ast.Starred) and isinstance(argument.value,
                                                            (ast.List, ast.Tuple)):
            found += spread(argument.value.elts)
        else:
            found.append(argument)
    return found
