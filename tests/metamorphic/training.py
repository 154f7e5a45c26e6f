"""The training step moved: into a function, into a method of a trainer class, into a loop
that calls ``backward(retain_graph=True)``, into a loop over epochs with a learning-rate
scheduler.

The step is the run of statements of one block (the module, a top-level ``if __name__ ==
"__main__":``, or a function body) from after the last definition or import before the
last ``.backward(`` call, through the statements after it: none may define, import, bind
``global``, ``break``, ``continue`` or ``yield``, which would change meaning in a new
scope or loop.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from typing import cast

import libcst as cst

from tests.metamorphic.base import (
    Transformation,
    comment,
    has_name,
    is_import,
    per_file,
    statements,
)

_STOPS = (cst.FunctionDef, cst.ClassDef, cst.Import, cst.ImportFrom, cst.Global, cst.Nonlocal,
          cst.Break, cst.Continue, cst.Yield, cst.Await, cst.Return, cst.AnnAssign)


def _module(statements: Sequence[cst.BaseStatement]) -> cst.Module:
    # a block's statements are lines or compound statements, which libcst's types do not say
    return cst.Module(body=cast(Sequence[cst.SimpleStatementLine], statements))


def _code(statements: Sequence[cst.BaseStatement]) -> str:
    return _module(statements).code


def _stops(statement: cst.BaseStatement) -> bool:
    found = False

    class Finder(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            nonlocal found
            found = found or isinstance(node, _STOPS)
            return not found

    statement.visit(Finder())
    return found


def _step(module: cst.Module, body: Sequence[cst.BaseStatement]) -> tuple[int, int] | None:
    """[start, end) of the training step in a block's statements."""
    backward = [i for i, s in enumerate(body) if ".backward(" in module.code_for_node(s)]
    if not backward:
        return None
    last = backward[-1]
    if _stops(body[last]):
        return None
    start = last
    while start > 0 and not _stops(body[start - 1]):
        start -= 1
    end = last + 1
    while end < len(body) and not _stops(body[end]):
        end += 1
    return start, end


def _main_guard(statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.If) and "__main__" in _code([statement])


Wrap = Callable[[Sequence[cst.BaseStatement], Sequence[cst.BaseStatement]],
                list[cst.BaseStatement] | None]


def _rewrite_steps(module: cst.Module, wrap: Wrap, functions: bool) -> cst.Module | None:
    """Replace the training step of the module's block, of a main guard's and (with
    ``functions``) of every function body by what ``wrap`` makes of it (given the
    statements before it); None when no step was rewritten."""
    changed = False

    def block(body: Sequence[cst.BaseStatement]) -> list[cst.BaseStatement]:
        nonlocal changed
        found = _step(module, body)
        new = None if found is None else wrap(body[:found[0]], body[found[0]:found[1]])
        if found is None or new is None:
            return list(body)
        changed = True
        return [*body[:found[0]], *new, *body[found[1]:]]

    class Functions(cst.CSTTransformer):
        def leave_FunctionDef(self, original: cst.FunctionDef,
                              updated: cst.FunctionDef) -> cst.FunctionDef:
            if not isinstance(updated.body, cst.IndentedBlock):
                return updated
            return updated.with_changes(body=updated.body.with_changes(
                body=block(updated.body.body)))

    if functions:
        module = module.visit(Functions())
    body = block(module.body)
    for index, statement in enumerate(body):
        if _main_guard(statement):
            assert isinstance(statement, cst.If)
            if isinstance(statement.body, cst.IndentedBlock):
                body[index] = statement.with_changes(
                    body=statement.body.with_changes(body=block(statement.body.body)))
    return module.with_changes(body=body) if changed else None


def _bound_names(step: Sequence[cst.BaseStatement]) -> list[str]:
    """The names the step binds in its own scope (not in lambdas or comprehensions)."""
    tree = ast.parse(_code(step))
    names: set[str] = set()
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        if not isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                                 ast.GeneratorExp)):
            stack.extend(ast.iter_child_nodes(node))
    return sorted(names)


