"""The in-place operation moved somewhere else: into a helper function, a nested function,
a lambda, a staticmethod or classmethod over ``*args``/``**kwargs``, a
``functools.partial``.

Each rewrites the statements that write in place: a call of a method whose name ends in
one underscore (``y.relu_()``), an augmented assignment (``y += 1``, ``y[i] *= m``) and an
assignment into a subscript (``y[..., :2] = 0``). A marked line's comment goes on the
line that now holds the operation and on the line that calls it.
"""

from __future__ import annotations

import libcst as cst

from tests.metamorphic.base import (
    LineRewriter,
    Transformation,
    add_top,
    comment,
    inplace_expression,
    movable,
    per_file,
    run_rewriter,
    statements,
)
from tests.metamorphic.names import read_names


def inplace_statement(line: cst.SimpleStatementLine) -> cst.BaseSmallStatement | None:
    """The statement of a line that writes in place, if it is one."""
    if len(line.body) != 1:
        return None
    small = line.body[0]
    if inplace_expression(line) is not None:
        return small
    if isinstance(small, cst.AugAssign) and isinstance(small.target, (cst.Name, cst.Subscript)):
        return small
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(
            small.targets[0].target, cst.Subscript):
        return small
    return None


def rebound_name(small: cst.BaseSmallStatement) -> str | None:
    """``x`` of ``x += e``: the name an in-place statement binds again."""
    if isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name):
        return small.target.value
    return None


class _Helper(LineRewriter):
    def rewrite_line(self, line: cst.SimpleStatementLine, scope: str) -> str | None:
        small = inplace_statement(line)
        if small is None or not movable(small):
            return None
        names = read_names(small)
        if names is None:
            return None
        helper, mark, params = self.fresh("inplace_helper"), comment(line), ", ".join(names)
        target = rebound_name(small)
        body = f"    {self.code(small)}{mark}\n"
        if target is not None:
            body += f"    return {target}\n"
        self.top.append(f"def {helper}({params}):\n{body}")
        call = f"{helper}({params})"
        return f"{target} = {call}{mark}\n" if target else f"{call}{mark}\n"


def helper_function(module: cst.Module) -> cst.Module | None:
    """``y.relu_()`` -> ``_mm_inplace_helper1(y)``, with ``def _mm_inplace_helper1(y):
    y.relu_()`` at the top of the module; every name the statement reads becomes a
    parameter, and ``x += e`` returns ``x`` to be bound again."""
    return run_rewriter(_Helper, module)


class _Nested(LineRewriter):
    def rewrite_line(self, line: cst.SimpleStatementLine, scope: str) -> str | None:
        small = inplace_statement(line)
        if small is None or scope == "class" or not movable(small):
            return None
        inner, mark = self.fresh("inplace_inner"), comment(line)
        target = rebound_name(small)
        if target is None:
            return f"def {inner}():\n    {self.code(small)}{mark}\n{inner}(){mark}\n"
        # the rebound name is a parameter (a closure cannot bind its caller's name)
        return (f"def {inner}({target}):\n    {self.code(small)}{mark}\n    return {target}\n"
                f"{target} = {inner}({target}){mark}\n")


def nested_function(module: cst.Module) -> cst.Module | None:
    """``y.relu_()`` in a function or at module level -> ``def _mm_inplace_inner1():
    y.relu_()`` defined right there and called at once (a closure over ``y``); for
    ``x += e``, ``x`` is its parameter and is bound again to what it returns."""
    return run_rewriter(_Nested, module)


def _arguments(rewriter: LineRewriter, call: cst.Call) -> str:
    return ", ".join(rewriter.code(arg.with_changes(comma=cst.MaybeSentinel.DEFAULT))
                     for arg in call.args)


class _Lambda(LineRewriter):
    def rewrite_line(self, line: cst.SimpleStatementLine, scope: str) -> str | None:
        call = inplace_expression(line)
        if call is None or not movable(call):
            return None
        assert isinstance(call.func, cst.Attribute)
        self.count += 1
        method, target = call.func.attr.value, self.code(call.func.value)
        arguments = ", ".join(filter(None, [target, _arguments(self, call)]))
        return (f"(lambda tensor, *args, **kwargs: tensor.{method}(*args, **kwargs))"
                f"({arguments}){comment(line)}\n")


