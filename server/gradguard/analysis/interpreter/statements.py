"""Statements: assignment and binding, branches joined, loops run twice, ``with``."""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from gradguard.analysis.fix_plans import (
    AugmentedToBinary,
    DataToGraph,
    DropData,
    InPlaceOnly,
    Place,
    Plan,
    SelectRows,
    is_dotted,
)
from gradguard.analysis.interpreter.expressions import Expressions, index_parts, is_item_index
from gradguard.analysis.interpreter.fix_planning import FixPlanning
from gradguard.analysis.interpreter.state import (
    GRAD_OFF,
    GRAD_ON,
    MAPPING,
    MAX_UNROLL,
    UNKNOWN_INT,
    UNKNOWN_STR,
    Frame,
    Position,
    State,
    text_of,
)
from gradguard.analysis.interpreter.torch_api import TorchApi
from gradguard.analysis.values import (
    NnModule,
    Save,
    Storage,
    Value,
    constant,
    is_tensorish,
    unknown,
)

AUGMENTED_SYMBOLS = {
    ast.Add: "+=",
    ast.Sub: "-=",
    ast.Mult: "*=",
    ast.Div: "/=",
    ast.Pow: "**=",
    ast.MatMult: "@=",
    ast.FloorDiv: "//=",
    ast.Mod: "%=",
    ast.BitAnd: "&=",
    ast.BitOr: "|=",
}

MUTATION_ALLOWED = {"torch.autograd.graph.allow_mutation_on_saved_tensors"}

_SIMPLE = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Return)


