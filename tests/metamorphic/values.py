"""The value passed along another way before the operation that saves it or the one that
writes into it: through ``map``, ``zip``, a comprehension, a generator, tuple unpacking,
``*`` unpacking in a call, a dict value, a list slot, an attribute of another object, a
plain alias, a ``return`` and re-bind.

Two kinds of lines are rewritten. A call bound to one target (``y = torch.sigmoid(x)``,
``x = self.conv(x)``): the value the call makes takes the detour before it is bound. An
in-place write (``y.relu_()``, ``y[0] = 1``, ``y += 1``): the tensor written into is
reached through the detour. Lines in class bodies are left alone (a comprehension there
cannot see the class's names).
"""

from __future__ import annotations

import libcst as cst

from tests.metamorphic.base import (
    LineRewriter,
    Transformation,
    comment,
    inplace_expression,
    movable,
    per_file,
    run_rewriter,
)
from tests.metamorphic.ops_moved import inplace_statement, rebound_name


def bound_call(line: cst.SimpleStatementLine) -> tuple[cst.Assign, cst.Call] | None:
    """``target = f(...)`` with one target (a name, an attribute, a subscript, a tuple)."""
    if len(line.body) != 1 or not isinstance(line.body[0], cst.Assign):
        return None
    assign = line.body[0]
    if len(assign.targets) != 1 or not isinstance(assign.value, cst.Call):
        return None
    if inplace_expression(line) is not None or not movable(assign):
        return None
    return assign, assign.value


class _Bound(LineRewriter):
    """Rewrites ``target = f(...)`` outside class bodies with ``detour``."""

    def rewrite_line(self, line: cst.SimpleStatementLine, scope: str) -> str | None:
        found = bound_call(line)
        if found is None or scope == "class":
            return None
        assign, call = found
        target = self.code(assign.targets[0].target)
        if isinstance(assign.targets[0].target, cst.Tuple) and not assign.targets[0].target.lpar:
            target = f"({target})"  # a, b = ... stays one target
        return self.detour(target, call, comment(line))

    def detour(self, target: str, call: cst.Call, mark: str) -> str | None:
        raise NotImplementedError


class _Map(_Bound):
    def detour(self, target: str, call: cst.Call, mark: str) -> str | None:
        if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star or \
                isinstance(call.args[0].value, cst.GeneratorExp):
            return None
        self.count += 1
        argument = self.code(call.args[0].value)
        return f"{target} = list(map({self.code(call.func)}, [{argument}]))[0]{mark}\n"


def map_call(module: cst.Module) -> cst.Module | None:
    """``y = torch.sigmoid(x)`` -> ``y = list(map(torch.sigmoid, [x]))[0]`` (calls of one
    positional argument)."""
    return run_rewriter(_Map, module)


class _Generator(_Bound):
    def detour(self, target: str, call: cst.Call, mark: str) -> str | None:
        self.count += 1
        # [None], not range(1): a function may have a parameter named range
        return f"{target} = next({self.code(call)} for _mm_once in [None]){mark}\n"


def generator(module: cst.Module) -> cst.Module | None:
    """``y = torch.sigmoid(x)`` -> ``y = next(torch.sigmoid(x) for _mm_once in
    [None])``."""
    return run_rewriter(_Generator, module)


class _Tuple(_Bound):
    def detour(self, target: str, call: cst.Call, mark: str) -> str | None:
        self.count += 1
        return f"({target}, _mm_unused) = ({self.code(call)}, None){mark}\n"


def tuple_unpacking(module: cst.Module) -> cst.Module | None:
    """``y = torch.sigmoid(x)`` -> ``(y, _mm_unused) = (torch.sigmoid(x), None)``."""
    return run_rewriter(_Tuple, module)


class _Slot(_Bound):
    def detour(self, target: str, call: cst.Call, mark: str) -> str | None:
        slots = self.fresh("slots")
        return (f"{slots} = [None]\n{slots}[0] = {self.code(call)}{mark}\n"
                f"{target} = {slots}[0]\n")


