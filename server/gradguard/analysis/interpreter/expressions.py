"""Expressions: names, attributes, subscripts, operators, comparisons, comprehensions,
and what iterating a value gives."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from gradguard.analysis.findings import ExpressionSkipped
from gradguard.analysis.graph_guards import GRAPH, polarity, returned_expression
from gradguard.analysis.interpreter.classes import has_layer_parameters
from gradguard.analysis.interpreter.state import (
    MAPPING,
    MAX_UNROLL,
    UNKNOWN,
    UNKNOWN_INT,
    UNKNOWN_STR,
    Frame,
    State,
    is_text,
    text_of,
)
from gradguard.analysis.program import FunctionInfo, FunctionNode
from gradguard.analysis.syntax import Skipped
from gradguard.analysis.torch_version import TorchVersion
from gradguard.analysis.values import (
    NnModule,
    Save,
    Sequential,
    Storage,
    UserModule,
    Value,
    constant,
    is_tensorish,
    unknown,
)

BINARY_SYMBOLS = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Pow: "**",
    ast.MatMult: "@",
    ast.Mod: "%",
}
REFLECTED = {"+": "radd", "*": "rmul", "-": "rsub", "/": "rtruediv"}
_NAMED_CONSTANTS = {"True": True, "False": False, "None": None}


# The most entries a dict literal may have to be looked into (timm's default_cfgs hold
# hundreds of configurations, each a call: evaluating them costs more than they tell).
MAX_TABLE = 16


class Expressions:
    """Evaluates expressions. A call, and a name bound inside an expression (``:=``, a
    comprehension's target), are the parts above this one: given by :meth:`connect`,
    once they exist."""

    # The call part's ``eval_call`` and the statement part's ``bind``.
    eval_call: Callable[[ast.Call, Frame], Value]
    bind: Callable[[ast.expr, Value, Frame], None]

    def __init__(self, state: State) -> None:
        self.state = state
        self.facts = state.facts

    def connect(self, eval_call: Callable[[ast.Call, Frame], Value],
                bind: Callable[[ast.expr, Value, Frame], None]) -> None:
        self.eval_call = eval_call
        self.bind = bind

    def disconnect(self) -> None:
        """Drop the ways up, which close a cycle of references through the parts."""
        del self.eval_call, self.bind

    def eval(self, expr: ast.expr, frame: Frame) -> Value:
        # By exact node type: one dictionary lookup instead of a chain of isinstance.
        evaluate = _EVALUATE.get(type(expr))
        return unknown() if evaluate is None else evaluate(self, expr, frame)

    def eval_skipped(self, expr: Skipped, frame: Frame) -> Value:
        """Code nested too deeply to follow: an unknown value, and a note that says so."""
        run = self.state.run
        run.autograd.report(ExpressionSkipped(frame.piece, expr, via=run.autograd.via,
                                              depth=expr.depth))
        return unknown()

    def eval_constant(self, expr: ast.Constant, frame: Frame) -> Value:
        return constant(expr.value)

    def eval_formatted(self, expr: ast.JoinedStr, frame: Frame) -> Value:
        return constant(UNKNOWN_STR)

    def eval_comparison(self, expr: ast.Compare, frame: Frame) -> Value:
        run = self.state.run
        autograd = run.autograd
        outer, autograd.journal = autograd.journal, []
        try:
            values = self.comparands(expr, frame)
        finally:
            made, autograd.journal = autograd.journal, outer
        if made:
            made = self.drop_dead_saves(expr, made)
            if outer is not None:
                outer.extend(made)
        if any(is_tensorish(v) for v in values):
            return run.autograd.fresh(False)
        decided = self.compare(values, expr.ops)
        # Undecided, it is neither true nor false: ``same = a.data_ptr() == b.data_ptr()``
        # then ``if same:`` runs both arms.
        return constant(UNKNOWN_INT if decided is None else decided)

    def drop_dead_saves(self, expr: ast.Compare,
                        made: list[tuple[Storage, Save]]) -> list[tuple[Storage, Save]]:
        """``x[x.abs() < eps] = eps``: a comparison's result needs no grad, so what the
        ops of its operands saved is never used by a backward (unless a name keeps one
        of their results, ``(y := x.abs()) < eps``). Returns the saves kept."""
        nodes = list(ast.walk(expr))
        if any(isinstance(node, ast.NamedExpr) for node in nodes):
            return made
        inside = {id(node) for node in nodes}
        kept = []
        for storage, save in made:
            if id(save.node) in inside:
                self.state.run.autograd.take_back(storage, save)
            else:
                kept.append((storage, save))
        return kept

    def eval_boolean(self, expr: ast.BoolOp, frame: Frame) -> Value:
        result = self.eval(expr.values[0], frame)
        for value in expr.values[1:]:
            result = self.state.join(result, self.eval(value, frame))
        return result

    def eval_sequence(self, expr: ast.List | ast.Tuple, frame: Frame) -> Value:
        items: list[Value] = []
        for element in expr.elts:
            if isinstance(element, ast.Starred):
                inner = self.eval(element.value, frame)
                if inner.kind != "list" or inner.items is None:
                    return Value("list")
                items.extend(inner.items)
            else:
                items.append(self.eval(element, frame))
        return Value("list", items=items)

    def eval_dict(self, expr: ast.Dict, frame: Frame) -> Value:
        """``{"relu": nn.ReLU, "mish": Mish()}``: with string keys, a mapping whose items
        are known by key (a layer picked from a table by a constructor's argument)."""
        if len(expr.keys) > MAX_TABLE:
            return unknown()  # a registry of configurations, not a table of layers
        values = [self.eval(value, frame) for value in expr.values]
        keys = [None if key is None else self.eval(key, frame) for key in expr.keys]
        if not values or not all(key is not None and key.kind == "const" and
                                 isinstance(key.const, str) and key.const != UNKNOWN_STR
                                 for key in keys):
            return unknown()
        return self.mapping({key.const: value for key, value in zip(keys, values, strict=True)
                             if key is not None and isinstance(key.const, str)})

    def mapping(self, items: dict[str, Value]) -> Value:
        """A dict whose string keys are known: each item by its key, and any item (the
        join of them all) for a key not known."""
        values = list(items.values())
        joined = values[0]
        for value in values[1:]:
            joined = self.state.join(joined, value)
        pair = Value("list", items=[constant(UNKNOWN_STR), joined])
        return Value("list", name=MAPPING, element=pair, attrs=items)

    def children_by_name(self, module: Value) -> Value:
        """``module._modules``: its child modules by name, as torch keeps them (a
        Sequential's by position, ``"0"``, ``"1"``...), for a layer found by a name
        that a string spells (Grad-CAM tools' ``model._modules["17"]``)."""
        children = {str(index): item for index, item in enumerate(module.spec.items)} \
            if isinstance(module.spec, Sequential) else \
            {name: value for name, value in (module.attrs or {}).items()
             if value.kind == "module"}
        return self.mapping(children) if children else unknown()

    def eval_if_expression(self, expr: ast.IfExp, frame: Frame) -> Value:
        test = self.truth(expr.test, frame)
        if test is True:
            return self.eval(expr.body, frame)
        if test is False:
            return self.eval(expr.orelse, frame)
        return self.state.join(self.eval(expr.body, frame), self.eval(expr.orelse, frame))

    def eval_walrus(self, expr: ast.NamedExpr, frame: Frame) -> Value:
        value = self.eval(expr.value, frame)
        self.bind(expr.target, value, frame)
        return value

    def eval_comprehension(self, expr: ast.ListComp | ast.GeneratorExp,
                           frame: Frame) -> Value:
        """A list of unknown length whose elements are all like one evaluation of ``elt``;
        over a list of known items, the list of ``elt`` evaluated for each item, so that
        what each one saves or writes is seen (``[net(x) for net in self.nets]``)."""
        inner = Frame(dict(frame.env), frame.piece, frame.program, frame.self_value)
        if len(expr.generators) == 1 and not expr.generators[0].ifs:
            clause = expr.generators[0]
            iterable = self.eval(clause.iter, inner)
            if iterable.kind == "list" and iterable.items is not None and \
                    iterable.view != "multi" and len(iterable.items) <= MAX_UNROLL:
                items = []
                for item in list(iterable.items):
                    self.bind(clause.target, item, inner)
                    items.append(self.eval(expr.elt, inner))
                return Value("list", items=items)
            self.bind(clause.target, self.element_of(iterable), inner)
            return Value("list", element=self.eval(expr.elt, inner))
        for clause in expr.generators:
            iterable = self.eval(clause.iter, inner)
            self.bind(clause.target, self.element_of(iterable), inner)
        return Value("list", element=self.eval(expr.elt, inner))

    def defined(self, node: FunctionNode, frame: Frame) -> Value:
        """The function a ``def`` (or a ``lambda``) inside another function or a script
        makes: its defaults evaluated now; inside a function, a closure over ``frame``."""
        outer = {name: value.const for name, value in frame.env.items()
                 if value.kind == "function" and isinstance(value.const, FunctionInfo)}
        spec = node.args
        params = spec.posonlyargs + spec.args
        named = list(zip(params[len(params) - len(spec.defaults):], spec.defaults,
                         strict=True)) + \
            [(arg, default) for arg, default in zip(spec.kwonlyargs, spec.kw_defaults,
                                                    strict=True) if default is not None]
        defaults: dict[str, object] = {arg.arg: self.eval(default, frame)
                                       for arg, default in named}
        script = self.state.scripts.get(frame.program.path) is frame
        function = FunctionInfo(node, frame.piece, frame.program.path, nested=True,
                                outer=outer, scope=None if script else frame,
                                defaults=defaults)
        outer[node.name] = function
        return Value("function", const=function)

    def eval_lambda(self, expr: ast.Lambda, frame: Frame) -> Value:
        return self.defined(lambda_function(expr), frame)

    def eval_name(self, expr: ast.Name, frame: Frame) -> Value:
        name = expr.id
        found = frame.env.get(name)
        if found is not None:
            return found
        if name in _NAMED_CONSTANTS:
            return constant(_NAMED_CONSTANTS[name])
        program = frame.program
        reads = self.state.run.reads
        definition = program.class_info(name, reads) or program.function(name, reads)
        if definition is not None:
            return Value("function", const=definition)
        return Value("function", name=program.alias(name, reads) or name)

    def eval_attribute(self, expr: ast.Attribute, frame: Frame) -> Value:
        return self.attribute_of(self.eval(expr.value, frame), expr, frame)

    def attribute_of(self, owner: Value, expr: ast.Attribute, frame: Frame) -> Value:
        return self.attribute(owner, expr.attr)

    def attribute(self, owner: Value, attr: str) -> Value:
        """``owner.attr`` (also ``getattr(owner, "attr")``)."""
        if owner.kind == "function":
            if owner.const is not None:
                return unknown()
            if f"{owner.name}.{attr}" == "torch.__version__":
                # Known: the torch the facts come from (a vendor build's branch is not).
                return constant(TorchVersion(self.state.facts.torch_version))
            return Value("function", name=f"{owner.name}.{attr}")
        if owner.kind == "module":
            if owner.attrs is not None and attr in owner.attrs:
                return owner.attrs[attr]
            if attr == "training":
                return constant(True)
            if attr == "_modules":
                return self.children_by_name(owner)
            spec = owner.spec
            # ``weight``, ``bias``, and an RNN's ``weight_hh_l0``, ``bias_ih_l1``...
            if attr.startswith(("weight", "bias")) and owner.params is not None and (
                    isinstance(spec, NnModule) or
                    (isinstance(spec, UserModule) and has_layer_parameters(self.state, spec))):
                return Value("tensor", (owner.params,), not owner.params.grad_off)
            return unknown()
        if is_tensorish(owner):
            if attr == "data":
                # The same storage under a version counter of its own: a write through it
                # goes unseen by autograd, and changes what backward reads.
                return Value(owner.kind, owner.storages, False, view="data")
            if attr in ("T", "mT", "H", "mH", "real", "imag"):
                return Value("tensor", owner.storages, owner.requires_grad, view="view",
                             history=(owner,))
            if attr == "requires_grad" and owner.requires_grad is not None:
                return constant(bool(owner.requires_grad))
            if attr in ("shape", "ndim", "dtype", "device", "is_leaf", "requires_grad"):
                return constant(UNKNOWN_INT)
            if attr == "grad":
                return self.state.run.autograd.fresh(False)
        if owner.kind == "list" and owner.attrs and attr in owner.attrs:
            return owner.attrs[attr]  # torch.return_types: ``x.topk(k).indices``
        return unknown()

    def list_slice(self, owner: Value, part: ast.Slice, frame: Frame) -> Value:
        """``items[2:]``: a new list of the same items (known where the bounds are)."""
        bounds = [None if b is None else self.eval(b, frame)
                  for b in (part.lower, part.upper, part.step)]
        known = [None if b is None else b.const if b.kind == "const" and
                 isinstance(b.const, int) and b.const not in UNKNOWN else False
                 for b in bounds]
        if owner.items is not None and all(k is not False for k in known) and known[2] != 0:
            self.state.observe(*(b for b in bounds if b is not None))
            return Value("list", items=owner.items[slice(*known)])
        return Value("list", element=self.element_of(owner))

    def eval_subscript(self, expr: ast.Subscript, frame: Frame) -> Value:
        owner = self.eval(expr.value, frame)
        if owner.kind == "list":
            if owner.name == MAPPING and owner.element is not None and \
                    owner.element.items is not None:
                key = self.eval(expr.slice, frame)
                if owner.attrs is not None and key.kind == "const" and \
                        isinstance(key.const, str) and key.const in owner.attrs:
                    self.state.observe(key)
                    return owner.attrs[key.const]
                return self.distinct(owner.element.items[1])
            if owner.view == "multi":
                return self.element_of(owner)
            if isinstance(expr.slice, ast.Slice):
                return self.list_slice(owner, expr.slice, frame)
            index = self.single_index(expr, frame)
            if owner.items is not None and isinstance(index, int) and \
                    -len(owner.items) <= index < len(owner.items):
                return owner.items[index]
            return self.element_of(owner)
        if owner.kind == "module" and isinstance(owner.spec, Sequential):
            # ``self.model[-1]``: a layer of the Sequential.
            items = owner.spec.items
            index = self.single_index(expr, frame)
            if isinstance(index, int) and not isinstance(index, bool) and \
                    -len(items) <= index < len(items):
                return items[index]
            return unknown()
        if not is_tensorish(owner):
            return unknown()
        if owner.kind == "unknown" and self.reads_mapping(expr, frame):
            return unknown()  # an item of a dict: another object, not a view
        basic = all(self.is_basic_index(part, frame) for part in index_parts(expr))
        effect = self.facts.operators.get("getitem_basic" if basic else "getitem_advanced")
        if effect is None:
            return unknown()
        result = self.state.run.autograd.apply(effect, frame.piece, expr,
                                               text_of(frame.piece, expr), [owner])
        if owner.kind == "unknown":
            # Not known to be a tensor: perhaps a list, whose items differ per iteration,
            # or a tuple of outputs, whose item may be a list itself (``encodings[1]``).
            item = self.distinct(result)
            if item.kind == "tensor" and is_item_index(expr):
                item.maybe_list = True
            return item
        return result

    def single_index(self, expr: ast.Subscript, frame: Frame) -> object:
        if isinstance(expr.slice, (ast.Tuple, ast.Slice)):
            return None
        value = self.eval(expr.slice, frame)
        self.state.observe(value)
        return value.const if value.kind == "const" else None

    def eval_binary(self, expr: ast.BinOp, frame: Frame) -> Value:
        left = self.eval(expr.left, frame)
        right = self.eval(expr.right, frame)
        if left.kind == "list" and right.kind == "list":
            if left.items is None or right.items is None:
                return Value("list")
            return Value("list", items=left.items + right.items)
        symbol = BINARY_SYMBOLS.get(type(expr.op), "")
        if isinstance(expr.op, ast.Mult) and left.kind == "list" and left.items is not None \
                and right.kind == "const" and type(right.const) is int and \
                right.const not in UNKNOWN and len(left.items) * right.const <= MAX_UNROLL:
            # ``[hidden_dim] * (num_layers - 1)``: a list of known length.
            self.state.observe(right)
            return Value("list", items=left.items * max(right.const, 0))
        if left.kind != "tensor" and right.kind != "tensor":
            if is_text(left) or is_text(right):
                return constant(UNKNOWN_STR)  # 'o_%d' % k, prefix + name
            if left.kind == right.kind == "const":
                known = _arithmetic(left.const, right.const, expr.op)
                if known is not None:
                    self.state.observe(left, right)  # a summary holds for these numbers
                    return constant(known)
                return constant(UNKNOWN_INT)
            return unknown()
        key = symbol
        inputs = [left, right]
        if not is_tensorish(left):
            # A Python number on the left: the reflected method of the tensor on the right.
            key, inputs = REFLECTED.get(symbol, symbol) + "#scalar", [right]
        elif right.kind == "const":
            key, inputs = f"{symbol}#scalar", [left]
        effect = self.facts.operators.get(key) or self.facts.operators.get(symbol)
        if effect is None:
            return unknown()
        return self.state.run.autograd.apply(effect, frame.piece, expr, symbol, inputs)

    def eval_unary(self, expr: ast.UnaryOp, frame: Frame) -> Value:
        if isinstance(expr.op, ast.Not):
            truth = self.truth(expr.operand, frame)  # evaluates the operand, once
            return constant(None if truth is None else not truth)
        operand = self.eval(expr.operand, frame)
        if isinstance(expr.op, ast.USub) and is_tensorish(operand):
            effect = self.facts.operators.get("unary-")
            if effect is not None:
                return self.state.run.autograd.apply(effect, frame.piece, expr, "-", [operand])
        if operand.kind == "const" and isinstance(operand.const, (int, float)):
            self.state.observe(operand)
            return constant(-operand.const if isinstance(expr.op, ast.USub) else operand.const)
        return operand if is_tensorish(operand) else unknown()

    def truth(self, expr: ast.expr, frame: Frame) -> bool | None:
        """What a condition evaluates to, when it is known without running the code."""
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
            inner = self.truth(expr.operand, frame)
            return None if inner is None else not inner
        if isinstance(expr, ast.BoolOp):
            values = [self.truth(value, frame) for value in expr.values]
            if isinstance(expr.op, ast.And):
                if any(value is False for value in values):
                    return False
                return True if all(value is True for value in values) else None
            if any(value is True for value in values):
                return True
            return False if all(value is False for value in values) else None
        if isinstance(expr, ast.Compare):
            # Each operand once: a comparison's truth and its value are one evaluation.
            return self.compare(self.comparands(expr, frame), expr.ops)
        value = self.eval(expr, frame)
        if value.kind == "const" and value.const not in UNKNOWN:
            self.state.observe(value)
            return bool(value.const)
        if value.kind == "module":
            return True
        if self.state.run.autograd.grad_enabled:
            # Not known: the branch a run that records a graph takes (no other run can
            # reach a backward), when the condition says which one that is.
            found = polarity(expr, lambda node: frame.program.qualify(node, self.state.run.reads),
                             lambda call: self.returned(call, frame))
            if found is not None:
                return found == GRAPH
        return None

    def returned(self, call: ast.Call, frame: Frame) -> ast.expr | None:
        """What the user function ``call`` calls returns, when that is one expression
        (a function named plainly: looking it up again evaluates nothing else)."""
        if not isinstance(call.func, ast.Name):
            return None
        called = self.eval(call.func, frame)
        if isinstance(called.const, FunctionInfo):
            return returned_expression(called.const.node)
        return None

    def comparands(self, expr: ast.Compare, frame: Frame) -> list[Value]:
        return [self.eval(expr.left, frame)] + [self.eval(c, frame) for c in expr.comparators]

    def compare(self, values: list[Value], operators: list[ast.cmpop]) -> bool | None:
        """What ``a op b op c ...`` is when known; the constants it decided on are looked
        at (``x in names`` decides nothing, so it looks at nothing)."""
        known = True
        for left, right, operator in zip(values, values[1:], operators, strict=False):
            holds = _compare_pair(left, right, operator)
            if holds is not None:
                self.state.observe(left, right)
            if holds is False:
                return False
            known = known and holds is True
        return True if known else None

    def distinct(self, value: Value) -> Value:
        """The element a later iteration takes from a list: another tensor than before.

        ``for i in range(n): f(preds[i])`` reads a different tensor each time round, so
        what the first iteration saved must not be charged to the second one's writes.
        Tensors carried from one iteration to the next keep their storage.
        """
        if not self.state.repeating or not is_tensorish(value):
            return value
        storages = tuple(self.state.run.autograd.new_storage(leaf=s.leaf, param=s.param)
                         for s in value.storages)
        return Value(value.kind, storages, value.requires_grad, view=value.view,
                     history=value.history, row=value.row)

    def element_of(self, value: Value) -> Value:
        """One element of an iterable whose elements are not individually known."""
        if value.kind == "list" and value.view == "multi":
            return Value("tensor", value.storages, value.requires_grad, view="multi",
                         history=(value,))
        if value.kind == "list" and value.name == MAPPING and value.element is not None and \
                value.element.items is not None:
            return value.element.items[0]  # iterating a mapping gives its keys
        if value.kind == "list" and value.element is not None:
            return self.distinct(value.element)
        if value.kind == "list" and value.items:
            result = value.items[0]
            for item in value.items[1:]:
                result = self.state.join(result, item)
            return self.distinct(result)
        if value.kind == "const" and value.const is UNKNOWN_INT:
            return constant(UNKNOWN_INT)
        if value.kind == "tensor" and not value.maybe_list:
            # Iterating a tensor unbinds it: views autograd forbids writing to.
            return Value("tensor", value.storages, value.requires_grad, view="multi",
                         history=(value,), row=True)
        return unknown()

    def reads_mapping(self, target: ast.Subscript, frame: Frame) -> bool:
        """``x['key']``: a string index reads a dict (a tensor is never indexed by one)."""
        if isinstance(target.slice, (ast.Tuple, ast.Slice)):
            return False
        return is_text(self.eval(target.slice, frame))

    def is_basic_index(self, part: ast.expr, frame: Frame) -> bool:
        if isinstance(part, ast.Slice):
            return True
        if isinstance(part, ast.Constant):
            return part.value is None or part.value is ... or isinstance(part.value, int)
        if isinstance(part, ast.UnaryOp) and isinstance(part.operand, ast.Constant) and \
                isinstance(part.operand.value, int):
            return True
        evaluated = self.eval(part, frame)
        return evaluated.kind == "const" and (
            isinstance(evaluated.const, int) or evaluated.const is UNKNOWN_INT
            or evaluated.const is ... or evaluated.const is None
        )


def _compare_pair(left: Value, right: Value, operator: ast.cmpop) -> bool | None:
    if left.kind != "const" or right.kind != "const":
        return None
    a, b = left.const, right.const
    if a in UNKNOWN or b in UNKNOWN:
        return None
    if isinstance(operator, ast.Is):
        return a is b
    if isinstance(operator, ast.IsNot):
        return a is not b
    if isinstance(operator, ast.Eq):
        return bool(a == b)
    if isinstance(operator, ast.NotEq):
        return bool(a != b)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        # ``i < self.num_layers - 1``: numbers known on both sides.
        if isinstance(operator, ast.Lt):
            return a < b
        if isinstance(operator, ast.LtE):
            return a <= b
        if isinstance(operator, ast.Gt):
            return a > b
        if isinstance(operator, ast.GtE):
            return a >= b
    return None


def _arithmetic(a: object, b: object, operator: ast.operator) -> int | None:
    """``num_layers - 1``: whole numbers known on both sides (not flags, not the
    stand-ins for unknown ones)."""
    if type(a) is not int or type(b) is not int or a in UNKNOWN or b in UNKNOWN:
        return None
    if isinstance(operator, ast.Add):
        return a + b
    if isinstance(operator, ast.Sub):
        return a - b
    if isinstance(operator, ast.Mult):
        return a * b
    if isinstance(operator, ast.FloorDiv) and b:
        return a // b
    return None


def lambda_function(expr: ast.Lambda) -> ast.FunctionDef:
    """A ``lambda`` as the ``def`` it stands for (made once a node: a summary knows a
    function by its node)."""
    made = getattr(expr, "_gradguard_def", None)
    if isinstance(made, ast.FunctionDef):
        return made
    body = ast.copy_location(ast.Return(expr.body), expr.body)
    made = ast.FunctionDef(name="<lambda>", args=expr.args, body=[body], decorator_list=[])
    ast.copy_location(made, expr)
    made.end_lineno, made.end_col_offset = expr.end_lineno, expr.end_col_offset
    expr._gradguard_def = made  # type: ignore[attr-defined]
    return made


_EVALUATE: dict[type[ast.AST], Callable[[Expressions, Any, Frame], Value]] = {
    ast.Lambda: Expressions.eval_lambda,
    ast.Name: Expressions.eval_name,
    ast.Constant: Expressions.eval_constant,
    ast.JoinedStr: Expressions.eval_formatted,
    ast.Attribute: Expressions.eval_attribute,
    ast.Call: lambda expressions, expr, frame: expressions.eval_call(expr, frame),
    ast.BinOp: Expressions.eval_binary,
    ast.UnaryOp: Expressions.eval_unary,
    ast.Compare: Expressions.eval_comparison,
    ast.BoolOp: Expressions.eval_boolean,
    ast.Subscript: Expressions.eval_subscript,
    ast.List: Expressions.eval_sequence,
    ast.Dict: Expressions.eval_dict,
    ast.Tuple: Expressions.eval_sequence,
    ast.IfExp: Expressions.eval_if_expression,
    ast.NamedExpr: Expressions.eval_walrus,
    ast.ListComp: Expressions.eval_comprehension,
    ast.GeneratorExp: Expressions.eval_comprehension,
    Skipped: Expressions.eval_skipped,
}


def is_item_index(target: ast.Subscript) -> bool:
    """``x[i]`` or ``x[0]``: how lists are indexed (slices and ``...`` are tensors')."""
    return _item_number(target.slice)


def _item_number(index: ast.expr) -> bool:
    if isinstance(index, ast.Constant):
        return index.value is None or isinstance(index.value, int)
    if isinstance(index, ast.BinOp) and isinstance(index.op, (ast.Add, ast.Sub)):
        # ``features[i + 1]``: a position counted from names, as a list's item is.
        return _item_number(index.left) and _item_number(index.right)
    return isinstance(index, (ast.Name, ast.Attribute))


def index_parts(subscript: ast.Subscript) -> list[ast.expr]:
    """The parts of ``x[a, b:c]``: ``[a, b:c]``."""
    index = subscript.slice
    return list(index.elts) if isinstance(index, ast.Tuple) else [index]