class Statements:
    """Runs statements: evaluates what they compute (``expressions``), binds it, and
    plans a fix (``plans``) at each in-place write they make themselves."""

    def __init__(self, state: State, expressions: Expressions, plans: FixPlanning,
                 torch_api: TorchApi) -> None:
        self.state = state
        self.facts = state.facts
        self.expressions = expressions
        self.plans = plans
        self.torch_api = torch_api

    def exec_block(self, statements: Sequence[ast.stmt], frame: Frame) -> None:
        run = self.state.run
        outer = run.block
        run.block = statements
        position = Position(statements)
        run.positions.append(position)
        try:
            for index, statement in enumerate(statements):
                position.index = index
                self.exec_statement(statement, frame)
                if frame.done:
                    break
        finally:
            run.positions.pop()
            run.block = outer

    def later_statements(self) -> tuple[ast.stmt, ...]:
        """What the current function runs after the current statement, at every depth."""
        later: list[ast.stmt] = []
        for position in self.state.run.positions:
            later.extend(position.statements[position.index + 1:])
        return tuple(later)

    def exec_statement(self, statement: ast.stmt, frame: Frame) -> None:
        state = self.state
        state.tick()
        if isinstance(statement, _SIMPLE):
            run = state.run
            scope = run.positions[0].statements if run.positions else run.block
            run.place = Place(statement, run.block, frame.piece, scope, frame.program.aliases)
            self.exec_small(statement, frame)
            run.place = None
        elif isinstance(statement, ast.If):
            self.exec_if(statement, frame)
        elif isinstance(statement, (ast.For, ast.AsyncFor)):
            self.exec_for(statement, frame)
        elif isinstance(statement, ast.While):
            self.exec_loop_body(statement.body, frame)
            frame.done = False  # the loop may run no time, or break
        elif isinstance(statement, (ast.With, ast.AsyncWith)):
            self.exec_with(statement, frame)
        elif isinstance(statement, (ast.Try, ast.TryStar)):
            # Each part as if the one before it may have stopped anywhere.
            for part in [statement.body, *(h.body for h in statement.handlers),
                         statement.orelse, statement.finalbody]:
                frame.done = False
                self.exec_block(part, frame)
            frame.done = False
        elif isinstance(statement, ast.Raise):
            frame.done = True
        elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            frame.env[statement.name] = self.expressions.defined(statement, frame)
        elif isinstance(statement, ast.ClassDef):
            frame.env[statement.name] = unknown()

    def exec_small(self, statement: ast.stmt, frame: Frame) -> None:
        if isinstance(statement, ast.Assign):
            value = self.expressions.eval(statement.value, frame)
            for target in statement.targets:
                self.bind(target, value, frame)
        elif isinstance(statement, ast.AnnAssign):
            if statement.value is not None:
                self.bind(statement.target, self.expressions.eval(statement.value, frame), frame)
        elif isinstance(statement, ast.AugAssign):
            self.exec_augassign(statement, frame)
        elif isinstance(statement, ast.Expr):
            self.expressions.eval(statement.value, frame)
        elif isinstance(statement, ast.Return):
            value = constant(None) if statement.value is None else \
                self.expressions.eval(statement.value, frame)
            frame.returns.append(value)
            frame.done = True

    def exec_augassign(self, statement: ast.AugAssign, frame: Frame) -> None:
        run = self.state.run
        target = self.expressions.eval(statement.target, frame)
        right = self.expressions.eval(statement.value, frame)
        symbol = AUGMENTED_SYMBOLS.get(type(statement.op), "")
        effect = None
        if right.kind == "const":
            effect = self.facts.operators.get(f"{symbol}#scalar")
        effect = effect or self.facts.operators.get(symbol)
        if target.kind == "tensor" and effect is not None:
            label = f"{text_of(frame.piece, statement.target)} {symbol}"
            plan: Plan | None = None
            base = statement.target.value if isinstance(statement.target, ast.Attribute) \
                and statement.target.attr == "data" else None
            if isinstance(base, ast.Name) and run.place is not None and \
                    self.plans.rebinding_keeps_meaning(self.expressions.eval(base, frame)):
                plan = DataToGraph(statement, symbol.removesuffix("="), run.place)
            elif is_dotted(statement.target):
                if run.place is not None and (
                        self.plans.rebinding_keeps_meaning(target) or
                        self.plans.rebinding_keeps_view_meaning(target, statement.target,
                                                                frame)):
                    plan = AugmentedToBinary(statement, symbol.removesuffix("="), run.place)
            elif self.plans.replaces_item(statement.target, frame) and run.place is not None:
                # ``laterals[i - 1] += x`` on a Python list: the item can be replaced.
                plan = AugmentedToBinary(statement, symbol.removesuffix("="), run.place)
            else:
                plan = self.plans.clone_first(statement.target, frame)
                if plan is None and run.place is not None:
                    # ``layers[i].weight[:, j] -= v``: no copy can stand in for it, but
                    # into a parameter it can go under no_grad (``leaf_plan``).
                    plan = InPlaceOnly(statement.target, run.place)
            with self.state.fixing(plan):
                run.autograd.apply(effect, frame.piece, statement, label, [target, right])
            self.store_back(statement, target, frame)
            return
        if target.kind == "list" and right.kind == "list" and target.items is not None:
            target.items.extend(right.items or [])
            return
        self.bind(statement.target, unknown(), frame)

    def store_back(self, statement: ast.AugAssign, result: Value, frame: Frame) -> None:
        """``x[idx] += v`` with a tensor index: the op ran on a copy (advanced indexing
        copies), which Python then stores back into ``x`` in place."""
        target = statement.target
        if not isinstance(target, ast.Subscript) or not is_dotted(target.value):
            return
        if all(self.expressions.is_basic_index(part, frame) for part in index_parts(target)):
            return  # a view: the op already wrote into x
        owner = self.expressions.eval(target.value, frame)
        effect = self.facts.operators.get("setitem#advanced") or \
            self.facts.operators.get("setitem")
        if owner.kind != "tensor" or effect is None:
            return
        with self.state.fixing(self.plans.clone_first(target.value, frame)):
            self.state.run.autograd.apply(effect, frame.piece, statement,
                                          f"{text_of(frame.piece, target)} = ...",
                                          [owner, result])

    def exec_if(self, statement: ast.If, frame: Frame) -> None:
        test = self.expressions.truth(statement.test, frame)
        if test is True:
            self.exec_block(statement.body, frame)
        elif test is False:
            self.exec_block(statement.orelse, frame)
        else:
            self.exec_branches(statement.body, statement.orelse, frame)

    def exec_branches(self, first: Sequence[ast.stmt], second: Sequence[ast.stmt],
                      frame: Frame) -> None:
        """Run two alternatives from the same state and join what they leave.

        The saves the first branch made are taken back while the second runs (so that
        neither sees the other's), then both are kept: either branch may have run.
        """
        run = self.state.run
        before_env = dict(frame.env)
        autograd = run.autograd
        outer, outer_attrs = autograd.journal, run.attr_journal
        autograd.journal, run.attr_journal = [], []
        self.exec_block(first, frame)
        first_done, frame.done = frame.done, False
        first_saves, first_attrs = autograd.journal, run.attr_journal
        for storage, save in reversed(first_saves):
            autograd.take_back(storage, save)
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
        autograd.journal, run.attr_journal = [], []
        self.exec_block(second, frame)
        second_done = frame.done
        frame.done = first_done and second_done
        second_saves, second_attrs = autograd.journal, run.attr_journal
        for storage, save in first_saves:
            autograd.give_back(storage, save)
        for attrs, key, value in after_first.values():
            current = attrs.get(key)
            if value is None or current is None:
                attrs[key] = value or current or unknown()
            else:
                attrs[key] = self.state.join(value, current)
        autograd.journal, run.attr_journal = outer, outer_attrs
        if outer is not None:
            outer.extend(first_saves + second_saves)
        if outer_attrs is not None:
            outer_attrs.extend(first_attrs + second_attrs)
        if first_done != second_done:
            # What follows runs only after the arm that did not return: its names hold.
            if first_done:
                return
            frame.env = after_first_env
            return
        merged: dict[str, Value] = {}
        for name in after_first_env.keys() | frame.env.keys():
            a = after_first_env.get(name)
            b = frame.env.get(name)
            if a is None or b is None:
                merged[name] = a or b or unknown()
            else:
                merged[name] = self.state.join(a, b)
                if merged[name] is not a and merged[name].storages:
                    merged[name].exempt += other_arm_saves(a, b, first_saves, second_saves)
        frame.env = merged

    def exec_for(self, statement: ast.For | ast.AsyncFor, frame: Frame) -> None:
        # Where the loop iterates: a fix may make the rows of a tensor single views.
        run = self.state.run
        scope = run.positions[0].statements if run.positions else run.block
        header = Place(statement, run.block, frame.piece, scope, frame.program.aliases)
        run.place = header
        iterable = self.expressions.eval(statement.iter, frame)
        run.place = None
        if iterable.kind == "list" and iterable.name == MAPPING and iterable.attrs is not None:
            # A dict (of layers) whose keys are known: each key, in order.
            iterable = Value("list", items=[constant(key) for key in iterable.attrs])
        if iterable.kind == "list" and iterable.items is not None and \
                len(iterable.items) <= MAX_UNROLL:
            for item in list(iterable.items):
                self.bind(statement.target, item, frame)
                self.exec_block(statement.body, frame)
                if frame.done:
                    break  # an item whose turn returns ends the loop, and the function
        else:
            for second in self.turns():
                with self.iteration(second):
                    element = self.expressions.element_of(iterable)
                    if element.row is True:
                        element.row = SelectRows(statement.iter, header)
                    self.bind(statement.target, element, frame)
                    self.exec_block(statement.body, frame)
                    frame.done = False  # the loop may run no time
        if not frame.done:
            self.exec_block(statement.orelse, frame)

    def exec_loop_body(self, body: Sequence[ast.stmt], frame: Frame) -> None:
        for second in self.turns():
            with self.iteration(second):
                self.exec_block(body, frame)
                frame.done = False  # the loop may run no time, or break

    def turns(self) -> tuple[bool, ...]:
        """Which turns of a loop to run (is it the second?). Twice: a write in the second
        turn can break what the first one saved. Once inside another loop's second turn:
        what this loop's own turns do to each other was found in the enclosing loop's
        first turn, and running it twice there again would double the work at each level
        of nesting (a tiled encoder's loops over tiles, frames and blocks)."""
        return (False,) if self.state.repeating else (False, True)

    @contextmanager
    def iteration(self, second: bool) -> Iterator[None]:
        self.state.repeating += int(second)
        try:
            yield
        finally:
            self.state.repeating -= int(second)

    def exec_with(self, statement: ast.With | ast.AsyncWith, frame: Frame) -> None:
        run = self.state.run
        grad = run.autograd.grad_enabled
        allowed = run.autograd.mutation_allowed
        for item in statement.items:
            expr = item.context_expr
            name = frame.program.qualify(expr.func if isinstance(expr, ast.Call) else expr,
                                         run.reads)
            if name in GRAD_OFF:
                run.autograd.grad_enabled = False
            elif name in GRAD_ON:
                run.autograd.grad_enabled = True
            elif name in MUTATION_ALLOWED:
                run.autograd.mutation_allowed = True
            elif name == "torch.set_grad_enabled" and isinstance(expr, ast.Call) and expr.args:
                flag = self.expressions.truth(expr.args[0], frame)
                if flag is not None:
                    run.autograd.grad_enabled = flag
            else:
                value = self.expressions.eval(expr, frame)
                if item.optional_vars is not None:
                    self.bind(item.optional_vars, value, frame)
        try:
            self.exec_block(statement.body, frame)
        finally:
            run.autograd.grad_enabled = grad
            run.autograd.mutation_allowed = allowed

    # -- binding ----------------------------------------------------------------------

    def bind(self, target: ast.expr, value: Value, frame: Frame) -> None:
        if isinstance(target, ast.Name):
            frame.env[target.id] = value
        elif isinstance(target, ast.Attribute):
            owner = self.expressions.eval(target.value, frame)
            run = self.state.run
            if target.attr == "requires_grad" and owner.kind == "tensor":
                self.torch_api.set_requires_grad(owner, value)
            elif target.attr == "inplace" and isinstance(owner.spec, NnModule) and \
                    owner.spec.facts.ctor_inplace is not None:
                # ``m.inplace = True`` on a layer built out of place (a loop over
                # ``self.modules()`` switching every ReLU on).
                self.state.observe(value)
                owner.spec.inplace = bool(value.const) if value.kind == "const" and \
                    value.const not in (UNKNOWN_INT, UNKNOWN_STR) else None
                if owner.spec.inplace and run.place is not None:
                    owner.spec.switched = (frame.piece, run.place.statement)
            elif owner.attrs is not None:
                if run.attr_journal is not None:
                    run.attr_journal.append((owner.attrs, target.attr,
                                             owner.attrs.get(target.attr)))
                owner.attrs[target.attr] = value
        elif isinstance(target, ast.Subscript):
            self.write_subscript(target, value, frame)
        elif isinstance(target, (ast.Tuple, ast.List)):
            starred = [i for i, element in enumerate(target.elts)
                       if isinstance(element, ast.Starred)]
            rest = Value("list")  # what a starred name holds: its items unknown
            if len(starred) == 1 and value.kind == "list" and value.items is not None and \
                    len(value.items) >= len(target.elts) - 1:
                # ``tensor, *rest = args`` over known items: ``rest`` holds the others.
                first = starred[0]
                last = len(value.items) - (len(target.elts) - first - 1)
                rest = Value("list", items=list(value.items[first:last]))
                parts = [*value.items[:first], rest, *value.items[last:]]
            else:
                parts = self.unpack(value, len(target.elts))
            for element, part in zip(target.elts, parts, strict=False):
                if isinstance(element, ast.Starred):
                    self.bind(element.value, rest, frame)
                else:
                    self.bind(element, part, frame)
        elif isinstance(target, ast.Starred):
            self.bind(target.value, Value("list"), frame)

    def unpack(self, value: Value, count: int) -> list[Value]:
        if value.kind == "list" and value.items is not None and len(value.items) == count:
            return list(value.items)
        return [self.expressions.element_of(value) for _ in range(count)]

    def write_subscript(self, target: ast.Subscript, value: Value, frame: Frame) -> None:
        run = self.state.run
        owner = self.expressions.eval(target.value, frame)
        if owner.kind == "list" and owner.name == MAPPING:
            self.set_mapping_item(owner, target, value, frame)
            return
        if owner.kind == "list" and owner.items is not None:
            self.set_item(owner, target, value, frame)
            return
        if not is_tensorish(owner):
            return
        if (owner.kind == "unknown" or owner.maybe_list) and is_item_index(target):
            return  # ``x[i] = v`` on what may be a list replaces an item, writing nothing
        if owner.kind == "unknown" and self.expressions.reads_mapping(target, frame):
            return  # ``d['key'] = v``: a dict's item, no tensor written
        basic = all(self.expressions.is_basic_index(part, frame) for part in index_parts(target))
        key = "setitem" if basic else "setitem#advanced"
        if value.kind == "const" and basic:
            key = "setitem#scalar"
        effect = self.facts.operators.get(key) or self.facts.operators.get("setitem")
        if effect is None:
            return
        base = target.value
        plan: Plan | None = self.plans.clone_first(base, frame)
        if isinstance(base, ast.Attribute) and base.attr == "data" and \
                isinstance(base.value, ast.Name) and run.place is not None and \
                self.plans.rebinding_keeps_meaning(self.expressions.eval(base.value, frame)):
            plan = DropData(base.value.id, run.place)  # ``x.data[i] = v`` -> ``x[i] = v``
        with self.state.fixing(plan):
            run.autograd.apply(effect, frame.piece, target,
                               f"{text_of(frame.piece, target)} = ...", [owner, value])

    def set_item(self, owner: Value, target: ast.Subscript, value: Value,
                 frame: Frame) -> None:
        """``items[i] = v`` on a list: the item replaced (any item, if ``i`` is unknown)."""
        assert owner.items is not None
        index = self.expressions.single_index(target, frame)
        if isinstance(index, int) and not isinstance(index, bool) and \
                -len(owner.items) <= index < len(owner.items):
            owner.items[index] = value
        else:
            owner.items = [self.state.join(item, value) for item in owner.items]

    def set_mapping_item(self, owner: Value, target: ast.Subscript, value: Value,
                         frame: Frame) -> None:
        """``d[key] = v`` on a mapping: that item replaced (any, if the key is unknown)."""
        key = self.expressions.eval(target.slice, frame)
        if owner.element is None and owner.attrs == {}:
            # The first item of a mapping made empty (``nn.ModuleDict()``).
            owner.element = Value("list", items=[constant(UNKNOWN_STR), value])
        elif owner.element is not None and owner.element.items is not None:
            pair = owner.element.items
            owner.element = Value("list", items=[pair[0], self.state.join(pair[1], value)])
        if owner.attrs is not None and key.kind == "const" and isinstance(key.const, str) \
                and key.const != UNKNOWN_STR:
            owner.attrs[key.const] = value
        else:
            owner.attrs = None


def other_arm_saves(first: Value, second: Value, first_saves: list[tuple[Storage, Save]],
                    second_saves: list[tuple[Storage, Save]]) -> tuple[Save, ...]:
    """The saves one arm of a branch made on a tensor that the joined value holds only
    when the other arm ran: a write through the joined value cannot break those."""
    in_first = {id(storage) for storage in first.storages}
    in_second = {id(storage) for storage in second.storages}
    return tuple(
        [save for storage, save in second_saves
         if id(storage) in in_first and id(storage) not in in_second] +
        [save for storage, save in first_saves
         if id(storage) in in_second and id(storage) not in in_first])