def _with_body(template: str, step: Sequence[cst.BaseStatement]) -> list[cst.BaseStatement]:
    """The template's statements with the step put where its ``pass`` is (libcst indents
    it, so multi-line strings in the step keep their text)."""

    class Fill(cst.CSTTransformer):
        def leave_SimpleStatementLine(
            self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine,
        ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
            if isinstance(original.body[0], cst.Pass):
                return cst.FlattenSentinel(list(step))
            return updated

    return list(cst.parse_module(template).visit(Fill()).body)


def _global(step: Sequence[cst.BaseStatement], indent: str) -> str:
    names = _bound_names(step)
    return f"{indent}global {', '.join(names)}\n" if names else ""


def _as_function(before: Sequence[cst.BaseStatement],
                 step: Sequence[cst.BaseStatement]) -> list[cst.BaseStatement]:
    return _with_body(f"def _mm_train_step():\n{_global(step, '    ')}    pass\n"
                      "_mm_train_step()\n", step)


def train_function(module: cst.Module) -> cst.Module | None:
    """The module-level training step -> ``def _mm_train_step():`` (declaring ``global``
    every name it binds, so they stay the module's) and a call of it."""
    return _rewrite_steps(module, _as_function, functions=False)


def _as_method(before: Sequence[cst.BaseStatement],
               step: Sequence[cst.BaseStatement]) -> list[cst.BaseStatement] | None:
    if has_name(_module(step), ["self"]):
        return None  # the method's own self would hide it
    return _with_body(f"class _mm_Trainer:\n    def step(self):\n{_global(step, '        ')}"
                      "        pass\n_mm_Trainer().step()\n", step)


def trainer_method(module: cst.Module) -> cst.Module | None:
    """The module-level training step -> the ``step`` method of a ``_mm_Trainer`` class
    (declaring ``global`` every name it binds) and ``_mm_Trainer().step()``."""
    return _rewrite_steps(module, _as_method, functions=False)


def _optimizer(statement: cst.BaseStatement) -> str | None:
    """The name a ``torch.optim`` optimizer is bound to by the statement, if it is one."""
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        small = statement.body[0]
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(
                small.targets[0].target, cst.Name) and "optim." in cst.Module(
                    [statement]).code:
            return small.targets[0].target.value
    return None


def _in_epochs(before: Sequence[cst.BaseStatement],
               step: Sequence[cst.BaseStatement]) -> list[cst.BaseStatement] | None:
    """The step from after the last optimizer bound before its last backward, in a loop
    over epochs."""
    ordered = [*before, *step]
    last = len(ordered) - 1
    while last >= 0 and ".backward(" not in _code([ordered[last]]):
        last -= 1
    bound = [i for i in range(last) if _optimizer(ordered[i]) is not None]
    if not bound:
        return None
    split = max(bound[-1] + 1, len(before))
    kept, looped = ordered[len(before):split], ordered[split:]
    optimizer = _optimizer(ordered[bound[-1]])
    return [*kept, *_with_body(
        f"_mm_scheduler = torch.optim.lr_scheduler.StepLR({optimizer}, step_size=1, "
        "gamma=1.0)\nfor _mm_epoch in [0]:\n    pass\n    _mm_scheduler.step()\n",
        looped)]


def epoch_scheduler(module: cst.Module) -> cst.Module | None:
    """The training step (after the optimizer is bound, in the same block) -> ``for
    _mm_epoch in [0]:`` around it, then ``_mm_scheduler.step()``; the scheduler is a
    ``StepLR`` with ``gamma=1.0``, so the rate never changes. The file must import
    ``torch``."""
    if not any("import torch" in _code([s]) for s in module.body if is_import(s)):
        return None
    return _rewrite_steps(module, _in_epochs, functions=True)


class _Retain(cst.CSTTransformer):
    def __init__(self, module: cst.Module) -> None:
        super().__init__()
        self.module = module
        self.count = 0

    def leave_SimpleStatementLine(
        self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine,
    ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        if len(original.body) != 1 or not isinstance(original.body[0], cst.Expr):
            return updated
        call = original.body[0].value
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
                and call.func.attr.value == "backward" and not call.args):
            return updated
        self.count += 1
        target = self.module.code_for_node(call.func.value)
        new = statements(f"for _mm_pass in [None]:\n"
                         f"    {target}.backward(retain_graph=True){comment(original)}\n")
        new[0] = new[0].with_changes(leading_lines=original.leading_lines)
        return cst.FlattenSentinel(new)


def retain_graph_loop(module: cst.Module) -> cst.Module | None:
    """``loss.backward()`` -> ``for _mm_pass in [None]: loss.backward(retain_graph=True)``
    (a backward that keeps its graph, in a loop)."""
    retain = _Retain(module)
    new = module.visit(retain)
    return new if retain.count else None


BACKWARD = (".backward(",)
TRANSFORMATIONS = [
    Transformation("train_function", "training step", per_file(train_function, BACKWARD)),
    Transformation("trainer_method", "training step", per_file(trainer_method, BACKWARD)),
    Transformation("retain_graph_loop", "training step",
                   per_file(retain_graph_loop, (".backward()",))),
    Transformation("epoch_scheduler", "training step",
                   per_file(epoch_scheduler, (".backward(", "optim."))),
]