def list_slot(module: cst.Module) -> cst.Module | None:
    """``y = torch.sigmoid(x)`` -> ``_mm_slots1 = [None]; _mm_slots1[0] =
    torch.sigmoid(x); y = _mm_slots1[0]``."""
    return run_rewriter(_Slot, module)


class _Return(_Bound):
    def detour(self, target: str, call: cst.Call, mark: str) -> str | None:
        self.count += 1
        if len(self.top) == 0:
            self.top.append("def _mm_passed(value):\n    return value\n")
        return f"{target} = _mm_passed({self.code(call)}){mark}\n"


def return_rebind(module: cst.Module) -> cst.Module | None:
    """``y = torch.sigmoid(x)`` -> ``y = _mm_passed(torch.sigmoid(x))``, where
    ``_mm_passed`` returns its argument."""
    return run_rewriter(_Return, module)


class _Star(cst.CSTTransformer):
    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        positional = [arg for arg in updated.args if arg.keyword is None and not arg.star]
        if not positional or any(arg.star for arg in updated.args):
            return updated
        if any(isinstance(arg.value, cst.GeneratorExp) for arg in positional):
            return updated  # f(x for x in xs): the generator's parentheses are the call's
        self.count += 1
        packed = cst.List([cst.Element(arg.value, comma=arg.comma) for arg in positional])
        keywords = [arg for arg in updated.args if arg.keyword is not None]
        return updated.with_changes(args=[cst.Arg(packed, star="*"), *keywords])


def star_args(module: cst.Module) -> cst.Module | None:
    """``f(x, y, dim=1)`` -> ``f(*[x, y], dim=1)``: every call's positional arguments
    passed by ``*`` unpacking."""
    star = _Star()
    new = module.visit(star)
    return new if star.count else None


class _Written(LineRewriter):
    """Rewrites an in-place write outside class bodies so that the tensor it writes into
    is reached through ``detour``."""

    def rewrite_line(self, line: cst.SimpleStatementLine, scope: str) -> str | None:
        small = inplace_statement(line)
        if small is None or scope == "class" or not movable(small):
            return None
        if rebound_name(small) is not None:  # x += e binds x: handled by alias_variable
            return None
        written = _written_object(small)
        before, reach = self.detour(self.code(written))
        new = small.deep_replace(written, cst.parse_expression(reach))
        assert isinstance(new, cst.BaseSmallStatement)
        return f"{before}{self.module.code_for_node(new)}{comment(line)}\n"

    def detour(self, written: str) -> tuple[str, str]:
        """Statements to run first, and the expression that reaches the tensor."""
        raise NotImplementedError


def _written_object(small: cst.BaseSmallStatement) -> cst.BaseExpression:
    """``y`` of ``y.relu_()``, ``y[i] = v``, ``y[i] += v``."""
    if isinstance(small, cst.Expr):
        call = cst.ensure_type(small.value, cst.Call)
        return cst.ensure_type(call.func, cst.Attribute).value
    if isinstance(small, cst.AugAssign):
        return cst.ensure_type(small.target, cst.Subscript).value
    assign = cst.ensure_type(small, cst.Assign)
    return cst.ensure_type(assign.targets[0].target, cst.Subscript).value


class _Zip(_Written):
    def rewrite_line(self, line: cst.SimpleStatementLine, scope: str) -> str | None:
        small = inplace_statement(line)
        if small is None or scope == "class" or not movable(small) or rebound_name(small):
            return None
        written = _written_object(small)
        name = self.fresh("zipped")
        new = small.deep_replace(written, cst.Name(name))
        assert isinstance(new, cst.BaseSmallStatement)
        return (f"for {name}, _mm_index in zip([{self.code(written)}], [None]):\n"
                f"    {self.module.code_for_node(new)}{comment(line)}\n")


