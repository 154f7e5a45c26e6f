"""Fix planning: at a write, which rewrite would remove a hazard found there and keep
what the code computes (rendered later, only for hazards that are reported)."""

from __future__ import annotations

import ast

from gradguard.analysis.fix_plans import (
    CloneFirst,
    DropArgument,
    DropOut,
    InPlaceOnly,
    OutOfPlace,
    Plan,
    Rename,
    SelectRows,
    is_dotted,
    receiver_root,
    unbind_plan,
)
from gradguard.analysis.interpreter.expressions import Expressions
from gradguard.analysis.interpreter.state import MAPPING, Frame, State
from gradguard.analysis.values import Value


class FixPlanning:
    """Plans a fix at a write. Reads the statement the run is at (``state.run.place``),
    and evaluates the names a rewrite would start from."""

    def __init__(self, state: State, expressions: Expressions) -> None:
        self.state = state
        self.facts = state.facts
        self.expressions = expressions

    def clone_first(self, target: ast.expr, frame: Frame) -> Plan | None:
        """Write into a copy: possible when the written view starts from a tensor name."""
        run = self.state.run
        root = receiver_root(target)
        if root is None or run.place is None:
            return None
        value = self.expressions.eval(root, frame)
        if value.kind == "tensor":
            return CloneFirst(root, run.place)
        if value.kind == "list" and value.view == "multi" and isinstance(root, ast.Name) and \
                value.requires_grad is True and run.autograd.grad_enabled and \
                not any(storage.leaf for storage in value.storages):
            # ``rows[0].mul_(2)`` on ``rows = x.unbind()``: autograd refuses the write (a
            # view of a leaf would be refused as single views too).
            return unbind_plan(root.id, run.place)
        return None

    def replaces_item(self, target: ast.expr, frame: Frame) -> bool:
        """``items[i]`` where ``items`` is a Python list of tensors: assigning to it
        replaces the item and writes no tensor."""
        if not isinstance(target, ast.Subscript) or not is_dotted(target.value):
            return False
        owner = self.expressions.eval(target.value, frame)
        return owner.kind == "list" and owner.view != "multi" and owner.name != MAPPING

    @staticmethod
    def rebinding_keeps_meaning(target: Value) -> bool:
        """Whether ``x = <out of place>`` computes what writing into ``x`` did.

        Not for a view: the write reached its base, which the rebinding no longer
        changes. Pieces of split/chunk/unbind are written separately anyway.
        """
        return target.view in (None, "multi") and not target.row

    def rebinding_keeps_view_meaning(self, target: Value, written: ast.expr,
                                     frame: Frame) -> bool:
        """Whether ``y = <out of place>`` computes what writing into ``y`` meant, for a
        view autograd refuses to let be written: a full backward hook's input or output,
        or a custom Function's output.

        The write was meant for the tensor behind the view too (the module's own input,
        an input the Function returned as it was). Rebound, ``y`` no longer changes it,
        which matters when that tensor is the caller's (a parameter of the function the
        write is in) or another name reads it afterwards.
        """
        run = self.state.run
        if target.view not in ("hooked", "custom") or not isinstance(written, ast.Name):
            return False
        storages = {id(storage) for storage in target.storages}
        if storages & (run.autograd.inputs or set()):
            return False
        sharing = {name for name, value in frame.env.items()
                   if storages & {id(storage) for storage in value.storages}}
        sharing.add(written.id)
        function = self.state.stack[-1] if self.state.stack else None
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and \
                run.place is not None and \
                any(name in parameter_names(function) and
                    not rebound_before(function, name, run.place.statement)
                    for name in sharing):
            return False
        later = [s for position in run.positions
                 for s in position.statements[position.index + 1:]]
        return not any(isinstance(node, ast.Name) and node.id in sharing - {written.id}
                       for statement in later for node in ast.walk(statement))

    def method_plan(self, call: ast.Call, name: str, owner: Value,
                    frame: Frame) -> Plan | None:
        run = self.state.run
        assert isinstance(call.func, ast.Attribute)
        receiver = call.func.value
        if owner.view == "data":
            # Through .data: only a copy written first leaves the saved tensor alone.
            return self.clone_first(receiver, frame) if isinstance(receiver, ast.Name) \
                else None
        out_of_place = name.removesuffix("_")
        effect = self.facts.methods.get(out_of_place)
        if run.place is not None and effect is None and (
                is_dotted(receiver) or owner.view == "multi"):
            # No out-of-place form; into a leaf (or a piece of one) it can go under
            # no_grad (``leaf_plan``).
            return InPlaceOnly(receiver, run.place)
        if run.place is not None and effect is not None and not effect.writes and \
                out_of_place != name and self.replaces_item(receiver, frame):
            # ``outs[0].mul_(2)`` on a Python list: the item is replaced by the result.
            return OutOfPlace(call, Rename(out_of_place), receiver, run.place)
        if run.place is None or effect is None or effect.writes or out_of_place == name:
            return None
        if isinstance(owner.row, SelectRows) and isinstance(receiver, ast.Name):
            return owner.row
        if is_dotted(receiver):
            if not self.rebinding_keeps_meaning(owner) and \
                    not self.rebinding_keeps_view_meaning(owner, receiver, frame):
                return None
            return OutOfPlace(call, Rename(out_of_place), receiver, run.place)
        return self.clone_first(receiver, frame)

    def function_plan(self, call: ast.Call, name: str) -> Plan | None:
        run = self.state.run
        if run.place is None or not call.args or not is_dotted(call.args[0]):
            return None
        known = self.facts.functions.get(name)
        flag = known.inplace_flag if known is not None else None
        if flag is not None:
            edit: DropArgument | Rename = DropArgument(flag.name, flag.position)
        elif name.endswith("_") and name[:-1] in self.facts.functions and \
                isinstance(call.func, ast.Attribute):
            edit = Rename(call.func.attr.removesuffix("_"))
        else:
            return None
        return OutOfPlace(call, edit, call.args[0], run.place)

    def out_plan(self, call: ast.Call) -> Plan | None:
        run = self.state.run
        target = next((k.value for k in call.keywords if k.arg == "out"), None)
        if target is None or run.place is None or not is_dotted(target):
            return None
        return DropOut(call, target, run.place)


def parameter_names(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> set[str]:
    args = function.args
    names = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
    return names | {a.arg for a in (args.vararg, args.kwarg) if a is not None}


def rebound_before(function: ast.AST, name: str, statement: ast.stmt) -> bool:
    """Whether ``name`` is bound to something new (not written in place) on a line of
    ``function`` before ``statement``: then it no longer holds what the caller passed."""
    augmented = {id(node.target) for node in ast.walk(function)
                 if isinstance(node, ast.AugAssign)}
    return any(isinstance(node, ast.Name) and node.id == name and
               isinstance(node.ctx, ast.Store) and id(node) not in augmented and
               node.lineno < statement.lineno
               for node in ast.walk(function))
