"""Abstract interpretation of one function body over tensors, modules and optimizers.

The evaluator decides what each piece of code *is* (which op, which module, which
user function) and hands it to :class:`Autograd`, which knows what that op does.
User classes and functions of the same file are followed by interpreting their bodies
with the caller's values (``self.<attr>`` from ``__init__``, ``nn.Sequential`` contents
in order, helper methods, staticmethods), within a depth and a step budget.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from gradguard.analysis.autograd import Autograd
from gradguard.analysis.names import dotted_name
from gradguard.analysis.program import ClassInfo, Program, Reads, decorator_names
from gradguard.analysis.values import (
    Kind,
    NnModule,
    Sequential,
    Storage,
    UnknownModule,
    UserModule,
    Value,
    any_grad,
    constant,
    is_tensorish,
    join,
    unknown,
)
from gradguard.facts.table import Facts, InplaceFlag
from gradguard.fixes.plans import (
    AugmentedToBinary,
    CloneFirst,
    CloneIfUsedLater,
    DropOut,
    OutOfPlace,
    Place,
    Plan,
    is_dotted,
    receiver_root,
    renamed_method,
    without_argument,
)

# Any module renders any node; one empty module serves every label.
_CODEGEN = cst.Module(body=[])

MAX_DEPTH = 8
MAX_STEPS = 20_000
MAX_UNROLL = 32

UNKNOWN_INT = object()

GRAD_OFF = {
    "torch.no_grad",
    "torch.inference_mode",
    "torch.autograd.no_grad",
    "torch.autograd.grad_mode.no_grad",
}
GRAD_ON = {"torch.enable_grad", "torch.autograd.enable_grad"}
OPTIMIZER_PREFIX = "torch.optim."
BINARY_SYMBOLS = {
    "Add": "+",
    "Subtract": "-",
    "Multiply": "*",
    "Divide": "/",
    "FloorDivide": "//",
    "Power": "**",
    "MatrixMultiply": "@",
    "Modulo": "%",
}
REFLECTED = {"+": "radd", "*": "rmul", "-": "rsub", "/": "rtruediv"}
AUGMENTED_SYMBOLS = {
    "AddAssign": "+=",
    "SubtractAssign": "-=",
    "MultiplyAssign": "*=",
    "DivideAssign": "/=",
    "PowerAssign": "**=",
    "MatrixMultiplyAssign": "@=",
    "FloorDivideAssign": "//=",
    "ModuloAssign": "%=",
    "BitwiseAndAssign": "&=",
    "BitwiseOrAssign": "|=",
}
NON_TENSOR_METHODS = {"item", "tolist", "size", "dim", "numel", "numpy", "data_ptr",
                      "stride", "element_size", "is_contiguous", "get_device", "nelement",
                      "ndimension", "is_floating_point", "storage_offset"}
TUPLE_METHODS = {"max", "min", "sort", "topk", "kthvalue", "mode", "median", "nanmedian",
                 "unique", "unique_consecutive", "split", "chunk", "unbind", "tensor_split",
                 "svd", "qr", "slogdet", "aminmax", "frexp", "cummax", "cummin", "histogram"}
MODULE_RETURNS_SELF = {"train", "eval", "to", "cuda", "cpu", "float", "double", "half",
                       "requires_grad_", "type", "share_memory"}


class OutOfBudget(Exception):
    """The interpretation of one root took too many steps; its findings so far stand."""


@dataclass
class _Position:
    statements: Sequence[cst.CSTNode]
    index: int = 0


@dataclass
class Frame:
    env: dict[str, Value]
    self_value: Value | None = None
    class_name: str | None = None
    returns: list[Value] = field(default_factory=list)


@dataclass
class Evaluator:
    program: Program
    facts: Facts
    autograd: Autograd
    steps: int = 0
    stack: list[cst.CSTNode] = field(default_factory=list)
    # Top-level classes and functions this run looked into: what its findings depend on.
    used: set[str] = field(default_factory=set)
    # Every lookup of a class, function or method, found or not: when its findings hold.
    reads: Reads = field(default_factory=Reads)
    # How many enclosing loops are in their second pass.
    repeating: int = 0
    # The statement being interpreted and the statement list holding it (for fixes).
    place: Place | None = None
    block: Sequence[cst.CSTNode] = ()
    # Attribute assignments since a branch began: (attributes, name, value before).
    attr_journal: list[tuple[dict[str, Value], str, Value | None]] | None = None
    # The statement lists of the current function being run, with the current index.
    positions: list[_Position] = field(default_factory=list)

    # -- entry points -----------------------------------------------------------------

    def run_module_statements(self, statements: Sequence[cst.CSTNode]) -> None:
        frame = Frame({})
        self.exec_block(statements, frame)

    def run_function(
        self, func: cst.FunctionDef, self_value: Value | None, class_name: str | None
    ) -> None:
        args: list[Value] = []
        if func.name.value == "forward" and class_name is not None and \
                self.program.is_module_class(class_name, self.reads):
            # A module's forward is called with tensors. The first is taken to be the
            # activation a network passes on, which requires grad in training; whether
            # the others do (masks, targets) depends on the caller.
            required = [p for p in func.params.params if p.default is None][1:]
            args = [self.autograd.fresh(True if index == 0 else None, p.name.value)
                    for index, p in enumerate(required)]
            for arg in args:
                arg.maybe_list = True  # forward(self, x) is also called with lists
        self.call_function(func, args, {}, self_value, class_name, call_node=None)

    def instantiate(self, info: ClassInfo, call_node: cst.CSTNode | None,
                    args: list[Value], kwargs: dict[str, Value]) -> Value:
        """A user class instance: its attributes are whatever ``__init__`` assigns."""
        params = self.autograd.new_storage(param=True, leaf=True)
        instance = Value("module", spec=UserModule(info.name), attrs={}, params=params,
                         name=info.name, desc=info.name)
        found = self.lookup(info.name, "__init__")
        if found is not None:
            owner, init = found
            self.call_function(init, args, kwargs, instance, owner.name, call_node)
        return instance

    def lookup(self, class_name: str, name: str) -> tuple[ClassInfo, cst.FunctionDef] | None:
        found = self.program.method(class_name, name, self.used, self.reads)
        return found

    # -- statements -------------------------------------------------------------------

    def tick(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise OutOfBudget

    def exec_block(self, statements: Sequence[cst.CSTNode], frame: Frame) -> None:
        outer = self.block
        self.block = statements
        position = _Position(statements)
        self.positions.append(position)
        try:
            for index, statement in enumerate(statements):
                position.index = index
                self.exec_statement(statement, frame)
        finally:
            self.positions.pop()
            self.block = outer

    def later_statements(self) -> tuple[cst.CSTNode, ...]:
        """What the current function runs after the current statement, at every depth."""
        later: list[cst.CSTNode] = []
        for position in self.positions:
            later.extend(position.statements[position.index + 1:])
        return tuple(later)

    def exec_statement(self, statement: cst.CSTNode, frame: Frame) -> None:
        self.tick()
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                self.place = Place(small, statement, self.block)
                self.exec_small(small, frame)
            self.place = None
        elif isinstance(statement, cst.If):
            self.exec_if(statement, frame)
        elif isinstance(statement, cst.For):
            self.exec_for(statement, frame)
        elif isinstance(statement, cst.While):
            self.exec_loop_body(statement.body.body, frame)
        elif isinstance(statement, cst.With):
            self.exec_with(statement, frame)
        elif isinstance(statement, cst.Try):
            self.exec_block(statement.body.body, frame)
            for handler in statement.handlers:
                self.exec_block(handler.body.body, frame)
            if statement.orelse is not None:
                self.exec_block(statement.orelse.body.body, frame)
            if statement.finalbody is not None:
                self.exec_block(statement.finalbody.body.body, frame)
        elif isinstance(statement, cst.FunctionDef):
            frame.env[statement.name.value] = Value("function", desc=statement.name.value,
                                                    const=statement)
        elif isinstance(statement, cst.ClassDef):
            frame.env[statement.name.value] = unknown(statement.name.value)

    def exec_small(self, small: cst.BaseSmallStatement, frame: Frame) -> None:
        if isinstance(small, cst.Assign):
            value = self.eval(small.value, frame)
            for target in small.targets:
                self.bind(target.target, value, frame, small)
        elif isinstance(small, cst.AnnAssign):
            if small.value is not None:
                self.bind(small.target, self.eval(small.value, frame), frame, small)
        elif isinstance(small, cst.AugAssign):
            self.exec_augassign(small, frame)
        elif isinstance(small, cst.Expr):
            self.eval(small.value, frame)
        elif isinstance(small, cst.Return):
            value = constant(None) if small.value is None else self.eval(small.value, frame)
            frame.returns.append(value)

    def exec_augassign(self, small: cst.AugAssign, frame: Frame) -> None:
        target = self.eval(small.target, frame)
        right = self.eval(small.value, frame)
        symbol = AUGMENTED_SYMBOLS.get(type(small.operator).__name__) or ""
        effect = None
        if right.kind == "const":
            effect = self.facts.operators.get(f"{symbol}#scalar")
        effect = effect or self.facts.operators.get(symbol)
        if target.kind == "tensor" and effect is not None:
            label = f"{self.text(small.target)} {symbol}"
            plan: Plan | None = None
            if is_dotted(small.target):
                if self.rebinding_keeps_meaning(target):
                    plan = AugmentedToBinary(small, symbol.removesuffix("="))
            else:
                plan = self.clone_first(small.target, frame)
            with self.fixing(plan):
                self.autograd.apply(effect, small, label, [target, right])
            return
        if target.kind == "list" and right.kind == "list" and target.items is not None:
            target.items.extend(right.items or [])
            return
        self.bind(small.target, unknown(), frame, small)

    def exec_if(self, statement: cst.If, frame: Frame) -> None:
        test = self.truth(statement.test, frame)
        orelse: Sequence[cst.CSTNode] = ()
        if isinstance(statement.orelse, cst.Else):
            orelse = statement.orelse.body.body
        elif isinstance(statement.orelse, cst.If):
            orelse = (statement.orelse,)
        if test is True:
            self.exec_block(statement.body.body, frame)
        elif test is False:
            self.exec_block(orelse, frame)
        else:
            self.exec_branches(statement.body.body, orelse, frame)

    def exec_branches(
        self, first: Sequence[cst.CSTNode], second: Sequence[cst.CSTNode], frame: Frame
    ) -> None:
        """Run two alternatives from the same state and join what they leave.

        The saves the first branch made are taken back while the second runs (so that
        neither sees the other's), then both are kept: either branch may have run.
        """
        before_env = dict(frame.env)
        outer, outer_attrs = self.autograd.journal, self.attr_journal
        self.autograd.journal, self.attr_journal = [], []
        self.exec_block(first, frame)
        first_saves, first_attrs = self.autograd.journal, self.attr_journal
        for storage, save in reversed(first_saves):
            if save in storage.saves:
                storage.saves.remove(save)
        # Attributes the first branch set (self.h = ...): taken back, joined at the end.
        after_first = {(id(attrs), key): (attrs, key, attrs.get(key))
                       for attrs, key, _ in first_attrs}
        for attrs, key, old in reversed(first_attrs):
            if old is None:
                attrs.pop(key, None)
            else:
                attrs[key] = old
        after_first_env = frame.env
        frame.env = dict(before_env)
        self.autograd.journal, self.attr_journal = [], []
        self.exec_block(second, frame)
        second_saves, second_attrs = self.autograd.journal, self.attr_journal
        for storage, save in first_saves:
            storage.saves.append(save)
        for attrs, key, value in after_first.values():
            current = attrs.get(key)
            if value is None or current is None:
                attrs[key] = value or current or unknown()
            else:
                attrs[key] = join(value, current)
        self.autograd.journal, self.attr_journal = outer, outer_attrs
        if outer is not None:
            outer.extend(first_saves + second_saves)
        if outer_attrs is not None:
            outer_attrs.extend(first_attrs + second_attrs)
        merged: dict[str, Value] = {}
        for name in after_first_env.keys() | frame.env.keys():
            a = after_first_env.get(name)
            b = frame.env.get(name)
            if a is None or b is None:
                merged[name] = a or b or unknown()
            else:
                merged[name] = join(a, b)
        frame.env = merged

    def exec_for(self, statement: cst.For, frame: Frame) -> None:
        iterable = self.eval(statement.iter, frame)
        if iterable.kind == "list" and iterable.items is not None and \
                len(iterable.items) <= MAX_UNROLL:
            for item in list(iterable.items):
                self.bind(statement.target, item, frame, statement)
                self.exec_block(statement.body.body, frame)
        else:
            for second in (False, True):
                with self.iteration(second):
                    self.bind(statement.target, self.element_of(iterable), frame, statement)
                    self.exec_block(statement.body.body, frame)
        if statement.orelse is not None:
            self.exec_block(statement.orelse.body.body, frame)

    def exec_loop_body(self, body: Sequence[cst.CSTNode], frame: Frame) -> None:
        # Twice: a write in the second iteration can break what the first one saved.
        for second in (False, True):
            with self.iteration(second):
                self.exec_block(body, frame)

    @contextmanager
    def iteration(self, second: bool) -> Iterator[None]:
        self.repeating += int(second)
        try:
            yield
        finally:
            self.repeating -= int(second)

    def distinct(self, value: Value) -> Value:
        """The element a later iteration takes from a list: another tensor than before.

        ``for i in range(n): f(preds[i])`` reads a different tensor each time round, so
        what the first iteration saved must not be charged to the second one's writes.
        Tensors carried from one iteration to the next keep their storage.
        """
        if not self.repeating or not is_tensorish(value):
            return value
        storages = tuple(self.autograd.new_storage(leaf=s.leaf, param=s.param)
                         for s in value.storages)
        return Value(value.kind, storages, value.requires_grad, view=value.view,
                     desc=value.desc, history=value.history)

    def exec_with(self, statement: cst.With, frame: Frame) -> None:
        grad = self.autograd.grad_enabled
        for item in statement.items:
            expr = item.item
            name = self.program.qualify(expr.func if isinstance(expr, cst.Call) else expr)
            if name in GRAD_OFF:
                self.autograd.grad_enabled = False
            elif name in GRAD_ON:
                self.autograd.grad_enabled = True
            elif name == "torch.set_grad_enabled" and isinstance(expr, cst.Call) and expr.args:
                flag = self.truth(expr.args[0].value, frame)
                if flag is not None:
                    self.autograd.grad_enabled = flag
            else:
                value = self.eval(expr, frame)
                if item.asname is not None:
                    self.bind(item.asname.name, value, frame, statement)
        try:
            self.exec_block(statement.body.body, frame)
        finally:
            self.autograd.grad_enabled = grad

    # -- binding ----------------------------------------------------------------------

    def bind(self, target: cst.BaseExpression, value: Value, frame: Frame,
             statement: cst.CSTNode) -> None:
        if isinstance(target, cst.Name):
            frame.env[target.value] = value
        elif isinstance(target, cst.Attribute):
            owner = self.eval(target.value, frame)
            if owner.attrs is not None:
                if self.attr_journal is not None:
                    key = target.attr.value
                    self.attr_journal.append((owner.attrs, key, owner.attrs.get(key)))
                owner.attrs[target.attr.value] = value
                if value.kind == "module" and not value.name:
                    value.name = self.text(target)
        elif isinstance(target, cst.Subscript):
            self.write_subscript(target, value, frame)
        elif isinstance(target, (cst.Tuple, cst.List)):
            elements = [e.value for e in target.elements]
            parts = self.unpack(value, len(elements))
            for element, part in zip(elements, parts, strict=False):
                if isinstance(element, cst.StarredElement):
                    self.bind(element.value, Value("list", items=None), frame, statement)
                else:
                    self.bind(element, part, frame, statement)
        elif isinstance(target, cst.StarredElement):
            self.bind(target.value, Value("list", items=None), frame, statement)

    def unpack(self, value: Value, count: int) -> list[Value]:
        if value.kind == "list" and value.items is not None and len(value.items) == count:
            return list(value.items)
        return [self.element_of(value) for _ in range(count)]

    def element_of(self, value: Value) -> Value:
        """One element of an iterable whose elements are not individually known."""
        if value.kind == "list" and value.view == "multi":
            return Value("tensor", value.storages, value.requires_grad, view="multi",
                         desc=value.desc, history=(value,))
        if value.kind == "list" and value.element is not None:
            return self.distinct(value.element)
        if value.kind == "list" and value.items:
            result = value.items[0]
            for item in value.items[1:]:
                result = join(result, item)
            return self.distinct(result)
        if value.kind == "const" and value.const is UNKNOWN_INT:
            return constant(UNKNOWN_INT)
        if value.kind == "tensor" and not value.maybe_list:
            # Iterating a tensor unbinds it: views autograd forbids writing to.
            return Value("tensor", value.storages, value.requires_grad, view="multi",
                         history=(value,))
        return unknown()

    def write_subscript(self, target: cst.Subscript, value: Value, frame: Frame) -> None:
        owner = self.eval(target.value, frame)
        if not is_tensorish(owner):
            return
        if (owner.kind == "unknown" or owner.maybe_list) and self.is_item_index(target):
            return  # ``x[i] = v`` on what may be a list replaces an item, writing nothing
        basic = all(self.is_basic_index(e.slice, frame) for e in target.slice)
        key = "setitem" if basic else "setitem#advanced"
        if value.kind == "const" and basic:
            key = "setitem#scalar"
        effect = self.facts.operators.get(key) or self.facts.operators.get("setitem")
        if effect is None:
            return
        with self.fixing(self.clone_first(target.value, frame)):
            self.autograd.apply(effect, target, f"{self.text(target)} = ...", [owner, value])

    # -- expressions ------------------------------------------------------------------

    def eval(self, expr: cst.BaseExpression, frame: Frame) -> Value:
        # By exact node type: libcst's node classes are abstract-base subclasses, and a
        # chain of isinstance checks on them was a fifth of the interpreter's time.
        evaluate = _EVALUATE.get(type(expr))
        return unknown() if evaluate is None else evaluate(self, expr, frame)

    def eval_comparison(self, expr: cst.Comparison, frame: Frame) -> Value:
        values = self.comparands(expr, frame)
        if any(is_tensorish(v) for v in values):
            return self.autograd.fresh(False, "comparison")
        return constant(_compare(values, [c.operator for c in expr.comparisons]))

    def eval_boolean(self, expr: cst.BooleanOperation, frame: Frame) -> Value:
        left = self.eval(expr.left, frame)
        right = self.eval(expr.right, frame)
        return join(left, right)

    def eval_sequence(self, expr: cst.List | cst.Tuple, frame: Frame) -> Value:
        items: list[Value] = []
        for element in expr.elements:
            if isinstance(element, cst.StarredElement):
                inner = self.eval(element.value, frame)
                if inner.kind != "list" or inner.items is None:
                    return Value("list", items=None)
                items.extend(inner.items)
            else:
                items.append(self.eval(element.value, frame))
        return Value("list", items=items)

    def eval_if_expression(self, expr: cst.IfExp, frame: Frame) -> Value:
        test = self.truth(expr.test, frame)
        if test is True:
            return self.eval(expr.body, frame)
        if test is False:
            return self.eval(expr.orelse, frame)
        return join(self.eval(expr.body, frame), self.eval(expr.orelse, frame))

    def eval_walrus(self, expr: cst.NamedExpr, frame: Frame) -> Value:
        value = self.eval(expr.value, frame)
        self.bind(expr.target, value, frame, expr)
        return value

    def eval_comprehension(self, expr: cst.ListComp | cst.GeneratorExp, frame: Frame) -> Value:
        """A list of unknown length whose elements are all like one evaluation of ``elt``."""
        inner = Frame(dict(frame.env), frame.self_value, frame.class_name)
        clause: cst.CompFor | None = expr.for_in
        while clause is not None:
            iterable = self.eval(clause.iter, inner)
            self.bind(clause.target, self.element_of(iterable), inner, expr)
            clause = clause.inner_for_in
        return Value("list", items=None, element=self.eval(expr.elt, inner))

    def eval_name(self, name: str, frame: Frame) -> Value:
        if name in frame.env:
            return frame.env[name]
        if name in ("True", "False", "None"):
            return constant({"True": True, "False": False, "None": None}[name])
        if self.program.class_info(name, self.reads) is not None or \
                self.program.function(name, self.reads) is not None:
            self.used.add(name)
            return Value("function", desc=name, name=name)
        return Value("function", desc=name, name=self.program.aliases.get(name, name))

    def eval_attribute(self, expr: cst.Attribute, frame: Frame) -> Value:
        attr = expr.attr.value
        owner = self.eval(expr.value, frame)
        if owner.kind == "function":
            if owner.const is not None:
                return unknown()
            return Value("function", desc=f"{owner.desc}.{attr}", name=f"{owner.name}.{attr}")
        if owner.kind == "module":
            if owner.attrs is not None and attr in owner.attrs:
                return owner.attrs[attr]
            if attr == "training":
                return constant(True)
            if isinstance(owner.spec, NnModule) and attr in ("weight", "bias") and \
                    owner.params is not None:
                return Value("tensor", (owner.params,), True, desc=self.text(expr))
            return unknown(self.text(expr))
        if is_tensorish(owner):
            if attr == "data":
                # .data has a version counter of its own: writes through it go unseen.
                return self.autograd.fresh(False, self.text(expr))
            if attr in ("T", "mT", "H", "mH", "real", "imag"):
                return Value("tensor", owner.storages, owner.requires_grad, view="view",
                             history=(owner,))
            if attr in ("shape", "ndim", "dtype", "device", "is_leaf", "requires_grad"):
                return constant(UNKNOWN_INT)
            if attr == "grad":
                return self.autograd.fresh(False, self.text(expr))
        return unknown(self.text(expr))

    def eval_subscript(self, expr: cst.Subscript, frame: Frame) -> Value:
        owner = self.eval(expr.value, frame)
        if owner.kind == "list":
            if owner.view == "multi":
                return self.element_of(owner)
            index = self.single_index(expr, frame)
            if owner.items is not None and isinstance(index, int) and \
                    -len(owner.items) <= index < len(owner.items):
                return owner.items[index]
            return self.element_of(owner)
        if not is_tensorish(owner):
            return unknown()
        basic = all(self.is_basic_index(e.slice, frame) for e in expr.slice)
        effect = self.facts.operators.get("getitem_basic" if basic else "getitem_advanced")
        if effect is None:
            return unknown()
        result = self.autograd.apply(effect, expr, self.text(expr), [owner])
        if owner.kind == "unknown":
            # Not known to be a tensor: perhaps a list, whose items differ per iteration.
            return self.distinct(result)
        return result

    def single_index(self, expr: cst.Subscript, frame: Frame) -> object:
        if len(expr.slice) != 1 or not isinstance(expr.slice[0].slice, cst.Index):
            return None
        value = self.eval(expr.slice[0].slice.value, frame)
        return value.const if value.kind == "const" else None

    @staticmethod
    def is_item_index(target: cst.Subscript) -> bool:
        """``x[i]`` or ``x[0]``: how lists are indexed (slices and ``...`` are tensors')."""
        if len(target.slice) != 1 or not isinstance(target.slice[0].slice, cst.Index):
            return False
        return isinstance(target.slice[0].slice.value, (cst.Name, cst.Integer, cst.Attribute))

    def is_basic_index(self, part: cst.BaseSlice, frame: Frame) -> bool:
        if isinstance(part, cst.Slice):
            return True
        assert isinstance(part, cst.Index)
        value = part.value
        if isinstance(value, (cst.Integer, cst.Ellipsis)):
            return True
        if isinstance(value, cst.UnaryOperation) and isinstance(value.expression, cst.Integer):
            return True
        if isinstance(value, cst.Name) and value.value == "None":
            return True
        evaluated = self.eval(value, frame)
        return evaluated.kind == "const" and (
            isinstance(evaluated.const, int) or evaluated.const is UNKNOWN_INT
            or evaluated.const is ... or evaluated.const is None
        )

    def eval_binary(self, expr: cst.BinaryOperation, frame: Frame) -> Value:
        left = self.eval(expr.left, frame)
        right = self.eval(expr.right, frame)
        if left.kind == "list" and right.kind == "list":
            if left.items is None or right.items is None:
                return Value("list", items=None)
            return Value("list", items=left.items + right.items)
        symbol = BINARY_SYMBOLS.get(type(expr.operator).__name__, "")
        if left.kind != "tensor" and right.kind != "tensor":
            return constant(UNKNOWN_INT) if left.kind == right.kind == "const" else unknown()
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
        return self.autograd.apply(effect, expr, symbol, inputs)

    def eval_unary(self, expr: cst.UnaryOperation, frame: Frame) -> Value:
        if isinstance(expr.operator, cst.Not):
            truth = self.truth(expr.expression, frame)  # evaluates the operand, once
            return constant(None if truth is None else not truth)
        operand = self.eval(expr.expression, frame)
        if isinstance(expr.operator, cst.Minus) and is_tensorish(operand):
            effect = self.facts.operators.get("unary-")
            if effect is not None:
                return self.autograd.apply(effect, expr, "-", [operand])
        if operand.kind == "const" and isinstance(operand.const, (int, float)):
            return constant(-operand.const if isinstance(expr.operator, cst.Minus)
                            else operand.const)
        return operand if is_tensorish(operand) else unknown()

    def truth(self, expr: cst.BaseExpression, frame: Frame) -> bool | None:
        """What a condition evaluates to, when it is known without running the code."""
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
            inner = self.truth(expr.expression, frame)
            return None if inner is None else not inner
        if isinstance(expr, cst.BooleanOperation):
            left = self.truth(expr.left, frame)
            right = self.truth(expr.right, frame)
            if isinstance(expr.operator, cst.And):
                if left is False or right is False:
                    return False
                return True if left is True and right is True else None
            if left is True or right is True:
                return True
            return False if left is False and right is False else None
        if isinstance(expr, cst.Comparison):
            # Each operand once: a comparison's truth and its value are one evaluation.
            return _compare(self.comparands(expr, frame),
                            [c.operator for c in expr.comparisons])
        value = self.eval(expr, frame)
        if value.kind == "const" and value.const is not UNKNOWN_INT:
            return bool(value.const)
        if value.kind == "module":
            return True
        return None

    def comparands(self, expr: cst.Comparison, frame: Frame) -> list[Value]:
        return [self.eval(expr.left, frame)] + [self.eval(c.comparator, frame)
                                                for c in expr.comparisons]

    # -- calls ------------------------------------------------------------------------

    def eval_call(self, call: cst.Call, frame: Frame) -> Value:
        func = call.func
        if isinstance(func, cst.Attribute):
            owner = self.eval(func.value, frame)
            attrs = owner.attrs or {}
            if func.attr.value in attrs:
                callee = attrs[func.attr.value]  # self.relu(x): a module held by self
            elif owner.kind != "function":
                return self.call_method(owner, func.attr.value, call, frame)
            else:
                callee = self.eval(func, frame)
        else:
            callee = self.eval(func, frame)
        if callee.kind == "module":
            args = self.positional(call, frame)
            first = call.args[0].value if call.args and not call.args[0].keyword else None
            return self.call_module(callee, args, call, self.text(func), first)
        if callee.kind == "function" and callee.const is not None:
            args, kwargs = self.arguments(call, frame)
            assert isinstance(callee.const, cst.FunctionDef)
            return self.call_function(callee.const, args, kwargs, frame.self_value,
                                      frame.class_name, call)
        if callee.kind == "function":
            return self.call_named(callee.name, call, frame)
        return unknown(self.text(func))

    def positional(self, call: cst.Call, frame: Frame) -> list[Value]:
        return self.arguments(call, frame)[0]

    def arguments(self, call: cst.Call, frame: Frame) -> tuple[list[Value], dict[str, Value]]:
        args: list[Value] = []
        kwargs: dict[str, Value] = {}
        for arg in call.args:
            value = self.eval(arg.value, frame)
            if arg.keyword is not None:
                kwargs[arg.keyword.value] = value
            elif arg.star == "*":
                if value.kind == "list" and value.items is not None:
                    args.extend(value.items)
                else:
                    args.append(Value("list", items=None, desc="*args"))
            elif arg.star == "**":
                continue
            else:
                args.append(value)
        return args, kwargs

    def call_named(self, name: str, call: cst.Call, frame: Frame) -> Value:
        """A call of a module-level name: a user class or function, or a torch API."""
        args, kwargs = self.arguments(call, frame)
        info = self.program.class_info(name, self.reads)
        if info is not None:
            return self.instantiate(info, call, args, kwargs)
        function = self.program.function(name, self.reads)
        if function is not None:
            return self.call_function(function, args, kwargs, None, None, call)
        if name == "super":
            return Value("function", desc="super", name="super")
        if name in ("range", "len", "int", "max", "min", "sum", "round", "abs"):
            if name == "range":
                return constant(UNKNOWN_INT)
            return constant(UNKNOWN_INT) if not any(is_tensorish(a) for a in args) \
                else unknown(name)
        if name in ("list", "tuple") and args and args[0].kind == "list":
            return Value("list", items=None if args[0].items is None else list(args[0].items),
                         view=args[0].view, storages=args[0].storages)
        if name in ("isinstance", "hasattr", "callable"):
            return constant(UNKNOWN_INT)
        if name == "zip":
            return Value("list", items=None, element=Value(
                "list", items=[self.element_of(a) for a in args]))
        if name == "enumerate" and args:
            return Value("list", items=None, element=Value(
                "list", items=[constant(UNKNOWN_INT), self.element_of(args[0])]))
        return self.call_torch(name, call, args, kwargs, frame)

    def call_torch(self, name: str, call: cst.Call, args: list[Value],
                   kwargs: dict[str, Value], frame: Frame) -> Value:
        facts = self.facts
        label = self.text(call.func)
        if name in facts.modules:
            module = facts.modules[name]
            inplace = self.flag(module.ctor_inplace, call, args, kwargs)
            params = self.autograd.new_storage(param=True, leaf=True)
            spec = NnModule(module, inplace, call, identity=self.is_identity(name, args, kwargs))
            return Value("module", spec=spec, params=params, desc=label, attrs=None)
        if name == "torch.nn.Sequential":
            items = [a for a in args if a.kind == "module"]
            if len(items) != len(args):
                return Value("module", spec=UnknownModule(), desc=label)
            return Value("module", spec=Sequential(items, call), desc=label,
                         params=self.autograd.new_storage(param=True, leaf=True))
        if name == "torch.nn.ModuleList":
            if args and args[0].kind == "list":
                return Value("list", items=None if args[0].items is None
                             else list(args[0].items), element=args[0].element)
            return Value("list", items=[])
        if name == "torch.nn.Parameter" or name == "torch.nn.parameter.Parameter":
            requires = kwargs.get("requires_grad")
            grad = not (requires is not None and requires.kind == "const" and
                        requires.const is False)
            storage = self.autograd.new_storage(leaf=grad, param=True)
            return Value("tensor", (storage,), grad, desc=label)
        if name.startswith(OPTIMIZER_PREFIX) and name.count(".") == 2:
            updates: list[Value] = []
            for value in args[:1] + list(kwargs.values()):
                updates.extend(self.modules_in(value))
            return Value("optimizer", desc=label, updates=updates)
        if name in ("torch.autograd.backward", "torch.autograd.grad"):
            loss = args[0] if args else None
            self.autograd.backward(call, retain=self.retains(kwargs, name), place=self.place,
                                   loss=loss)
            return unknown(label)
        if name.startswith("torch.nn.init.") and name.endswith("_") and args:
            grad = self.autograd.grad_enabled
            self.autograd.grad_enabled = False
            try:
                self.autograd.write(args[0], call, label)
            finally:
                self.autograd.grad_enabled = grad
            return args[0]
        if name in facts.factories:
            requires = kwargs.get("requires_grad")
            grad = requires is not None and requires.kind == "const" and requires.const is True
            storage = self.autograd.new_storage(leaf=grad)
            return Value("tensor", (storage,), grad, desc=label)
        effect = facts.functions.get(self.function_key(name, call, args))
        if effect is not None and self.is_identity(name, args, kwargs, p_position=1):
            return args[0]
        if effect is not None:
            effect = effect.with_inplace(
                self.flag(effect.inplace_flag, call, args, kwargs) is True
            )
            tensors = self.tensor_operands(args)
            out = kwargs.get("out")
            plan = self.function_plan(call, name) if effect.writes else None
            with self.fixing(plan):
                result = self.autograd.apply(effect, call, label, tensors)
            if out is not None and is_tensorish(out):
                with self.fixing(self.out_plan(call)):
                    self.autograd.write(out, call, f"{label}(out=...)")
                return out
            return result
        tensors = self.tensor_operands(args)
        if name.startswith("torch.") and not tensors and "." not in name[6:]:
            # torch.linspace(...), torch.from_numpy(...): a new tensor, which requires
            # grad only when asked to.
            requires = kwargs.get("requires_grad")
            grad = requires is not None and requires.kind == "const" and requires.const is True
            return Value("tensor", (self.autograd.new_storage(leaf=grad),), grad, desc=label)
        if name.startswith("torch.") and tensors:
            out = kwargs.get("out")
            if out is not None:
                with self.fixing(self.out_plan(call)):
                    self.autograd.write(out, call, f"{label}(out=...)")
            # A torch function the tables do not know: its output's grad follows its inputs,
            # and what it saves is not guessed.
            graph = any_grad(tensors) if self.autograd.grad_enabled else False
            # Its output may be a tuple (torch.max(x, 1), torch.sort(x)): not a tensor for sure.
            return Value("unknown", (self.autograd.new_storage(),), graph, desc=label,
                         history=tuple(tensors))
        return unknown(label)

    @staticmethod
    def is_identity(name: str, args: list[Value], kwargs: dict[str, Value],
                    p_position: int = 0) -> bool:
        """Dropout with p == 0 returns its input untouched, inplace or not."""
        if "dropout" not in name.lower():
            return False
        p = kwargs.get("p")
        if p is None and len(args) > p_position:
            p = args[p_position]
        return p is not None and p.kind == "const" and p.const == 0

    def function_key(self, name: str, call: cst.Call, args: list[Value]) -> str:
        """Picks the traced variant of a spelling whose behaviour depends on its arguments."""
        if name == "torch.einsum" and args and args[0].kind == "const" and \
                isinstance(args[0].const, str):
            inputs, _, output = args[0].const.replace(" ", "").partition("->")
            letters = set(inputs.replace(",", ""))
            if output and letters <= set(output) and "torch.einsum#broadcast" in \
                    self.facts.functions:
                return "torch.einsum#broadcast"
        if name.endswith("adaptive_avg_pool2d") or name.endswith("adaptive_max_pool2d"):
            if len(args) > 1 and args[1].kind == "const" and args[1].const == 1 and \
                    f"{name}#1" in self.facts.functions:
                return f"{name}#1"
        return name

    @staticmethod
    def tensor_operands(args: list[Value]) -> list[Value]:
        tensors: list[Value] = []
        for value in args:
            if is_tensorish(value):
                tensors.append(value)
            elif value.kind == "list" and value.items is not None:
                tensors.extend(v for v in value.items if is_tensorish(v))
        return tensors

    def flag(self, where: InplaceFlag | None, call: cst.Call, args: list[Value],
             kwargs: dict[str, Value]) -> bool | None:
        """The value of an ``inplace`` switch at a call, when it is known."""
        if where is None:
            return False
        value = kwargs.get(where.name)
        if value is None and where.position is not None and where.position < len(args):
            has_star = any(arg.star for arg in call.args)
            if not has_star:
                value = args[where.position]
        if value is None:
            return False
        if value.kind == "const" and value.const is not UNKNOWN_INT:
            return bool(value.const)
        return None

    @staticmethod
    def retains(kwargs: dict[str, Value], name: str = "") -> bool:
        for key in ("retain_graph", "create_graph"):
            value = kwargs.get(key)
            if value is not None and not (value.kind == "const" and not value.const):
                return True
        return False

    def modules_in(self, value: Value) -> list[Value]:
        """The modules whose parameters an optimizer argument refers to."""
        if value.kind == "module":
            return [value]
        if value.updates is not None:
            return list(value.updates)
        if value.kind == "list" and value.items is not None:
            found: list[Value] = []
            for item in value.items:
                found.extend(self.modules_in(item))
            return found
        return []

    def call_method(self, owner: Value, name: str, call: cst.Call, frame: Frame) -> Value:
        if owner.kind == "module":
            return self.call_module_method(owner, name, call, frame)
        if owner.kind == "optimizer":
            if name == "step":
                self.optimizer_step(owner, call)
            return constant(None)
        if owner.kind == "list":
            args = self.positional(call, frame)
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
        if not is_tensorish(owner):
            return unknown(self.text(call.func))
        label = f"{self.text(call.func)}()"
        if name == "backward":
            self.autograd.backward(call, retain=self.retains(kwargs), place=self.place,
                                   loss=owner)
            return constant(None)
        if name == "requires_grad_":
            flag = args[0] if args else kwargs.get("requires_grad")
            on = flag is None or (flag.kind == "const" and bool(flag.const))
            if on and owner.view is None and owner.requires_grad is False:
                for storage in owner.storages:
                    storage.leaf = True
            owner.requires_grad = True if on else owner.requires_grad
            return owner
        effect = self.facts.methods.get(name) or self.facts.inplace_method(name)
        if effect is None:
            return self.untraced_method(owner, name, args, label)
        effect = effect.with_inplace(self.flag(effect.inplace_flag, call, [owner, *args],
                                               kwargs) is True)
        operands = [owner] + [a for a in args if is_tensorish(a)]
        plan = self.method_plan(call, name, owner, frame) if effect.writes else None
        with self.fixing(plan):
            return self.autograd.apply(effect, call, label, operands)

    @contextmanager
    def fixing(self, plan: Plan | None) -> Iterator[None]:
        """Findings made inside carry this fix plan."""
        outer = self.autograd.plan
        self.autograd.plan = plan
        try:
            yield
        finally:
            self.autograd.plan = outer

    def clone_first(self, target: cst.BaseExpression, frame: Frame) -> Plan | None:
        """Write into a copy: possible when the written view starts from a tensor name."""
        root = receiver_root(target)
        if root is None or self.place is None or self.eval(root, frame).kind != "tensor":
            return None
        return CloneFirst(root, self.place)

    @staticmethod
    def rebinding_keeps_meaning(target: Value) -> bool:
        """Whether ``x = <out of place>`` computes what writing into ``x`` did.

        Not for a view: the write reached its base, which the rebinding no longer
        changes. Pieces of split/chunk/unbind are written separately anyway.
        """
        return target.view in (None, "multi")

    def method_plan(self, call: cst.Call, name: str, owner: Value,
                    frame: Frame) -> Plan | None:
        assert isinstance(call.func, cst.Attribute)
        receiver = call.func.value
        out_of_place = name.removesuffix("_")
        effect = self.facts.methods.get(out_of_place)
        if self.place is None or effect is None or effect.writes or out_of_place == name:
            return None
        if is_dotted(receiver):
            if not self.rebinding_keeps_meaning(owner):
                return None
            return OutOfPlace(call, renamed_method(call, out_of_place), receiver, self.place)
        return self.clone_first(receiver, frame)

    def function_plan(self, call: cst.Call, name: str) -> Plan | None:
        if self.place is None or not call.args or not is_dotted(call.args[0].value):
            return None
        known = self.facts.functions.get(name)
        flag = known.inplace_flag if known is not None else None
        if flag is not None:
            replacement = without_argument(call, flag.name, flag.position)
        elif name.endswith("_") and name[:-1] in self.facts.functions and \
                isinstance(call.func, cst.Attribute):
            replacement = renamed_method(call, call.func.attr.value.removesuffix("_"))
        else:
            return None
        return OutOfPlace(call, replacement, call.args[0].value, self.place)

    def out_plan(self, call: cst.Call) -> Plan | None:
        target = next((a.value for a in call.args
                       if a.keyword is not None and a.keyword.value == "out"), None)
        if target is None or self.place is None or not is_dotted(target):
            return None
        return DropOut(call, target, self.place)

    def untraced_method(self, owner: Value, name: str, args: list[Value],
                        label: str) -> Value:
        """A Tensor method no spelling traced: what it returns, saving nothing known."""
        if name in NON_TENSOR_METHODS:
            return constant(UNKNOWN_INT)
        if name.startswith("new_"):
            return Value("tensor", (self.autograd.new_storage(),), False, desc=label)
        grad = None if owner.requires_grad is not False else False
        kind: Kind = "unknown" if name in TUPLE_METHODS or owner.kind != "tensor" \
            else "tensor"
        return Value(kind, (self.autograd.new_storage(),), grad, desc=label,
                     history=(owner, *[a for a in args if is_tensorish(a)]))

    def optimizer_step(self, optimizer: Value, call: cst.Call) -> None:
        grad = self.autograd.grad_enabled
        # optimizer.step() runs under no_grad: it bumps versions but is no leaf misuse.
        self.autograd.grad_enabled = False
        try:
            for module in optimizer.updates or []:
                for storage in self.parameter_storages(module):
                    self.autograd.write(Value("tensor", (storage,), True), call,
                                        f"{self.text(call.func)}()", place=self.place)
        finally:
            self.autograd.grad_enabled = grad

    def parameter_storages(self, module: Value, depth: int = 0) -> list[Storage]:
        found: list[Storage] = [] if module.params is None else [module.params]
        if depth > 6:
            return found
        if isinstance(module.spec, Sequential):
            for item in module.spec.items:
                found.extend(self.parameter_storages(item, depth + 1))
        for value in (module.attrs or {}).values():
            if value.kind == "module":
                found.extend(self.parameter_storages(value, depth + 1))
            elif value.kind == "list" and value.items:
                for item in value.items:
                    if item.kind == "module":
                        found.extend(self.parameter_storages(item, depth + 1))
            elif value.kind == "tensor" and any(s.param for s in value.storages):
                found.extend(s for s in value.storages if s.param)
        return found

    def call_module_method(self, owner: Value, name: str, call: cst.Call,
                           frame: Frame) -> Value:
        args, kwargs = self.arguments(call, frame)
        if name == "parameters":
            storages = tuple(self.parameter_storages(owner))
            parameter = Value("tensor", storages, True, desc=f"{self.text(call.func)}()")
            return Value("list", items=None, updates=[owner], desc="parameters",
                         element=parameter)
        if name == "named_parameters":
            return Value("list", items=None, updates=[owner], desc="parameters")
        if name in ("eval", "train") and owner.attrs is not None:
            mode = name == "train" and not (args and args[0].kind == "const" and
                                            args[0].const is False)
            owner.attrs["training"] = constant(mode)
            return owner
        if name in MODULE_RETURNS_SELF:
            return owner
        if name in ("register_buffer", "register_parameter", "add_module") and \
                len(args) > 1 and owner.attrs is not None:
            key = args[0].const if args[0].kind == "const" else None
            if isinstance(key, str):
                owner.attrs[key] = args[1]
            return constant(None)
        if name == "forward":
            return self.call_module(owner, args, call, self.text(call.func))
        if isinstance(owner.spec, UserModule):
            found = self.lookup(owner.spec.class_name, name)
            if found is not None:
                info, method = found
                bound = None if name in info.staticmethods else owner
                return self.call_function(method, args, kwargs, bound, info.name, call)
        return unknown(self.text(call.func))

    def call_module(self, module: Value, args: list[Value], node: cst.CSTNode,
                    label: str, argument: cst.BaseExpression | None = None) -> Value:
        """Call a module on ``args``; ``argument`` is the caller's expression for the
        input, when the module receives it directly (to fix a write into it)."""
        spec = module.spec
        if isinstance(spec, NnModule):
            facts = spec.facts
            if spec.identity:
                return args[0] if args else unknown()
            effect = facts.effect(spec.inplace is True)
            described = label
            if spec.inplace is True and "(" not in label:
                described = f"{label} ({facts.name.rsplit('.', 1)[-1]}, inplace=True)"
            operands = args[:1]
            if operands and facts.has_parameters and module.params is not None:
                operands.append(Value("tensor", (module.params,), True, desc="weight"))
            spec.calls.add(node)
            plan: Plan | None = None
            if spec.inplace is True and argument is not None and is_dotted(argument) and \
                    self.place is not None:
                plan = CloneIfUsedLater(argument, self.place, self.later_statements())
            with self.fixing(plan):
                return self.autograd.apply(effect, node, described, operands,
                                           layer=spec if spec.inplace is True else None)
        if isinstance(spec, Sequential):
            value = args[0] if args else unknown()
            outer = self.autograd.via
            self.autograd.via = outer + (node,)
            try:
                for index, item in enumerate(spec.items):
                    item_node = item.spec.node if isinstance(item.spec, (NnModule, Sequential)) \
                        else node
                    item_label = self.text(item_node) if item_node is not node else label
                    value = self.call_module(item, [value], item_node, item_label,
                                             argument if index == 0 else None)
            finally:
                self.autograd.via = outer
            return value
        if isinstance(spec, UserModule):
            found = self.lookup(spec.class_name, "forward") or \
                self.lookup(spec.class_name, "__call__")
            if found is not None:
                info, method = found
                return self.call_function(method, args, {}, module, info.name, node)
        return unknown(label)

    def call_function(
        self,
        func: cst.FunctionDef,
        args: list[Value],
        kwargs: dict[str, Value],
        self_value: Value | None,
        class_name: str | None,
        call_node: cst.CSTNode | None,
    ) -> Value:
        """Interpret a user function with the caller's values bound to its parameters."""
        if len(self.stack) >= MAX_DEPTH or func in self.stack:
            return unknown(func.name.value)
        names = decorator_names(func)
        frame = Frame({}, self_value, class_name)
        params = list(func.params.posonly_params) + list(func.params.params)
        is_static = "staticmethod" in names
        positional = list(args)
        if self_value is not None and not is_static and params:
            frame.env[params[0].name.value] = self_value
            params = params[1:]
        for param in params:
            name = param.name.value
            if positional:
                frame.env[name] = positional.pop(0)
            elif name in kwargs:
                frame.env[name] = kwargs[name]
            elif param.default is not None:
                frame.env[name] = self.eval(param.default, Frame({}))
            else:
                frame.env[name] = unknown(name)
        for param in func.params.kwonly_params:
            name = param.name.value
            if name in kwargs:
                frame.env[name] = kwargs[name]
            elif param.default is not None:
                frame.env[name] = self.eval(param.default, Frame({}))
            else:
                frame.env[name] = unknown(name)
        if isinstance(func.params.star_arg, cst.Param):
            frame.env[func.params.star_arg.name.value] = Value("list", items=positional)
        if func.params.star_kwarg is not None:
            frame.env[func.params.star_kwarg.name.value] = unknown()
        grad = self.autograd.grad_enabled
        if any(n in GRAD_OFF or n.split(".")[-1] in ("no_grad", "inference_mode")
               for n in names):
            self.autograd.grad_enabled = False
        outer_via = self.autograd.via
        if call_node is not None and self.stack:
            self.autograd.via = outer_via + (call_node,)
        self.stack.append(func)
        outer_positions = self.positions
        self.positions = []
        try:
            body = func.body.body if isinstance(func.body, cst.IndentedBlock) else ()
            if isinstance(func.body, cst.SimpleStatementSuite):
                for small in func.body.body:
                    self.exec_small(small, frame)
            else:
                self.exec_block(body, frame)
        finally:
            self.stack.pop()
            self.positions = outer_positions
            self.autograd.via = outer_via
            self.autograd.grad_enabled = grad
        if not frame.returns:
            return constant(None)
        result = frame.returns[0]
        for value in frame.returns[1:]:
            result = join(result, value)
        return result

    # -- text -------------------------------------------------------------------------

    def text(self, node: cst.CSTNode) -> str:
        return _text(node)


def _compare(values: list[Value], operators: list[cst.BaseCompOp]) -> bool | None:
    """What ``a op b op c ...`` is when its operands are known constants, else ``None``."""
    known = True
    for left, right, operator in zip(values, values[1:], operators, strict=False):
        holds = _compare_pair(left, right, operator)
        if holds is False:
            return False
        known = known and holds is True
    return True if known else None


def _compare_pair(left: Value, right: Value, operator: cst.BaseCompOp) -> bool | None:
    if left.kind != "const" or right.kind != "const":
        return None
    a, b = left.const, right.const
    if UNKNOWN_INT in (a, b):
        return None
    if isinstance(operator, cst.Is):
        return a is b
    if isinstance(operator, cst.IsNot):
        return a is not b
    if isinstance(operator, cst.Equal):
        return bool(a == b)
    if isinstance(operator, cst.NotEqual):
        return bool(a != b)
    return None


def _literal_value(evaluator: Evaluator,
                   expr: cst.Integer | cst.Float | cst.Imaginary | cst.SimpleString,
                   frame: Frame) -> Value:
    return constant(_literal(expr.value))


def _unknown_string(evaluator: Evaluator, expr: cst.BaseExpression, frame: Frame) -> Value:
    return constant(UNKNOWN_INT)


def _name(evaluator: Evaluator, expr: cst.Name, frame: Frame) -> Value:
    return evaluator.eval_name(expr.value, frame)


def _ellipsis(evaluator: Evaluator, expr: cst.Ellipsis, frame: Frame) -> Value:
    return constant(...)


_EVALUATE: dict[type[cst.CSTNode], Callable[[Evaluator, Any, Frame], Value]] = {
    cst.Name: _name,
    cst.Integer: _literal_value,
    cst.Float: _literal_value,
    cst.Imaginary: _literal_value,
    cst.SimpleString: _literal_value,
    cst.ConcatenatedString: _unknown_string,
    cst.FormattedString: _unknown_string,
    cst.Attribute: Evaluator.eval_attribute,
    cst.Call: Evaluator.eval_call,
    cst.BinaryOperation: Evaluator.eval_binary,
    cst.UnaryOperation: Evaluator.eval_unary,
    cst.Comparison: Evaluator.eval_comparison,
    cst.BooleanOperation: Evaluator.eval_boolean,
    cst.Subscript: Evaluator.eval_subscript,
    cst.List: Evaluator.eval_sequence,
    cst.Tuple: Evaluator.eval_sequence,
    cst.IfExp: Evaluator.eval_if_expression,
    cst.NamedExpr: Evaluator.eval_walrus,
    cst.Ellipsis: _ellipsis,
    cst.ListComp: Evaluator.eval_comprehension,
    cst.GeneratorExp: Evaluator.eval_comprehension,
}


# ``evaluated_value`` parses the literal with ``ast.literal_eval`` on every call, and
# a root runs the same few literals (0, 1, -1, "mean") over and over.
@functools.lru_cache(maxsize=1 << 12)
def _literal(text: str) -> object:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return UNKNOWN_INT  # an integer past Python's 4,300 digits, say: not known



# Nodes never change and the same ones are labelled on every run of a root (and once
# per link of a method chain), so their code is generated once.
@functools.lru_cache(maxsize=1 << 14)
def _text(node: cst.CSTNode) -> str:
    if isinstance(node, cst.BaseExpression):
        name = dotted_name(node)
        if name is not None:
            return name
    try:
        return _CODEGEN.code_for_node(node).strip()
    except Exception:  # codegen of a detached node: a label is not worth a crash
        return type(node).__name__