def lambda_call(module: cst.Module) -> cst.Module | None:
    """``y.add_(z)`` -> ``(lambda tensor, *args, **kwargs: tensor.add_(*args,
    **kwargs))(y, z)``: the in-place method called inside a lambda given the tensor."""
    return run_rewriter(_Lambda, module)


class _OnClass(LineRewriter):
    """Calls each in-place method through a method of a module-level class."""

    holder = ""
    decorator = ""
    first = ""  # the parameter before *args

    def __init__(self, module: cst.Module) -> None:
        super().__init__(module)
        self.methods: dict[str, str] = {}  # method name -> the marker comment of its uses

    def rewrite_line(self, line: cst.SimpleStatementLine, scope: str) -> str | None:
        call = inplace_expression(line)
        if call is None or not movable(call):
            return None
        assert isinstance(call.func, cst.Attribute)
        self.count += 1
        method, mark = call.func.attr.value, comment(line)
        self.methods[method] = self.methods.get(method) or mark
        arguments = ", ".join(filter(None, [self.code(call.func.value),
                                            _arguments(self, call)]))
        return f"{self.holder}.{method}({arguments}){mark}\n"

    def body(self, method: str, mark: str) -> str:
        raise NotImplementedError

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        if self.methods:
            methods = "".join(f"    @{self.decorator}\n    def {method}({self.first}*args, "
                              f"**kwargs):\n{self.body(method, mark)}"
                              for method, mark in self.methods.items())
            self.top.append(f"class {self.holder}:\n{methods}")
        return updated


class _Static(_OnClass):
    holder, decorator = "_mm_InplaceOps", "staticmethod"

    def body(self, method: str, mark: str) -> str:
        return (f"        tensor, *rest = args\n"
                f"        return tensor.{method}(*rest, **kwargs){mark}\n")


def staticmethod_args(module: cst.Module) -> cst.Module | None:
    """``y.relu_()`` -> ``_mm_InplaceOps.relu_(y)``, a staticmethod ``relu_(*args,
    **kwargs)`` of a module-level class that takes the tensor from ``args``."""
    return run_rewriter(_Static, module)


class _Class(_OnClass):
    holder, decorator, first = "_mm_InplaceApply", "classmethod", "cls, "

    def body(self, method: str, mark: str) -> str:
        return (f"        tensor = args[0]\n"
                f"        return getattr(tensor, {method!r})(*args[1:], **kwargs){mark}\n")


def classmethod_kwargs(module: cst.Module) -> cst.Module | None:
    """``y.add_(z, alpha=2)`` -> ``_mm_InplaceApply.add_(y, z, alpha=2)``, a classmethod
    ``add_(cls, *args, **kwargs)`` that looks the method up on ``args[0]`` with
    ``getattr``."""
    return run_rewriter(_Class, module)


class _Partial(cst.CSTTransformer):
    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        inplace_method = isinstance(updated.func, cst.Attribute) and (
            updated.func.attr.value.endswith("_") and not updated.func.attr.value.startswith("_"))
        has_flag = any(arg.keyword is not None and arg.keyword.value == "inplace"
                       for arg in updated.args)
        if not (inplace_method or has_flag) or not movable(updated):
            return updated
        self.count += 1
        bound = [arg for arg in updated.args if arg.keyword is not None or arg.star == "**"]
        rest = [arg for arg in updated.args if arg not in bound]
        partial = cst.Call(func=cst.parse_expression("_mm_functools.partial"),
                           args=[cst.Arg(updated.func), *bound])
        return cst.Call(func=partial, args=rest)


def functools_partial(module: cst.Module) -> cst.Module | None:
    """``y.add_(z, alpha=2)`` -> ``functools.partial(y.add_, alpha=2)(z)``, and every call
    given ``inplace=`` the same way: ``nn.ReLU(inplace=True)`` ->
    ``functools.partial(nn.ReLU, inplace=True)()``."""
    partial = _Partial()
    new = module.visit(partial)
    if not partial.count:
        return None
    return add_top(new, statements("import functools as _mm_functools\n"))


TRANSFORMATIONS = [
    Transformation("helper_function", "op moved", per_file(helper_function)),
    Transformation("nested_function", "op moved", per_file(nested_function)),
    Transformation("lambda_call", "op moved", per_file(lambda_call, ("_(",))),
    Transformation("staticmethod_args", "op moved", per_file(staticmethod_args, ("_(",))),
    Transformation("classmethod_kwargs", "op moved", per_file(classmethod_kwargs, ("_(",))),
    Transformation("functools_partial", "op moved", per_file(functools_partial)),
]