def zip_loop(module: cst.Module) -> cst.Module | None:
    """``y.relu_()`` -> ``for _mm_zipped1, _mm_index in zip([y], [None]):
    _mm_zipped1.relu_()``."""
    return run_rewriter(_Zip, module)


class _Comprehension(LineRewriter):
    def rewrite_line(self, line: cst.SimpleStatementLine, scope: str) -> str | None:
        call = inplace_expression(line)
        if call is None or scope == "class" or not movable(call):
            return None
        assert isinstance(call.func, cst.Attribute)
        self.count += 1
        new = call.with_changes(func=call.func.with_changes(value=cst.Name("_mm_item")))
        return (f"[{self.module.code_for_node(new)} for _mm_item in "
                f"[{self.code(call.func.value)}]]{comment(line)}\n")


def comprehension(module: cst.Module) -> cst.Module | None:
    """``y.relu_()`` -> ``[_mm_item.relu_() for _mm_item in [y]]``."""
    return run_rewriter(_Comprehension, module)


class _Dict(_Written):
    def detour(self, written: str) -> tuple[str, str]:
        box = self.fresh("values")
        return f"{box} = {{'tensor': {written}}}\n", f"{box}['tensor']"


def dict_value(module: cst.Module) -> cst.Module | None:
    """``y.relu_()`` -> ``_mm_values1 = {'tensor': y}; _mm_values1['tensor'].relu_()``."""
    return run_rewriter(_Dict, module)


class _Attribute(_Written):
    def detour(self, written: str) -> tuple[str, str]:
        holder = self.fresh("holder")
        if not self.top:
            self.top.append("class _mm_Holder:\n    pass\n")
        return f"{holder} = _mm_Holder()\n{holder}.tensor = {written}\n", f"{holder}.tensor"


def attribute_of_object(module: cst.Module) -> cst.Module | None:
    """``y.relu_()`` -> ``_mm_holder1 = _mm_Holder(); _mm_holder1.tensor = y;
    _mm_holder1.tensor.relu_()``."""
    return run_rewriter(_Attribute, module)


class _Alias(_Written):
    def rewrite_line(self, line: cst.SimpleStatementLine, scope: str) -> str | None:
        small = inplace_statement(line)
        target = None if small is None else rebound_name(small)
        if small is None or target is None or not movable(small):
            return super().rewrite_line(line, scope)
        alias = self.fresh("alias")
        assert isinstance(small, cst.AugAssign)
        new = small.with_changes(target=cst.Name(alias))
        return (f"{alias} = {target}\n{self.module.code_for_node(new)}{comment(line)}\n"
                f"{target} = {alias}\n")

    def detour(self, written: str) -> tuple[str, str]:
        alias = self.fresh("alias")
        return f"{alias} = {written}\n", alias


def alias_variable(module: cst.Module) -> cst.Module | None:
    """``y.relu_()`` -> ``_mm_alias1 = y; _mm_alias1.relu_()``; ``y += 1`` ->
    ``_mm_alias1 = y; _mm_alias1 += 1; y = _mm_alias1``."""
    return run_rewriter(_Alias, module)


TRANSFORMATIONS = [
    Transformation("map_call", "value through", per_file(map_call)),
    Transformation("zip_loop", "value through", per_file(zip_loop)),
    Transformation("comprehension", "value through", per_file(comprehension, ("_(",))),
    Transformation("generator", "value through", per_file(generator)),
    Transformation("tuple_unpacking", "value through", per_file(tuple_unpacking)),
    Transformation("star_args", "value through", per_file(star_args)),
    Transformation("dict_value", "value through", per_file(dict_value)),
    Transformation("list_slot", "value through", per_file(list_slot)),
    Transformation("attribute_of_object", "value through", per_file(attribute_of_object)),
    Transformation("alias_variable", "value through", per_file(alias_variable)),
    Transformation("return_rebind", "value through", per_file(return_rebind)),
]
